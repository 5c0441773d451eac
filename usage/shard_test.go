package usage

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

func TestPrefixes(t *testing.T) {
	require.Equal(t, []string{"."}, prefixes("."))
	require.Equal(t, []string{".", "a", "a/b"}, prefixes("a/b"))
}

// Warnings of the projects add up by reason, each first seen where the
// one-process run sees it first: at the earliest file in its order.
func TestMergeWarnings(t *testing.T) {
	got := mergeWarnings([]PlacedWarning{
		{traces.Warning{Reason: "z", Count: 2, First: "b.jsonl:3"}, 5},
		{traces.Warning{Reason: "a", Count: 1, First: "c.jsonl:1"}, 7},
		{traces.Warning{Reason: "z", Count: 3, First: "a.jsonl:9"}, 1},
	})
	require.Equal(t, []traces.Warning{
		{Reason: "a", Count: 1, First: "c.jsonl:1"},
		{Reason: "z", Count: 5, First: "a.jsonl:9"},
	}, got)
}

// The shards of a cost run scan disjoint projects whose sessions, merged,
// are the one-process scan's; the grouping travels in the manifest.
func TestScanShardMerges(t *testing.T) {
	root := tracetest.Projects(t, filepath.Join("..", "testdata", "claude-code"),
		map[string][]string{"proj-a": {"short.jsonl", "tool_heavy.jsonl"}, "proj-b": {"subagent.jsonl"}})
	ctx := context.Background()
	want, _, err := Load(ctx, []string{root}, "", nil)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	render := Grouping{By: "day", Timezone: "UTC", WeekStart: "monday"}
	rb, err := json.Marshal(render)
	require.NoError(t, err)
	m := &shard.Merged{Manifest: shard.Manifest{Render: rb}}
	owned := 0
	for k := 1; k <= 2; k++ {
		scan, err := ScanShard(ctx, []string{root}, "", nil, shard.Spec{K: k, N: 2})
		require.NoError(t, err)
		owned += len(scan.Entries)
		m.Entries = append(m.Entries, scan.Entries...)
	}
	require.Equal(t, 2, owned, "each project belongs to exactly one shard")
	scan, r, err := MergeShards(m)
	require.NoError(t, err)
	require.Equal(t, render, r)
	ids := func(ss []Session) (out []string) {
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	require.Equal(t, ids(want), ids(scan.Sessions))
	_, err = r.Options()
	require.NoError(t, err)
	_, err = ScanShard(ctx, []string{"-"}, "", strings.NewReader(""), shard.Spec{K: 1, N: 2})
	var ns *NotSplittableError
	require.ErrorAs(t, err, &ns)
}
