package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/stretchr/testify/require"
)

// Tables fit COLUMNS; tests that want a width set it themselves.
func init() { os.Unsetenv("COLUMNS") }

// update is the one -update flag of this package's golden tests.
var update = flag.Bool("update", false, "rewrite golden files")

// goldenFile compares got with testdata/name, or rewrites it under -update.
func goldenFile(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// readFile is a file the test needs, as text.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// run runs the command line args in-process with the given streams and
// returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runEnv(&env{ctx: context.Background(), stdin: stdin, stdout: stdout, stderr: stderr}, args)
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// Every command answers --help on stdout with exit 0, a usage line and
// examples; an unknown command or flag is a usage error (exit 2).
func TestHelp(t *testing.T) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		code, out, errs := runCmd(t, n, "--help")
		if code != exitOK || errs != "" {
			t.Errorf("%s --help: exit %d, stderr %q", n, code, errs)
		}
		if !strings.HasPrefix(out, "Usage: ctxsim "+n) || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help lacks a usage line or examples:\n%s", n, out)
		}
	}
	_, out, _ := runCmd(t, "import", "--help")
	for _, n := range formats.LogNames() {
		if !strings.Contains(out, "\n  "+n+" ") {
			t.Errorf("import --help does not list the %s format:\n%s", n, out)
		}
	}
	code, out, _ := runCmd(t, "help")
	if code != exitOK || !strings.Contains(out, "compare") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	if code, _, _ := runCmd(t, "no-such-command"); code != exitUsage {
		t.Errorf("unknown command: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runCmd(t, "compare", "--no-such-flag"); code != exitUsage {
		t.Errorf("unknown flag: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runCmd(t); code != exitUsage {
		t.Errorf("no arguments: exit %d, want %d", code, exitUsage)
	}
}

// A cancelled context (SIGINT in main) stops a command: exit 1, no output,
// "interrupted" on stderr.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"compare", "--profile", "cron", "--sessions", "1"},
		{"whatif", "../../testdata/claude-code/short.jsonl"},
		{"sweep", "--policy", "hermes-default", "--profile", "cron", "--sessions", "1", "--grid", "prompt_caching.cache_ttl=5m,1h"},
		// The readers and solvers take the context too: a large cost scan
		// (claudecode.ScanUsage), an import, the synthetic generator, the
		// hindsight optimum and merge stop at Ctrl-C (each printed its
		// report or output regardless before).
		{"cost", "../../testdata/claude-code"},
		{"cost", "--from", "claude-code", "../../testdata/claude-code"},
		{"fidelity", "../../testdata/claude-code"},
		{"breakeven", "--hindsight", "../../testdata/claude-code"},
		{"gen", "--profile", "cron", "-o", t.TempDir()},
		{"import", "claude-code", "../../testdata/claude-code", "-o", t.TempDir()},
	} {
		var out, errb bytes.Buffer
		code := runEnv(&env{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, args)
		if code != exitFailure || out.Len() != 0 || errb.String() != "ctxsim "+args[0]+": interrupted\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and only \"interrupted\"", args[0], code, out.String(), errb.String())
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errb strings.Builder
		if code := run(args, strings.NewReader(""), &out, &errb); code != exitOK {
			t.Fatalf("%v: exit %d, stderr %s", args, code, errb.String())
		}
		if !strings.HasPrefix(out.String(), "ctxsim ") || !strings.Contains(out.String(), "go1.") {
			t.Errorf("%v: %q, want \"ctxsim VERSION … goVERSION\"", args, out.String())
		}
	}
	// The line's form is ctxsim.TestBuild's.
}

// TestTablesFitColumns: with COLUMNS=100 every line a command prints fits
// 100 columns (Fit abbreviates, drops and wraps); --wide prints all.
func TestTablesFitColumns(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	cmds := [][]string{
		{"cost", "--timezone", "UTC", ccDir},
		{"cost", "--by", "day", "--timezone", "UTC", ccDir},
		{"compare", "--trace", ccShort},
		{"compare", "--trace", ccDir, "--policy", "hermes-default", "--policy", "prune-on-resume", "--policy", "masking-sliding"},
		{"whatif", ccShort},
		{"breakeven", "--model", "claude-opus-4-6"},
		{"policies"},
		{"policies", "--keys"},
		{"run", "--trace", ccShort, "--policy", "claude-code"},
		{"sweep", "--policy", "hermes-micro", "--profile", "cron", "--sessions", "1", "--grid", "compression.micro_compact_every_n_turns=1,2", "--grid", "prompt_caching.cache_ttl=5m,1h"},
		{"fidelity", ccDir},
		{"check", "--baseline", "../../testdata/baseline.json"},
		{"gen", "--list"},
		{"breakeven", ccDir},
	}
	for _, args := range cmds {
		code, out, errs := runCmd(t, args...)
		require.Equal(t, exitOK, code, "%v: %s", args, errs)
		for _, l := range strings.Split(out, "\n") {
			if n := len([]rune(l)); n > 100 {
				t.Errorf("%v: %d columns: %q", args, n, l)
			}
		}
	}
	_, wide, _ := runCmd(t, "cost", "--wide", "--timezone", "UTC", ccDir)
	require.Contains(t, wide, "4d5611e5-241a-462a-8d15-5122611a9569  claude-opus-4-6", "--wide: full ids and every column")
	_, narrow, _ := runCmd(t, "cost", "--timezone", "UTC", ccDir)
	require.Contains(t, narrow, "hidden to fit 100 columns; --wide shows all")
}

