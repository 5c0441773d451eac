package traces

import "testing"

// TestGroupProjects pins which sessions GroupProjects makes one account:
// files of one folder whose sessions began in one working directory; not
// a file alone in its project, not another folder or project, not a
// session whose layout already named its account; subagents follow their
// file, and a second pass changes nothing.
func TestGroupProjects(t *testing.T) {
	const cc = "claude-code"
	mk := func(id, file, project string) *Session {
		return &Session{ID: id, Format: cc, File: file, Project: project}
	}
	a := mk("a", "logs/s/a.jsonl", "/home/u/chess")
	b := mk("b", "logs/s/b.jsonl", "/home/u/chess")
	bSub := &Session{ID: "b.agent", Format: cc, File: "logs/s/b.jsonl", Parent: "b"}
	alone := mk("c", "logs/s/c.jsonl", "/home/u/other")
	elsewhere := mk("d", "logs/t/d.jsonl", "/home/u/chess")
	laid := mk("e", "logs/s/e.jsonl", "/home/u/chess")
	laid.Account = "claude-code:cfg"
	noCwd := mk("f", "logs/s/f.jsonl", "")
	codex := &Session{ID: "g", Format: "codex", File: "logs/s/g.jsonl", Project: "/home/u/chess"}
	ss := []*Session{a, b, bSub, alone, elsewhere, laid, noCwd, codex}
	GroupProjects(ss)
	const acct = "claude-code:logs/s#/home/u/chess"
	want := map[string]string{
		"a": acct, "b": acct,
		"b.agent": acct,
		"c":       "", "d": "", "e": "claude-code:cfg", "f": "", "g": "",
	}
	check := func(pass string) {
		for _, s := range ss {
			if s.Account != want[s.ID] {
				t.Errorf("%s: session %s: account %q, want %q", pass, s.ID, s.Account, want[s.ID])
			}
		}
	}
	check("first pass")
	GroupProjects(ss)
	check("second pass")
}
