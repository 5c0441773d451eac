package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/results/resultstest"
)

// The check report of a baseline with a regression, an improvement, a
// missing and a new cell, drawn in every format and as a job summary.
func TestCheckGolden(t *testing.T) {
	cur := results.SummarizeAll(resultstest.TwoPolicies(), results.Options{})
	base := results.SummarizeAll(resultstest.TwoPolicies(), results.Options{})
	base.Runs[1].CacheHitRate += 0.02
	base.Runs[0].CostUSD *= 1.10
	base.Runs[0].LatencyMS.P95 = int64(float64(cur.Runs[0].LatencyMS.P95) * 1.04)
	base.Runs = append(base.Runs, results.RunSummary{Trace: "gone", Policy: "p"})
	cur.Runs = append(cur.Runs, results.RunSummary{Trace: "added", Policy: "p"})
	rep := results.Check(base, cur, nil)
	if rep.Regressions != 1 || rep.Improvements != 1 || rep.MissingCells != 1 || rep.NewCells != 1 {
		t.Fatalf("fixture: %s", rep.Summary())
	}
	for _, f := range []Format{Text, Markdown, JSON} {
		var b bytes.Buffer
		require.NoError(t, WriteCheck(&b, f, &rep))
		golden(t, "check."+string(f), b.Bytes())
	}
	var md bytes.Buffer
	require.NoError(t, WriteCheckMarkdown(&md, &rep))
	golden(t, "check.summary.md", md.Bytes())
}
