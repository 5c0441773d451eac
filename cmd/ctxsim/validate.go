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
file prints one OK line. --json prints {"files":[{"file","ok","session",
"events","calls","billed_calls","problems":[...]}]} instead.

Examples:
  ctxsim validate traces/*.jsonl
  ctxsim validate --json traces/*.jsonl
  ctxsim import claude-code ~/.claude/projects -o /tmp/t && ctxsim validate /tmp/t/*.jsonl`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			asJSON := fs.Bool("json", false, "print the verdict of each file as JSON")
			addFormatTextJSON(fs, asJSON)
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one FILE")
				}
				return runValidate(e, args, *asJSON)
			}
		},
	})
}

// validated is one file's verdict.
type validated struct {
	File        string   `json:"file"`
	OK          bool     `json:"ok"`
	Session     string   `json:"session,omitempty"`
	Events      int      `json:"events"`
	Calls       int      `json:"calls"`
	BilledCalls int      `json:"billed_calls"`
	Problems    []string `json:"problems"`
}

func runValidate(e *env, files []string, asJSON bool) error {
	type loaded struct {
		file string
		s    *traces.Session
	}
	var good []loaded
	bad := 0
	problems := map[string][]string{}
	var out []validated
	for _, f := range files {
		s, err := readNative(e, f)
		if err != nil {
			out = append(out, validated{File: f, Problems: []string{err.Error()}})
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
		v := validated{File: l.file, Session: l.s.ID, Events: len(l.s.Events), Problems: problems[l.file]}
		for i := range l.s.Events {
			if l.s.Events[i].Kind == traces.Assistant {
				v.Calls++
				if l.s.Events[i].Usage != nil {
					v.BilledCalls++
				}
			}
		}
		v.OK = len(v.Problems) == 0
		if !v.OK {
			bad++
		}
		out = append(out, v)
	}
	// Files in the order given.
	order := map[string]int{}
	for i, f := range files {
		order[f] = i
	}
	sortStable(out, func(a, b validated) bool { return order[a.File] < order[b.File] })
	if asJSON {
		for i := range out {
			if out[i].Problems == nil {
				out[i].Problems = []string{}
			}
		}
		if err := writeJSON(e.stdout, struct {
			Files []validated `json:"files"`
		}{out}); err != nil {
			return err
		}
	} else {
		for _, v := range out {
			if !v.OK {
				for _, p := range v.Problems {
					fmt.Fprintln(e.stdout, p)
				}
				continue
			}
			fmt.Fprintf(e.stdout, "%s: OK: session %s, %d events, %d calls (%d with usage)\n", v.File, v.Session, v.Events, v.Calls, v.BilledCalls)
		}
	}
	if bad > 0 {
		return &regressionError{msg: fmt.Sprintf("%d of %d files have problems", bad, len(files))}
	}
	return nil
}
