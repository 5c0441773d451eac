package main

import (
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
