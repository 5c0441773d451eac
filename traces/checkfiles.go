package traces

import (
	"fmt"
	"sort"
)

// A FileCheck is one native trace file's verdict (ctxsim validate).
type FileCheck struct {
	File        string   `json:"file"`
	OK          bool     `json:"ok"`
	Session     string   `json:"session,omitempty"`
	Events      int      `json:"events"`
	Calls       int      `json:"calls"`
	BilledCalls int      `json:"billed_calls"`
	Problems    []string `json:"problems"`
}

// CheckFiles reads each file with read and checks it (Validate), and the
// links between the files given together: a child a parent lists must
// name it as parent. Problems read file:line: reason. The verdicts come in
// the order of files; bad counts the files with problems.
func CheckFiles(files []string, read func(file string) (*Session, error)) (out []FileCheck, bad int) {
	type loaded struct {
		file string
		s    *Session
	}
	var good []loaded
	problems := map[string][]string{}
	for _, f := range files {
		s, err := read(f)
		if err != nil {
			out = append(out, FileCheck{File: f, Problems: []string{err.Error()}})
			bad++
			continue
		}
		for _, p := range Validate(s) {
			problems[f] = append(problems[f], fmt.Sprintf("%s:%d: %s", f, p.Line(), p.Msg))
		}
		good = append(good, loaded{f, s})
	}
	byID := map[string]*Session{}
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
		v := FileCheck{File: l.file, Session: l.s.ID, Events: len(l.s.Events), Problems: problems[l.file]}
		for i := range l.s.Events {
			if l.s.Events[i].Kind == Assistant {
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
	order := map[string]int{}
	for i, f := range files {
		order[f] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].File] < order[out[j].File] })
	return out, bad
}