// TestPositionalTraces: in compare, run and sweep a PATH argument is the
// same as --trace PATH: the same bytes out.
func TestPositionalTraces(t *testing.T) {
	for _, c := range [][]string{
		{"compare", "--policy", "hermes-default", "--policy", "prune-on-resume"},
		{"run", "--policy", "claude-code"},
		{"sweep", "--policy", "hermes-default", "--grid", "prompt_caching.cache_ttl=5m,1h"},
	} {
		code, byFlag, errs := runCmd(t, append(slices.Clone(c), "--trace", ccShort)...)
		require.Equal(t, exitOK, code, "%v --trace: %s", c, errs)
		code, byArg, errs := runCmd(t, append(slices.Clone(c), ccShort)...)
		require.Equal(t, exitOK, code, "%v PATH: %s", c, errs)
		require.Equal(t, byFlag, byArg, c[0])
		require.Contains(t, byArg, "55604662", c[0])
	}
	code, _, errs := runCmd(t, "run", ccShort, ccBig)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "want exactly one trace")
}

// TestPolicyAlias: --policies a,b is --policy a --policy b, in compare and
// whatif alike.
func TestPolicyAlias(t *testing.T) {
	for _, c := range [][]string{{"compare", "--trace", ccShort}, {"whatif", ccShort}} {
		code, a, errs := runCmd(t, append(slices.Clone(c), "--policy", "ttl-1h", "--policy", "prune-on-resume")...)
		if c[0] == "compare" {
			code, a, errs = runCmd(t, append(slices.Clone(c), "--policy", "hermes-default", "--policy", "prune-on-resume")...)
		}
		require.Equal(t, exitOK, code, "%v: %s", c, errs)
		alias := "ttl-1h,prune-on-resume"
		if c[0] == "compare" {
			alias = "hermes-default,prune-on-resume"
		}
		code, b, errs := runCmd(t, append(slices.Clone(c), "--policies", alias)...)
		require.Equal(t, exitOK, code, "%v: %s", c, errs)
		require.Equal(t, a, b, c[0])
		require.Contains(t, b, "prune-on-resume")
	}
}

// TestFormatEverywhere: every command that prints takes --format and
// --json; for gen, import and validate --format json is --json.
func TestFormatEverywhere(t *testing.T) {
	for n := range commands {
		_, help, _ := runCmd(t, n, "--help")
		if n == "version" {
			continue
		}
		if !strings.Contains(help, "--format") || !strings.Contains(help, "--json") {
			t.Errorf("%s --help lacks --format or --json", n)
		}
	}
	_, a, _ := runCmd(t, "gen", "--list", "--json")
	_, b, _ := runCmd(t, "gen", "--list", "--format", "json")
	require.Equal(t, a, b)
	require.True(t, strings.HasPrefix(b, "["))
}

// A log whose sessions never called the model costs nothing: the replay
// commands say so and exit 0 (issue 9); an empty directory is an error.
func TestNothingToReplay(t *testing.T) {
	dir := t.TempDir()
	line := `{"type":"user","sessionId":"nc1","uuid":"u1","timestamp":"2026-02-10T21:00:00.000Z","message":{"role":"user","content":"hi"}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nc1.jsonl"), []byte(line), 0o644))
	for _, args := range [][]string{{"run", "--trace", filepath.Join(dir, "nc1.jsonl")}, {"whatif", dir}, {"fidelity", dir}, {"compare", dir}} {
		code, _, stderr := runCmd(t, args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
		require.Contains(t, stderr, "nothing to replay: 1 session(s), none with a model call", args)
		require.Contains(t, stderr, traces.WarnNoCall, args)
	}
	code, _, stderr := runCmd(t, "whatif", t.TempDir())
	require.Equal(t, exitFailure, code, stderr)
}
