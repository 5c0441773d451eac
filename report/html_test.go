package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func htmlFixture(t *testing.T) []byte {
	t.Helper()
	recs := twoPolicies()
	res := SummarizeAll(recs, Options{})
	p := opus()
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
	// 3 per-trace figures + break-even + gap cost + the heatmap.
	if n := strings.Count(page, "<svg"); n != 6 {
		t.Errorf("%d <svg> elements, want 6", n)
	}
	if n := strings.Count(page, "</svg>"); n != 6 {
		t.Errorf("%d </svg>, want 6", n)
	}
	if strings.Contains(page, "<?xml") {
		t.Errorf("an XML prologue is left inside the HTML")
	}
	// The summary table, a damage table and one calls table per run.
	if n := strings.Count(page, "<table>"); n != 1+1+2 {
		t.Errorf("%d tables, want 4", n)
	}
	if n := strings.Count(page, "<details>"); n != 2 {
		t.Errorf("%d drill-downs, want 2", n)
	}
	for _, want := range []string{"<td>flat *</td>", "<td>p</td>", "fixture &lt;run&gt;", `<tr class="pass">`, "prompt is too long"} {
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
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no chromium on PATH: install Debian's chromium package to run the browser check")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(path, htmlFixture(t), 0o644))
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile")}
	dom, err := exec.Command(bin, append(args, "--dump-dom", "file://"+path)...).Output()
	require.NoError(t, err, "chromium --dump-dom")
	for _, want := range []string{"<table>", "<svg", "<details>"} {
		if !bytes.Contains(dom, []byte(want)) {
			t.Errorf("chromium's DOM lacks %s", want)
		}
	}
	shot := filepath.Join(dir, "shot.png")
	out, err := exec.Command(bin, append(args, "--screenshot="+shot, "--window-size=1200,2000", "file://"+path)...).CombinedOutput()
	require.NoError(t, err, "chromium --screenshot: %s", out)
	st, err := os.Stat(shot)
	require.NoError(t, err)
	if st.Size() < 20000 {
		t.Errorf("screenshot is %d bytes: the page rendered (nearly) blank", st.Size())
	}
}
