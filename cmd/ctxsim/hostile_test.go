package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/internal/faultio"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

// nativeWith writes testdata/breakeven-gaps.jsonl as session id with
// parent, and returns its path.
func nativeWith(t *testing.T, dir, id, parent string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/breakeven-gaps.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	head := `"session":{"id":"` + id + `"`
	if parent != "" {
		head += `,"parent":"` + parent + `"`
	}
	s := strings.Replace(string(b), `"session":{"id":"gappy"`, head, 1)
	p := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// withDeadline fails the test if f does not return in time: the defect is
// a hang, and a hung test is a poor report of it.
func withDeadline(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

// TestParentCycleEnds pins issue 10's hang: sessions that name each other
// (or themselves) as parent looped forever in run, compare and whatif. A
// ring is reported and replayed as roots; a native trace naming itself
// fails validation and is skipped (exit 1), the rest replayed.
func TestParentCycleEnds(t *testing.T) {
	dir := t.TempDir()
	nativeWith(t, dir, "a", "b")
	nativeWith(t, dir, "b", "a")
	nativeWith(t, dir, "c", "c")
	for _, args := range [][]string{
		{"run", "--trace", dir},
		{"compare", "--trace", dir},
	} {
		var code int
		var out, errs string
		withDeadline(t, time.Minute, func() { code, out, errs = runCmd(t, args...) })
		if code != exitFailure || out == "" {
			t.Errorf("%v: exit %d, stdout %d bytes: %s", args, code, len(out), errs)
		}
		for _, c := range []string{"(a → b → a)", "session c is its own parent"} {
			if !strings.Contains(errs, c) {
				t.Errorf("%v: stderr does not report %s:\n%s", args, c, errs)
			}
		}
	}
}

// TestValidateBeforeReplay pins "replays skip validation": a native trace
// with events out of order, a tool result before its call, or negative
// usage is not replayed; the command names file:line, replays the rest
// and exits 1. A session with no model call is skipped with a warning.
func TestValidateBeforeReplay(t *testing.T) {
	b, err := os.ReadFile("testdata/breakeven-gaps.jsonl")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	cases := []struct{ name, edit, want string }{
		{"out of order", strings.Replace(lines[3], "09:01:00", "08:00:00", 1), ":4|time 2026-03-02T08:00:00.000Z is before"},
		{"negative usage", strings.Replace(lines[2], `"output":400`, `"output":-400`, 1), ":3|usage has a negative token count"},
		{"result before call", `{"t":"2026-03-02T09:01:00Z","kind":"tool_result","blocks":[{"type":"tool_result","id":"toolu_x","text":"ok"}]}`, ":4|tool_result for toolu_x has no earlier tool_use"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			nativeWith(t, dir, "good", "")
			bad := append([]string{}, lines...)
			bad[0] = strings.Replace(bad[0], `"id":"gappy"`, `"id":"bad"`, 1)
			if tc.name == "out of order" {
				bad[3] = tc.edit
			} else if tc.name == "negative usage" {
				bad[2] = tc.edit
			} else {
				bad[3] = tc.edit
			}
			p := filepath.Join(dir, "bad.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(bad, "\n")+"\n"), 0o644))
			code, out, errs := runCmd(t, "compare", "--trace", dir)
			at, msg, _ := strings.Cut(tc.want, "|")
			if code != exitFailure || !strings.Contains(errs, "(first at "+p+at+")") || !strings.Contains(errs, msg) ||
				!strings.Contains(out, "good") || strings.Contains(out, "bad") {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1, %s%s and %q, good replayed and bad not", code, errs, out, p, at, msg)
			}
		})
	}
	t.Run("no model call", func(t *testing.T) {
		dir := t.TempDir()
		nativeWith(t, dir, "good", "")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "quiet.jsonl"), []byte(strings.Replace(lines[0], `"id":"gappy"`, `"id":"quiet"`, 1)+"\n"+lines[1]+"\n"), 0o644))
		code, out, errs := runCmd(t, "compare", "--trace", dir)
		if code != exitOK || !strings.Contains(errs, "skipped session with no model call") || !strings.Contains(out, "good") {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
	})
}

