package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/traces"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "lint native traces",
		usage:   "FILE...",
		help: `Validate reads native traces and checks that they replay as written: the
format itself (a bad line stops the file), then event kinds, times that are
set and never decrease, every tool_result answering an earlier tool_use,
usage only on assistant calls and never negative, and parent/children
links (a child listed by a parent in the same run must name it as parent).

Problems are printed as file:line: reason and the exit code is 1; a good
file prints one OK line.

Examples:
  ctxsim validate traces/*.jsonl
  ctxsim import claude-code ~/.claude/projects -o /tmp/t && ctxsim validate /tmp/t/*.jsonl`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one FILE")
				}
				return runValidate(e, args)
			}
		},
	})
}

func runValidate(e *env, files []string) error {
	type loaded struct {
		file string
		s    *traces.Session
	}
	var good []loaded
	bad := 0
	problems := map[string][]string{}
	for _, f := range files {
		s, err := readNative(f)
		if err != nil {
			fmt.Fprintln(e.stdout, err)
			bad++
			continue
		}
		for _, p := range traces.Validate(s) {
			problems[f] = append(problems[f], fmt.Sprintf("%s:%d: %s", f, p.Line(), p.Msg))
		}
		good = append(good, loaded{f, s})
	}
	// Links between files given together.
	byID := map[string]*traces.Session{}
	for _, l := range good {
		byID[l.s.ID] = l.s
	}
	for _, l := range good {
		for _, c := range l.s.Children {
			if cs := byID[c]; cs != nil && cs.Parent != l.s.ID {
				problems[l.file] = append(problems[l.file], fmt.Sprintf("%s:1: child %s names parent %q, not %s", l.file, c, cs.Parent, l.s.ID))
			}
		}
	}
	for _, l := range good {
		if ps := problems[l.file]; len(ps) > 0 {
			for _, p := range ps {
				fmt.Fprintln(e.stdout, p)
			}
			bad++
			continue
		}
		calls, billed := 0, 0
		for i := range l.s.Events {
			if l.s.Events[i].Kind == traces.Assistant {
				calls++
				if l.s.Events[i].Usage != nil {
					billed++
				}
			}
		}
		fmt.Fprintf(e.stdout, "%s: OK: session %s, %d events, %d calls (%d with usage)\n", l.file, l.s.ID, len(l.s.Events), calls, billed)
	}
	if bad > 0 {
		return &regressionError{msg: fmt.Sprintf("%d of %d files have problems", bad, len(files))}
	}
	return nil
}
