package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/internal/chromium"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/results/resultstest"
	"github.com/stretchr/testify/require"
)

func htmlFixture(t *testing.T) []byte {
	t.Helper()
	recs := resultstest.TwoPolicies()
	res := results.SummarizeAll(recs, results.Options{})
	p := resultstest.Opus()
	heat, err := HeatmapFigure("sweep", "Cost by threshold and micro-compaction period", sweepGrid())
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteHTML(&b, HTMLInput{
		Title: "ctxsim report", Subtitle: "fixture <run>", Runs: res.Runs, Records: recs, Price: &p, Figures: []Figure{heat},
	}))
	return b.Bytes()
}

// external matches anything a browser would fetch: src/href to a URL,
// CSS url(...) and @import. SVG's xmlns attributes are names, not fetches.
var external = regexp.MustCompile(`(?i)(\b(src|href)\s*=\s*["']?\s*(https?:|//))|url\(|@import`)

func TestHTMLStructure(t *testing.T) {
	page := string(htmlFixture(t))
	if !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Errorf("page does not start with a doctype: %.40q", page)
	}
	// Overview first, then the workloads, the figures, the tables last.
	last := -1
	for _, id := range []string{`id="overview"`, `id="savings"`, `id="breaks"`, `id="cheapest"`, `id="workloads"`, `id="figures"`, `id="tables"`} {
		at := strings.Index(page, id)
		if at < 0 || at < last {
			t.Errorf("section %s at %d, after %d: want every section, in order", id, at, last)
		}
		last = at
	}
	// p overflowed, so flat is the cheapest although p's bar is not; p
	// carries the overflow badge wherever it appears.
	require.Contains(t, page, `<p class="answer">flat is cheapest on 1 of 1 workloads.</p>`)
	require.Contains(t, page, `<div class="bar best"><span class="lab">flat</span>`)
	require.Contains(t, page, `<span class="badge" title="1 calls overflowed">overflow</span> $0.2270`)
	require.Contains(t, page, `<span class="badge">overflow: 1 calls</span>`, "the drill-down's badge")
	// Small multiples: a hit-rate and an occupancy panel per policy, each
	// in its policy's colour, the same colour as its bars and legend.
	require.Equal(t, 4, strings.Count(page, `<svg class="spark"`))
	for _, c := range []string{`stroke="#4e79a7"`, `stroke="#f28e2b"`} {
		require.Equal(t, 2, strings.Count(page, c), c)
	}
	require.Contains(t, page, `<span class="sw" style="background:#4e79a7"></span>flat`)
	// Break-even, gap cost and the heatmap, plus the 4 panels.
	if n := strings.Count(page, "<svg"); n != 7 {
		t.Errorf("%d <svg> elements, want 7", n)
	}
	if n := strings.Count(page, "</svg>"); n != 7 {
		t.Errorf("%d </svg>, want 7", n)
	}
	if strings.Contains(page, "<?xml") {
		t.Errorf("an XML prologue is left inside the HTML")
	}
	// The summary table and a damage table; calls live in records.jsonl.
	if n := strings.Count(page, "<table>"); n != 2 {
		t.Errorf("%d tables, want 2", n)
	}
	if n := strings.Count(page, "<details>"); n != 2 {
		t.Errorf("%d drill-downs, want 2", n)
	}
	for _, want := range []string{"<td>flat *</td>", "<td>p</td>", "fixture &lt;run&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if m := external.FindString(page); m != "" {
		t.Errorf("page loads an external resource: %q", m)
	}
	if strings.Contains(page, "<script") {
		t.Errorf("page has a script")
	}
}

func TestHTMLDeterministic(t *testing.T) {
	if a, b := htmlFixture(t), htmlFixture(t); !bytes.Equal(a, b) {
		t.Errorf("two renders of the same input differ")
	}
}

// TestHTMLChromium loads the report in headless Chromium, checks the DOM it
// parsed and takes a screenshot. CI installs chromium; elsewhere the test is
// skipped.
func TestHTMLChromium(t *testing.T) {
	browse(t, htmlFixture(t), "1200,2000", `<section id="overview">`, `class="answer"`, `id="savings"`, `id="breaks"`, `id="cheapest"`,
		`<section id="workloads">`, `<svg class="spark"`, `<section id="figures">`, `<section id="tables">`, "<table>", "<details>")
}

// browse loads page in headless Chromium, checks that the DOM it parsed
// holds each of want, and takes a screenshot at size (width,height) that
// must not be (nearly) blank. Without chromium on PATH it skips.
func browse(t *testing.T, page []byte, size string, want ...string) {
	t.Helper()
	bin := chromium.Find()
	if bin == "" {
		t.Skip("no chromium on PATH: install Debian's chromium package to run the browser check")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(path, page, 0o644))
	run := func(args ...string) ([]byte, error) { return chromium.Run(bin, dir, t.Logf, args...) }
	dom, err := run("--dump-dom", "file://"+path)
	require.NoError(t, err, "chromium --dump-dom")
	for _, w := range want {
		if !bytes.Contains(dom, []byte(w)) {
			t.Errorf("chromium's DOM lacks %s", w)
		}
	}
	shot := filepath.Join(dir, "shot.png")
	_, err = run("--screenshot="+shot, "--window-size="+size, "file://"+path)
	require.NoError(t, err, "chromium --screenshot")
	st, err := os.Stat(shot)
	require.NoError(t, err)
	if st.Size() < 20000 {
		t.Errorf("screenshot is %d bytes: the page rendered (nearly) blank", st.Size())
	}
}
