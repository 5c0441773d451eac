package usage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

// A subagent's calls count in its root session in the groups, and under
// its own row, indented below its parent, in the session tree; a parent
// cycle stops instead of looping; an unpriced model costs $0 with one
// warning per call, naming its file and line.
func TestCostOfTree(t *testing.T) {
	u := traces.Usage{Input: 1000, Output: 10}
	ss := []Session{
		{ID: "root", Start: at("2026-01-01T10:00:00Z"), File: "root.jsonl",
			Calls: []SessionCall{{At: at("2026-01-01T10:00:00Z"), Model: "claude-opus-4-6", Usage: u}}},
		{ID: "root.sub", Parent: "root", Start: at("2026-01-01T10:01:00Z"), File: "sub.jsonl",
			Calls: []SessionCall{{At: at("2026-01-01T10:01:00Z"), Model: "claude-opus-4-6", Usage: u}, {At: at("2026-01-01T10:02:00Z"), Model: "no-such-model", Usage: u, Line: 7}}},
		{ID: "a", Parent: "b", Start: at("2026-01-02T10:00:00Z"), Calls: []SessionCall{{At: at("2026-01-02T10:00:00Z"), Model: "claude-opus-4-6", Usage: u}}},
		{ID: "b", Parent: "a", Start: at("2026-01-02T10:00:00Z"), Calls: []SessionCall{{At: at("2026-01-02T10:00:00Z"), Model: "claude-opus-4-6", Usage: u}}},
	}
	ws := &traces.Warnings{}
	rep := CostOf(ss, pricing.Default(), Options{By: BySession, Loc: time.UTC}, ws)
	require.Equal(t, 5, rep.Totals.Requests)
	require.Len(t, rep.Unpriced, 1)
	require.Equal(t, "no-such-model", rep.Unpriced[0].Model)
	list := ws.List()
	require.Len(t, list, 1)
	require.Equal(t, 1, list[0].Count)
	// The warning points at the call (issue 27: it was the root session's
	// file, at line 0).
	require.Equal(t, "sub.jsonl:7", list[0].First)

	var ids []string
	for _, g := range rep.Groups {
		ids = append(ids, g.Key)
	}
	require.NotContains(t, ids, "root.sub", "a subagent's calls count in its root")

	require.NotEmpty(t, rep.Sessions)
	require.Equal(t, "root", rep.Sessions[0].ID)
	require.Len(t, rep.Sessions[0].Children, 1)
	child := rep.Sessions[0].Children[0]
	require.Equal(t, "root.sub", child.ID)
	require.Equal(t, 2, child.Requests)
	require.Equal(t, "claude-opus-4-6", child.Model, "the model of the session's first call")
	require.Equal(t, 1, rep.Sessions[0].Requests, "a parent's row holds its own calls")
}

func TestProjectOf(t *testing.T) {
	require.Equal(t, "-home-me-proj", ProjectOf("/x/.claude/projects/-home-me-proj/s.jsonl"))
	require.Equal(t, "-home-me-proj", ProjectOf("/x/.claude/projects/-home-me-proj/s/subagents/a.jsonl"))
	require.Equal(t, "logs", ProjectOf("/x/logs/s.jsonl"))
	require.Equal(t, "logs", ProjectOf("/x/logs/s/subagents/a.jsonl"))
}

// TestCostOfUntimedWithBounds pins issue 27's "--since/--until drop calls
// with unparsable timestamps without a warning": each is a warning naming
// its file and line; without bounds it is counted, under "(no time)".
func TestCostOfUntimedWithBounds(t *testing.T) {
	u := traces.Usage{Input: 1000, Output: 10}
	ss := []Session{{ID: "s", File: "s.jsonl", Calls: []SessionCall{
		{At: at("2026-01-01T10:00:00Z"), Model: "claude-opus-4-6", Usage: u, Line: 2},
		{Model: "claude-opus-4-6", Usage: u, Line: 4},
	}}}
	ws := &traces.Warnings{}
	rep := CostOf(ss, pricing.Default(), Options{By: ByDay, Loc: time.UTC, Since: at("2025-12-31T00:00:00Z")}, ws)
	if rep.Totals.Requests != 1 || ws.Len() != 1 || ws.List()[0].Reason != WarnUntimed || ws.List()[0].First != "s.jsonl:4" {
		t.Errorf("with --since: %d requests, warnings %v", rep.Totals.Requests, ws.List())
	}
	ws = &traces.Warnings{}
	rep = CostOf(ss, pricing.Default(), Options{By: ByDay, Loc: time.UTC}, ws)
	if rep.Totals.Requests != 2 || ws.Len() != 0 || rep.Groups[len(rep.Groups)-1].Key != NoTime {
		t.Errorf("without bounds: %d requests, groups %+v, warnings %v", rep.Totals.Requests, rep.Groups, ws.List())
	}
}

