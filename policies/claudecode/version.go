package claudecode

import (
	"strings"

	"golang.org/x/mod/semver"
)

// Version is a Claude Code version ("1.0.89", "2.1.41"), or the zero value
// when unknown.
type Version struct{ v string } // canonical semver with a "v", or ""

// harnessName is how traces.Session.Harness names Claude Code.
const harnessName = "claude-code"

// VersionOf parses a traces.Session.Harness string of Claude Code
// ("claude-code 2.1.41"); anything else is the unknown version.
func VersionOf(harness string) Version {
	name, v, ok := strings.Cut(strings.TrimSpace(harness), " ")
	if !ok || name != harnessName {
		return Version{}
	}
	return Parse(v)
}

// Parse reads a bare version ("1.0.89"); what is not a semantic version is
// the unknown version.
func Parse(s string) Version {
	c := semver.Canonical("v" + strings.TrimPrefix(strings.TrimSpace(s), "v"))
	return Version{v: c}
}

// Known reports whether the version was parsed.
func (v Version) Known() bool { return v.v != "" }

// String is the version without its "v", or "" when unknown.
func (v Version) String() string { return strings.TrimPrefix(v.v, "v") }

// Before reports whether v is a known version older than s. An unknown
// version is never before anything: it gets the newest behaviour.
func (v Version) Before(s string) bool {
	return v.Known() && semver.Compare(v.v, "v"+s) < 0
}

// AtLeast reports whether v is s or newer; an unknown version is.
func (v Version) AtLeast(s string) bool { return !v.Before(s) }
