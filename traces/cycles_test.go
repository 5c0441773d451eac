package traces

import (
	"testing"
)

// TestBreakParentCycles pins issue 10's hang: a session that names itself
// or a sibling as its parent made every walk to the root loop forever.
func TestBreakParentCycles(t *testing.T) {
	mk := func(id, parent string, children ...string) *Session {
		return &Session{ID: id, Parent: parent, Children: children}
	}
	ss := []*Session{
		mk("self", "self", "self"),
		mk("b", "c", "c"), mk("c", "a", "b"), mk("a", "b", "c"),
		mk("root", "", "kid"), mk("kid", "root"),
		mk("tail", "a"), // hangs off the ring: keeps its parent
	}
	var w Warnings
	BreakParentCycles(ss, &w)
	for _, s := range ss {
		want := map[string]string{"kid": "root", "tail": "a"}[s.ID]
		if s.Parent != want {
			t.Errorf("%s: parent %q, want %q", s.ID, s.Parent, want)
		}
	}
	if got := ss[0].Children; len(got) != 0 {
		t.Errorf("self keeps children %v", got)
	}
	if got := ss[4].Children; len(got) != 1 {
		t.Errorf("root lost its child: %v", got)
	}
	got := w.List()
	want := []Warning{
		{Reason: "kept sessions whose parents form a cycle (a → b → c → a) as roots", Count: 1, First: "a:0"},
		{Reason: "kept sessions whose parents form a cycle (self → self) as roots", Count: 1, First: "self:0"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("warnings = %+v, want %+v", got, want)
	}
	// Walking to the root now ends.
	byID := map[string]*Session{}
	for _, s := range ss {
		byID[s.ID] = s
	}
	for _, s := range ss {
		for n := 0; s.Parent != ""; n++ {
			if n > len(ss) {
				t.Fatalf("%s: still a cycle", s.ID)
			}
			s = byID[s.Parent]
		}
	}
}
