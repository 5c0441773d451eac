package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/results"
)

// tuneFixture is a tune of four settings over six sessions in three
// folds, kept to two constraints: "mask" is cheapest and keeps too few
// user messages; "wide" keeps the most and costs the most.
func tuneFixture(t *testing.T) *results.Tune {
	t.Helper()
	type cand struct {
		name      string
		cost, occ float64
		verbatim  float64
	}
	cands := []cand{{"p", 10, 0.6, 0.9}, {"p[ttl=1h]", 9, 0.6, 0.9}, {"p[mask]", 6, 0.4, 0.5}, {"p[wide]", 11, 0.8, 1}}
	var runs []results.RunSummary
	var names []string
	for _, c := range cands {
		names = append(names, c.name)
		for i, id := range []string{"s1", "s2", "s3", "s4", "s5", "s6"} {
			v := c.verbatim
			r := results.RunSummary{Trace: id, Policy: c.name, CostUSD: c.cost + float64(i%3)/4, UserMessagesVerbatim: &v}
			r.Occupancy.Max = c.occ
			runs = append(runs, r)
		}
	}
	var keep []results.Constraint
	for _, k := range []string{"user_messages_verbatim>=0.8", "occupancy.max<=0.85"} {
		c, err := results.ParseConstraint(k)
		require.NoError(t, err)
		keep = append(keep, c)
	}
	tu, err := results.NewTune(results.TuneSetup{Base: "p", Current: "p", Axes: []results.Axis{{Key: "prompt_caching.cache_ttl"}},
		Candidates: names, Folds: 3, Seed: 1, Keep: keep}, runs)
	require.NoError(t, err)
	return tu
}

func TestTuneText(t *testing.T) {
	tu := tuneFixture(t)
	require.Equal(t, "p[ttl=1h]", tu.Recommended)
	for _, f := range []Format{Text, Markdown, CSV} {
		var b bytes.Buffer
		require.NoError(t, WriteTune(&b, f, tu))
		golden(t, "tune."+string(f), b.Bytes())
	}
	figs := TuneFigures(tu)
	require.Len(t, figs, 2, "one figure per constrained metric")
	var b bytes.Buffer
	for _, f := range figs {
		require.NoError(t, f.WriteData(&b))
	}
	golden(t, "tune-fronts.txt", b.Bytes())
}

func tuneHTML(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteTuneHTML(&b, tuneFixture(t)))
	return b.Bytes()
}

func TestTuneHTML(t *testing.T) {
	page := string(tuneHTML(t))
	require.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))
	require.Equal(t, 2, strings.Count(page, "<svg"), "one plot per front")
	require.Equal(t, 2, strings.Count(page, "</svg>"))
	require.Equal(t, 4, strings.Count(page, "<table>"), "folds, settings and two fronts")
	for _, want := range []string{"Recommended: p[ttl=1h]", "Held-out saving:", ">recommended<", ">current<", "Pareto front: cost against occupancy.max (lower is better)"} {
		require.Contains(t, page, want)
	}
	require.NotContains(t, page, "<?xml")
	require.NotContains(t, page, "<script")
	require.Empty(t, external.FindString(page))
	require.Equal(t, page, string(tuneHTML(t)), "two renders differ")
}

// TestTuneHTMLChromium loads the tune report in headless Chromium: the
// answer, the plots and the tables are in the DOM it parsed, and the page
// is not blank. CI installs chromium; elsewhere the test is skipped.
func TestTuneHTMLChromium(t *testing.T) {
	browse(t, tuneHTML(t), "1200,1600", `<section id="answer">`, `<section id="fronts">`, `<figure aria-label="cost against user_messages_verbatim">`,
		`<figure aria-label="cost against occupancy.max">`, `<section id="tables">`, "<table>", "Recommended: p[ttl=1h]")
}
