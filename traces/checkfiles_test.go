package traces

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Verdicts come in the order given; a file that does not read is one
// problem; a child listed by a parent given alongside must name it.
func TestCheckFiles(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	call := func() []Event {
		return []Event{
			{Kind: User, Time: t0, Blocks: []Block{{Kind: Text, Text: "hi"}}},
			{Kind: Assistant, Time: t0, Blocks: []Block{{Kind: Text, Text: "yo"}}, Usage: &Usage{Input: 1}},
		}
	}
	byFile := map[string]*Session{
		"p.jsonl": {ID: "p", Children: []string{"c"}, Events: call()},
		"c.jsonl": {ID: "c", Parent: "other", Events: call()},
	}
	read := func(f string) (*Session, error) {
		if s := byFile[f]; s != nil {
			return s, nil
		}
		return nil, errors.New(f + ": no such file")
	}
	got, bad := CheckFiles([]string{"c.jsonl", "x.jsonl", "p.jsonl"}, read)
	require.Equal(t, 2, bad)
	require.Len(t, got, 3)
	require.Equal(t, FileCheck{File: "c.jsonl", OK: true, Session: "c", Events: 2, Calls: 1, BilledCalls: 1}, got[0])
	require.Equal(t, []string{"x.jsonl: no such file"}, got[1].Problems)
	require.False(t, got[2].OK)
	require.Equal(t, []string{`p.jsonl:1: child c names parent "other", not p`}, got[2].Problems)
}

func TestDropCallless(t *testing.T) {
	withCall := &Session{ID: "a", Events: []Event{{Kind: User}, {Kind: Assistant}}}
	none := &Session{ID: "b", Events: []Event{{Kind: User}}}
	stub := &Session{ID: "c"}
	w := &Warnings{}
	got := DropCallless([]*Session{withCall, none, stub}, w, func(s *Session) bool { return s == stub })
	require.Equal(t, []*Session{withCall, stub}, got)
	require.Equal(t, []Warning{{Reason: WarnNoCall, Count: 1, First: "b"}}, w.List())
}
