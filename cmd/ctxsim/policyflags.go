package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// policyList is --policy NAME (repeatable) and its alias --policies a,b,c:
// both append to one list, in the order given.
type policyList struct{ names *[]string }

func (p policyList) String() string { return strings.Join(*p.names, ",") }
func (p policyList) Type() string   { return "names" }
func (p policyList) Set(v string) error {
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*p.names = append(*p.names, n)
		}
	}
	return nil
}

// addPolicyAlias declares --policies as the comma-separated form of
// --policy, appending to names.
func addPolicyAlias(fs *pflag.FlagSet, names *[]string) {
	fs.Var(policyList{names}, "policies", "the same as --policy, comma-separated: --policies a,b is --policy a --policy b")
}

// textOrJSON is --format for commands whose output is a list of what they
// did (gen, import, validate): text, or json (the same as --json).
type textOrJSON struct{ asJSON *bool }

func (f textOrJSON) String() string {
	if f.asJSON != nil && *f.asJSON {
		return "json"
	}
	return "text"
}
func (f textOrJSON) Type() string { return "format" }
func (f textOrJSON) Set(v string) error {
	switch v {
	case "text":
		*f.asJSON = false
	case "json":
		*f.asJSON = true
	default:
		return fmt.Errorf("want text or json, got %q", v)
	}
	return nil
}

// addFormatTextJSON declares --format text|json beside --json.
func addFormatTextJSON(fs *pflag.FlagSet, asJSON *bool) {
	fs.Var(textOrJSON{asJSON}, "format", "output format: text or json (json is the same as --json)")
}
