package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "version",
		summary: "the module version and VCS revision of this binary",
		usage:   "",
		help: `Version prints the module version ("(devel)" when built from a clone rather
than installed with go install …@vX.Y.Z) and, when the binary was built in
a git work tree, its VCS revision, commit time and whether the tree had
uncommitted changes. "ctxsim --version" prints the same.

Examples:
  ctxsim version
  ctxsim --version`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("version takes no arguments")
				}
				fmt.Fprintln(e.stdout, versionLine(debug.ReadBuildInfo()))
				return nil
			}
		},
	})
}

// versionLine renders the build info: "ctxsim VERSION (REVISION, TIME[,
// modified]) GOVERSION".
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "ctxsim (unknown version: built without module support)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	out := "ctxsim " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += " (" + rev
		if at != "" {
			out += ", " + at
		}
		out += dirty + ")"
	}
	return out + " " + bi.GoVersion
}