// TestCheckFailsClosed pins issue 10's open gate: an empty baseline
// passed ("0 cells compared"), a duplicated cell hid a regression behind
// its first copy, and trailing garbage was ignored.
func TestCheckFailsClosed(t *testing.T) {
	good, err := os.ReadFile(checkResultsFile)
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	// A second copy of a cell, first: Find compared only this one.
	first := `{"trace": "coding-burst-1", "policy": "claude-code", "requests": 120, "cost_usd": 4.2031, "cache_hit_rate": 0.9312,
     "occupancy": {"mean": 0.41, "max": 0.78, "final": 0.35}, "compactions": {"batch": 1, "micro": 0, "prune": 0, "idle": 0, "masking": 0},
     "latency_ms": {"p50": 8200, "p95": 21500, "max": 40100}},`
	require.Contains(t, string(good), first)
	dup := strings.Replace(string(good), `"runs": [`, `"runs": [`+"\n"+strings.Replace(first, "0.9312", "0.99", 1), 1)
	// Issue 27: a run missing a compared field read as 0 ("improved"); a
	// negative cost or a 500 % hit rate passed with exit 0.
	edit := func(name, old, new string) string {
		require.Contains(t, string(good), old)
		return write(name, strings.Replace(string(good), old, new, 1))
	}
	cases := []struct {
		name, base, results, want string
		code                      int
	}{
		{"empty baseline", write("empty.json", "{}"), checkResultsFile, "the baseline holds no cells", exitFailure},
		{"empty results", checkResultsFile, write("empty-runs.json", `{"runs":[]}`), "the results holds no cells", exitFailure},
		{"duplicated cell", checkResultsFile, write("dup.json", dup), "are both coding-burst-1 · claude-code", exitUsage},
		{"duplicated in baseline", write("dupbase.json", dup), checkResultsFile, "a cell must appear once", exitUsage},
		{"trailing garbage", checkResultsFile, write("trail.json", string(good)+"\n{\"runs\":[]}"), "after the results", exitUsage},
		{"trailing junk", write("trail2.json", string(good)+"xyz"), checkResultsFile, "after the results", exitUsage},
		{"no cost", checkResultsFile, edit("nocost.json", `"cost_usd": 4.2031, `, ""), "runs[0] (coding-burst-1 · claude-code): cost_usd: missing", exitUsage},
		{"no cost in baseline", edit("nocostbase.json", `"cost_usd": 4.2031, `, ""), checkResultsFile, "runs[0] (coding-burst-1 · claude-code): cost_usd: missing", exitUsage},
		{"negative cost", checkResultsFile, edit("neg.json", `"cost_usd": 4.2031`, `"cost_usd": -1e9`), "cost_usd: want a number ≥ 0, got -1e+09", exitUsage},
		{"500% hit rate", checkResultsFile, edit("hit.json", `"cache_hit_rate": 0.9312`, `"cache_hit_rate": 5`), "cache_hit_rate: want a number in [0, 1], got 5", exitUsage},
		{"negative compactions", checkResultsFile, edit("comp.json", `"batch": 1`, `"batch": -3`), "compactions.batch: want a number ≥ 0", exitUsage},
		{"no p95", checkResultsFile, edit("p95.json", `"p95": 21500, `, ""), "latency_ms.p95: missing", exitUsage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCmd(t, "check", "--baseline", tc.base, "--results", tc.results)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, tc.code, tc.want)
			}
		})
	}
}

