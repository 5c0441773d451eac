package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces/tracetest"
	"github.com/ctxsim/ctxsim/usage"
)

// A cost run's shards, joined, print the report one process prints, with
// its warnings; merge must price them with the shards' card.
func TestJoinCost(t *testing.T) {
	root := tracetest.Projects(t, filepath.Join("..", "testdata", "claude-code"),
		map[string][]string{"proj-a": {"short.jsonl", "tool_heavy.jsonl"}, "proj-b": {"subagent.jsonl"}})
	ctx := context.Background()
	g := usage.Grouping{By: "day", Timezone: "UTC", WeekStart: "monday"}
	opts, err := g.Options()
	require.NoError(t, err)
	ss, ws, err := usage.Load(ctx, []string{root}, "", nil)
	require.NoError(t, err)
	whole := Cost(ss, ws, pricing.Default(), opts)
	require.NotEmpty(t, whole.Groups)
	require.Equal(t, ws.List(), whole.Warnings)
	var want bytes.Buffer
	require.NoError(t, report.WriteCost(&want, report.Text, whole, opts.Loc))

	var dirs []string
	for k := 1; k <= 2; k++ {
		sp := shard.Spec{K: k, N: 2}
		scan, err := usage.ScanShard(ctx, []string{root}, "", nil, sp)
		require.NoError(t, err)
		m, err := ShardManifest(sp, "cost", 0, nil, []string{root}, false, "", g)
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, shard.WriteDir(dir, sp, scan.Entries, m, scan.Walk))
		dirs = append(dirs, dir)
	}
	m, err := shard.Merge(ctx, dirs)
	require.NoError(t, err)
	j, err := Join(m, "manifest.json", "")
	require.NoError(t, err)
	require.Equal(t, g, j.Render)
	require.Equal(t, whole.Totals, j.Cost.Totals)
	require.Equal(t, whole.Warnings, j.CostWarnings.List())
	var got bytes.Buffer
	require.NoError(t, j.Print(&got, report.Text))
	require.Equal(t, want.String(), got.String())
	require.NoError(t, j.Write(t.TempDir()), "cost writes no files")

	prices := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(prices, []byte(`{}`), 0o644))
	_, err = Join(m, "manifest.json", prices)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "price file: the shards used the embedded rate card", err.Error())
}