// TestCostOfBadTimes pins issue 27's zero time end to end: a Claude Code
// log whose call is timestamped 0001-01-01T00:00:00Z (Go's zero time) was
// grouped under "(no time)", as a call the log gave no time; a call at the
// Unix epoch under 1970-01-01. Each is billed under "(bad time)", apart from
// a call without a timestamp, in every time grouping, left out of first and
// last, warned at file:line naming the value, and skipped by --since with
// a warning.
func TestCostOfBadTimes(t *testing.T) {
	dir := t.TempDir()
	line := func(n int, ts string) string {
		stamp := `"timestamp":"` + ts + `",`
		if ts == "" {
			stamp = ""
		}
		return fmt.Sprintf(`{"type":"assistant","sessionId":"s","requestId":"r%d",%s"message":{"id":"m%d","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":100,"output_tokens":10}}}`, n, stamp, n) + "\n"
	}
	log := line(1, "2026-02-10T21:00:00Z") + line(2, "0001-01-01T00:00:00Z") + line(3, "1970-01-01T00:00:00Z") + line(4, "")
	file := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(log), 0o644))
	ss, ws, err := Load(context.Background(), []string{file}, "", nil)
	require.NoError(t, err)
	for _, x := range ws.List() {
		want := map[string]string{
			"kept call with a bad timestamp (not RFC 3339, or before 2000 or after 2099: Go's zero time, the Unix epoch): counted under (bad time); a since/until window skips it": file + `:2 (timestamp "0001-01-01T00:00:00Z")`,
			"kept call without a timestamp (counted under (no time); a since/until window skips it)":                                                                               file + ":4",
		}[x.Reason]
		if x.First != want || x.Count != map[bool]int{true: 2, false: 1}[strings.Contains(x.Reason, "bad")] {
			t.Errorf("warning %+v, want first at %q", x, want)
		}
	}
	if ws.Len() != 2 {
		t.Errorf("warnings %v, want the bad times and the missing one", ws.List())
	}
	dated := at("2026-02-10T21:00:00Z")
	for _, by := range []By{ByDay, ByWeek, ByMonth, ByBlock} {
		rep := CostOf(ss, pricing.Default(), Options{By: by, Loc: time.UTC}, &traces.Warnings{})
		var keys []string
		var reqs []int
		for _, g := range rep.Groups {
			keys, reqs = append(keys, g.Key), append(reqs, g.Requests)
		}
		if len(keys) != 3 || keys[1] != BadTime || keys[2] != NoTime || !slices.Equal(reqs, []int{1, 2, 1}) ||
			!rep.Totals.First.Equal(dated) || !rep.Totals.Last.Equal(dated) || rep.Totals.Requests != 4 {
			t.Errorf("by %s: groups %q of %v requests, first %v, last %v; want one dated, 2 under %s, 1 under %s",
				by, keys, reqs, rep.Totals.First, rep.Totals.Last, BadTime, NoTime)
		}
	}
	bw := &traces.Warnings{}
	rep := CostOf(ss, pricing.Default(), Options{By: ByDay, Loc: time.UTC, Since: at("2026-01-01T00:00:00Z")}, bw)
	if rep.Totals.Requests != 1 || count(bw, WarnBadTimed) != 2 || first(bw, WarnBadTimed) != file+":2" || count(bw, WarnUntimed) != 1 {
		t.Errorf("with --since: %d requests, warnings %v", rep.Totals.Requests, bw.List())
	}
}