// TestCheckUpdateThroughSymlink: --update replaced a symlinked baseline
// with a file and widened its mode.
func TestCheckUpdateThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(checkResultsFile)
	require.NoError(t, err)
	target := filepath.Join(dir, "real-baseline.json")
	require.NoError(t, os.WriteFile(target, []byte("{}"), 0o600))
	link := filepath.Join(dir, "baseline.json")
	require.NoError(t, os.Symlink("real-baseline.json", link))
	code, _, errs := runCmd(t, "check", "--baseline", link, "--results", checkResultsFile, "--update")
	require.Equal(t, exitOK, code, errs)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the baseline is no longer a symlink: %v %v", fi.Mode(), err)
	}
	fi, err := os.Stat(target)
	require.NoError(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	if !strings.Contains(string(got), "coding-burst-1") || len(got) < len(good)/4 {
		t.Errorf("target not updated: %q", got)
	}
}

// TestBoundedFlags pins "-j -5 is accepted" and "unbounded --sessions runs
// out of memory": both are usage errors before any work.
func TestBoundedFlags(t *testing.T) {
	for _, args := range [][]string{
		{"compare", "-j", "-5", "--profile", "coding-burst"},
		{"compare", "-j", "0", "--profile", "coding-burst"},
		{"whatif", "-j", "-1", "testdata/breakeven-gaps.jsonl"},
		sweepArgs("-j", "-5", "-o", t.TempDir()),
		{"gen", "--profile", "coding-burst", "--sessions", "1000000000", "-o", t.TempDir()},
		{"compare", "--profile", "coding-burst", "--sessions", "1000000000"},
	} {
		code, _, errs := runCmd(t, args...)
		if code != exitUsage || !strings.Contains(errs, "want") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errs)
		}
	}
}

// TestHostileTreeEnds pins issue 10's blocked walk: a FIFO or a symlink
// to /dev/zero inside a log tree. Both are skipped with a warning naming
// them; a symlink out of the tree is skipped too.
func TestHostileTreeEnds(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	require.NoError(t, os.Mkdir(tree, 0o755))
	nativeWith(t, tree, "a", "")
	outside := nativeWith(t, dir, "b", "")
	require.NoError(t, syscall.Mkfifo(filepath.Join(tree, "fifo.jsonl"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(tree, "zero.jsonl")))
	require.NoError(t, os.Symlink(outside, filepath.Join(tree, "out.jsonl")))
	for _, args := range [][]string{
		{"compare", "--trace", tree},
		{"cost", tree},
		{"whatif", tree},
	} {
		var code int
		var errs string
		withDeadline(t, time.Minute, func() { code, _, errs = runCmd(t, args...) })
		if code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
		for _, want := range []string{traces.WarnSpecialFile, traces.WarnSymlinkOut} {
			if !strings.Contains(errs, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, errs)
			}
		}
	}
}

// TestSameSessionOnce pins "the same session counted twice": a trace
// given twice, or a directory and a file in it, is replayed once.
func TestSameSessionOnce(t *testing.T) {
	dir := t.TempDir()
	a := nativeWith(t, dir, "a", "")
	_, once, errs := runCmd(t, "compare", "--json", "--trace", a)
	require.NotEmpty(t, once, errs)
	for _, args := range [][]string{
		{"compare", "--json", "--trace", a, "--trace", a},
		{"compare", "--json", "--trace", dir, "--trace", a},
	} {
		code, out, errs := runCmd(t, args...)
		if code != exitOK || !strings.Contains(errs, traces.WarnDupSession) {
			t.Errorf("%v: exit %d, stderr lacks the duplicate warning:\n%s", args, code, errs)
		}
		var a, b results.Summary
		require.NoError(t, json.Unmarshal([]byte(out), &a))
		require.NoError(t, json.Unmarshal([]byte(once), &b))
		if !reflect.DeepEqual(a.Runs, b.Runs) || len(a.Warnings) != 1 || a.Warnings[0].Reason != traces.WarnDupSession {
			t.Errorf("%v: runs differ from the session given once, or warnings %+v lack the one duplicate", args, a.Warnings)
		}
	}
}

