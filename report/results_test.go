package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/results/resultstest"
)

func TestResultsGolden(t *testing.T) {
	recs := resultstest.Run()
	for _, r := range resultstest.Run()[:3] {
		r.Policy = "q"
		r.CostUSD *= 2
		recs = append(recs, r)
	}
	res := results.SummarizeAll(recs, results.Options{})
	var b bytes.Buffer
	require.NoError(t, WriteSummary(&b, res))
	golden(t, "summary.json", b.Bytes())

	back, err := results.Read(bytes.NewReader(b.Bytes()), "summary.json")
	require.NoError(t, err)
	var b2 bytes.Buffer
	require.NoError(t, WriteSummary(&b2, back))
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Errorf("summary.json does not round-trip")
	}

	for _, f := range []Format{Text, Markdown, CSV} {
		var out bytes.Buffer
		require.NoError(t, WriteRuns(&out, f, res.Runs, RunsOptions{Title: "compare"}))
		golden(t, "runs."+string(f), out.Bytes())
	}
	var rl bytes.Buffer
	require.NoError(t, WriteRecords(&rl, resultstest.Run()))
	golden(t, "records.jsonl", rl.Bytes())
}

func TestReadSummaryErrors(t *testing.T) {
	for _, in := range []string{`{"runs":[{"trace":"a"}]}`, `{"runs":[`, `nope`} {
		if _, err := results.Read(bytes.NewReader([]byte(in)), "x.json"); err == nil {
			t.Errorf("results.Read(%q) succeeded", in)
		}
	}
}