// TestWarningsEverywhere pins "warnings reach half the places promised":
// run, compare and whatif put them in --json and summary.json, and cost
// prints them on stderr with --json too.
func TestWarningsEverywhere(t *testing.T) {
	dir := t.TempDir()
	a := nativeWith(t, dir, "a", "")
	b, err := os.ReadFile(a)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "copy.jsonl"), b, 0o644)) // two files, one id
	out := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{
		{"run", "--json", "--trace", dir},
		{"compare", "--json", "--trace", a, "--trace", a, "-o", out},
		{"whatif", "--json", a, a},
		{"cost", "--json", a, a},
	} {
		code, stdout, errs := runCmd(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if !strings.Contains(errs, traces.WarnDupSession) {
			t.Errorf("%v: stderr lacks the warning: %q", args, errs)
		}
		var got struct {
			Warnings []traces.Warning `json:"warnings"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &got))
		if len(got.Warnings) != 1 || got.Warnings[0].Reason != traces.WarnDupSession {
			t.Errorf("%v: --json warnings %+v", args, got.Warnings)
		}
	}
	b, err = os.ReadFile(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	if !strings.Contains(string(b), traces.WarnDupSession) {
		t.Errorf("summary.json lacks the warning")
	}
}

// TestImportAllOrNothing pins "an id collision in import leaves a partial
// directory": two sessions whose ids map to one file name write nothing.
func TestImportAllOrNothing(t *testing.T) {
	src := t.TempDir()
	log := func(id string) {
		data := `{"type":"user","sessionId":"` + id + `","timestamp":"2026-02-10T21:00:00.000Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","sessionId":"` + id + `","requestId":"r` + id + `","timestamp":"2026-02-10T21:00:02.000Z","message":{"id":"m` + id + `","model":"claude-opus-4-6","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":5}}}
`
		require.NoError(t, os.WriteFile(filepath.Join(src, strings.ReplaceAll(id, " ", "-")+".jsonl"), []byte(data), 0o644))
	}
	log("a")
	log("x y")
	log("x_y")
	dst := filepath.Join(t.TempDir(), "out")
	code, _, errs := runCmd(t, "import", "claude-code", "-o", dst, src)
	if code != exitFailure || !strings.Contains(errs, "map to the same file") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("import left %s behind (%v)", dst, err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), "*"))
	if len(left) != 0 {
		t.Errorf("import left %v behind", left)
	}
	// Without the collision the set lands whole.
	require.NoError(t, os.Remove(filepath.Join(src, "x-y.jsonl")))
	code, _, errs = runCmd(t, "import", "claude-code", "-o", dst, src)
	files, _ := filepath.Glob(filepath.Join(dst, "*.jsonl"))
	if code != exitOK || len(files) != 2 {
		t.Errorf("exit %d, %d files: %s", code, len(files), errs)
	}
}

// TestStdoutWriteFails pins issue 27's "stdout that cannot be written
// exits 0" (`ctxsim version > /dev/full`, also validate, import, gen): a
// failed write of a command's main output is exit 1 with a message.
func TestStdoutWriteFails(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"version"},
		{"--help"},
		{"validate", "testdata/breakeven-gaps.jsonl"},
		{"import", "claude-code", ccShort, "-o", filepath.Join(dir, "imported")},
		{"gen", "--profile", "review", "-o", filepath.Join(dir, "gen")},
		{"cost", ccShort},
		{"policies"},
		{"run", "--trace", "testdata/breakeven-gaps.jsonl"},
	} {
		var errb bytes.Buffer
		code := run(args, strings.NewReader(""), &faultio.KillWriter{W: io.Discard}, &errb)
		if code != exitFailure || !strings.Contains(errb.String(), "write standard output: "+faultio.ErrKilled.Error()) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and the failed write", args, code, errb.String())
		}
	}
}

// TestNamesEscapedOnTerminal pins issue 27's terminal injection end to
// end: a session id, model name and file name with escape sequences and
// line breaks reach cost's table, its warnings and an error escaped, so
// nothing clears the screen, retitles the terminal or forges a line.
func TestNamesEscapedOnTerminal(t *testing.T) {
	dir := t.TempDir()
	log := `{"type":"user","sessionId":"s\u001b[2J\nctxsim: all clear","timestamp":"2026-02-10T21:00:00.000Z","message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"assistant","sessionId":"s\u001b[2J\nctxsim: all clear","requestId":"r1","timestamp":"2026-02-10T21:00:02.000Z","message":{"id":"m1","model":"claude\u001b]0;pwned\u0007","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"output_tokens":5}}}` + "\n"
	name := filepath.Join(dir, "log\x1b[31m\rctxsim: fine.jsonl")
	require.NoError(t, os.WriteFile(name, []byte(log), 0o644))
	empty := filepath.Join(dir, "state\x1b]0;x\x07.db")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	for _, args := range [][]string{{"cost", dir}, {"cost", "--format", "markdown", dir}, {"cost", "--format", "csv", dir}, {"cost", empty}, {"validate", name}} {
		_, out, errs := runCmd(t, args...)
		for _, s := range []string{out, errs} {
			if strings.ContainsAny(s, "\x1b\x07\r") {
				t.Errorf("%q: a control character reached the terminal:\n%q", args, s)
			}
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "ctxsim: all clear") || strings.HasPrefix(l, "ctxsim: fine") {
					t.Errorf("%q: a name forged a line: %q", args, l)
				}
			}
		}
	}
}

// TestNonFiniteFlags pins issue 27's numeric flags that are not finite
// numbers: gen --length NaN looped forever at 100 % CPU, breakeven
// --growth NaN|Inf and --long NaN printed "NaN%" and "+Inf%",
// --provider-error-rate NaN was accepted where 1 is refused. Each is a
// usage error naming the flag (or setting), before any work.
func TestNonFiniteFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"gen", "--profile", "review", "--length", "NaN", "-o", t.TempDir()}, "--length"},
		{[]string{"gen", "--profile", "review", "--length", "Inf", "-o", t.TempDir()}, "--length"},
		{[]string{"breakeven", "--growth", "NaN"}, "--growth"},
		{[]string{"breakeven", "--growth", "Inf"}, "--growth"},
		{[]string{"breakeven", "--long", "NaN"}, "--long"},
		{[]string{"breakeven", "--long", "1e999"}, "--long"},
		{[]string{"compare", "--profile", "review", "--provider-error-rate", "NaN"}, "--provider-error-rate"},
		{[]string{"compare", "--profile", "review", "--summarizer-fail-rate", "-Inf"}, "--summarizer-fail-rate"},
		{[]string{"check", "--baseline", checkResultsFile, "--results", checkResultsFile, "--tolerance", "cost=NaN%"}, "--tolerance"},
		{[]string{"compare", "--profile", "review", "--set", "compression.threshold=NaN"}, "compression.threshold"},
		// A setting in range alone but not for the model: max_tokens past
		// the window was dropped in silence (the threshold reserved none).
		{[]string{"compare", "--profile", "review", "--policy", "hermes-default", "--set", "model.max_tokens=5000000"}, "model.max_tokens"},
	} {
		var code int
		var errs string
		withDeadline(t, time.Minute, func() { code, _, errs = runCmd(t, c.args...) })
		if code != exitUsage || !strings.Contains(errs, c.flag) || !strings.Contains(errs, "want") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming %s", c.args, code, errs, c.flag)
		}
	}
}

// TestSweepGridBounded pins issue 27's unbounded sweep: a 1000 × 1000 grid
// grew past 4.3 GB in 20 s with no limit or warning. A grid over the
// documented 10,000 cells is a usage error before any point is made;
// --max-cells raises the limit, and counts tenants too.
func TestSweepGridBounded(t *testing.T) {
	values := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = strconv.Itoa(i + 1)
		}
		return strings.Join(v, ",")
	}
	huge := []string{"sweep", "--policy", "hermes-micro", "--profile", "review", "--sessions", "1",
		"--grid", "compression.micro_compact_every_n_turns=" + values(1000), "--grid", "compression.protect_first_n=" + values(1000)}
	var code int
	var errs string
	withDeadline(t, 30*time.Second, func() { code, _, errs = runCmd(t, huge...) })
	if code != exitUsage || !strings.Contains(errs, "1000 × 1000 grid points is over 10000 cells") || !strings.Contains(errs, "--max-cells") {
		t.Errorf("1000 × 1000 grid: exit %d, stderr %q", code, errs)
	}
	// Three points over two tenants are six cells: over --max-cells 5.
	small := []string{"sweep", "--policy", "hermes-micro", "--profile", "review", "--sessions", "2", "--grid", "compression.micro_compact_every_n_turns=1,2,5"}
	code, _, errs = runCmd(t, append(small, "--max-cells", "5")...)
	if code != exitUsage || !strings.Contains(errs, "3 grid points × 2 tenants is over 5 cells") {
		t.Errorf("--max-cells 5: exit %d, stderr %q", code, errs)
	}
	if code, _, errs = runCmd(t, append(small, "--max-cells", "6")...); code != exitOK {
		t.Errorf("--max-cells 6: exit %d, stderr %q", code, errs)
	}
}

// TestOverflowNotHidden pins issue 27's overflow hidden in what-if: with a
// window smaller than a recorded prompt (a --prices file can set one),
// whatif and fidelity showed the recorded column without the calls the
// replay could not send (n/a, or $0.10 where cost says $0.23, "within
// 2 %"). The recorded column is what the provider billed, as cost says;
// the calls that overflowed are flagged, never dropped.
func TestOverflowNotHidden(t *testing.T) {
	prices := filepath.Join(t.TempDir(), "small-window.json")
	// short.jsonl's floor is 25,339 tokens and its call's prompt 25,353.
	require.NoError(t, os.WriteFile(prices, []byte(`{"claude-opus-4-6": {"input_cost_per_token": 5e-6, "output_cost_per_token": 2.5e-5,
		"cache_read_input_token_cost": 5e-7, "cache_creation_input_token_cost": 6.25e-6, "max_input_tokens": 25345, "litellm_provider": "anthropic"}}`), 0o644))
	code, out, errs := runCmd(t, "cost", "--json", "--prices", prices, ccShort)
	require.Equal(t, exitOK, code, errs)
	var c costJSON
	require.NoError(t, json.Unmarshal([]byte(out), &c))
	require.Greater(t, c.Totals.CostUSD, 0.1)

	code, out, errs = runCmd(t, "whatif", "--json", "--no-hindsight", "--prices", prices, ccShort)
	require.Equal(t, exitOK, code, errs)
	var w struct {
		Totals struct {
			RecordedUSD    *float64 `json:"recorded_usd"`
			ReplayUnbilled int      `json:"replay_unbilled_calls"`
			Best           string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &w))
	if w.Totals.RecordedUSD == nil || math.Abs(*w.Totals.RecordedUSD-c.Totals.CostUSD) > 1e-6 || w.Totals.ReplayUnbilled == 0 || w.Totals.Best != "" {
		t.Errorf("whatif totals %+v (recorded %v), want cost's $%v and the overflow flagged", w.Totals, w.Totals.RecordedUSD, c.Totals.CostUSD)
	}
	_, text, _ := runCmd(t, "whatif", "--no-hindsight", "--prices", prices, ccShort)
	if !strings.Contains(text, " !") || !strings.Contains(text, "overflowed the context window") {
		t.Errorf("whatif's table does not flag the overflow:\n%s", text)
	}

	code, out, errs = runCmd(t, "fidelity", "--json", "--prices", prices, ccShort)
	require.Equal(t, exitOK, code, errs)
	var f struct {
		Sessions []struct {
			RecordedUSD float64 `json:"recorded_usd"`
			ErrorPct    float64 `json:"error_pct"`
			Unbilled    int     `json:"unbilled_calls"`
			Cause       string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	if len(f.Sessions) != 1 || math.Abs(f.Sessions[0].RecordedUSD-c.Totals.CostUSD) > 1e-6 || math.Abs(f.Sessions[0].ErrorPct) <= 2 ||
		f.Sessions[0].Unbilled == 0 || f.Sessions[0].Cause != results.CauseUnbilled {
		t.Errorf("fidelity sessions %+v, want the bill ($%v), the error and the overflow", f.Sessions, c.Totals.CostUSD)
	}
}

// TestUnreadFileNotClean pins issue 27's clean-looking empty result: cost
// of a file whose every line was skipped printed a $0.00 total and exited
// 0, and every command reading logs went on past such a file, exit 0. The
// file is a failure now: named on stderr and in --json (validate names it
// on stdout, as every problem), exit 1.
func TestUnreadFileNotClean(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.jsonl")
	require.NoError(t, os.WriteFile(junk, []byte("garbage\n{\"bad\": \nnot json\n"), 0o644))
	short, err := os.ReadFile(ccShort)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "short.jsonl"), short, 0o644))
	for _, args := range [][]string{
		{"cost", junk},
		{"cost", "--json", junk},
		{"cost", "--json", ccShort, junk},
		{"cost", "--from", "codex", junk},
		{"cost", "--from", "chatlog", junk},
		{"cost", "--from", "hermes", junk},
		{"run", "--json", "--policy", "recorded", "--trace", dir},
		{"compare", "--json", "--policy", "recorded", "--trace", ccShort, "--trace", junk},
		{"whatif", "--json", "--policies", "ttl-1h", ccShort, junk},
		{"fidelity", ccShort, junk},
		{"fidelity", "--json", ccShort, junk},
		{"validate", junk},
	} {
		code, stdout, errs := runCmd(t, args...)
		if code != exitFailure || !strings.Contains(errs+stdout, junk) {
			t.Errorf("%v: exit %d, stderr %q; want 1, naming the file", args, code, errs)
		}
		if args[1] != "--json" {
			continue
		}
		var got struct {
			Warnings []traces.Warning `json:"warnings"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &got), "%v", args)
		if !slices.Contains(got.Warnings, traces.Warning{Reason: traces.WarnUnreadFile, Count: 1, First: junk}) {
			t.Errorf("%v: --json warnings %+v lack the unread file", args, got.Warnings)
		}
	}
}

// A sharded run over a log none of whose lines could be read fails as the
// unsharded one does: each shard exits 1, and so does their merge (it
// exited 0, the failure carried by no shard file).
func TestUnreadFileShardedMerge(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.jsonl")
	require.NoError(t, os.WriteFile(junk, []byte("garbage\n"), 0o644))
	for _, args := range [][]string{
		{"fidelity", "../../testdata/claude-code", junk},
		{"whatif", "--policies", "ttl-1h", "../../testdata/claude-code", junk},
	} {
		code, _, _ := runCmd(t, args...)
		require.Equal(t, exitFailure, code, "%v unsharded", args)
		var dirs []string
		for k := 1; k <= 2; k++ {
			d := filepath.Join(dir, fmt.Sprintf("%s-%d", args[0], k))
			code, _, errs := runCmd(t, append(args, "--shard", fmt.Sprintf("%d/2", k), "--out", d)...)
			require.Equal(t, exitFailure, code, "%v shard %d: %s", args, k, errs)
			dirs = append(dirs, d)
		}
		code, _, errs := runCmd(t, append([]string{"merge", "--out", filepath.Join(dir, args[0]+"-merged")}, dirs...)...)
		if code != exitFailure || !strings.Contains(errs, "could not be loaded") {
			t.Errorf("merge of %v: exit %d, stderr %q; want 1 as the unsharded run", args, code, errs)
		}
	}
}
