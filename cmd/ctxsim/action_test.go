package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// actionTools is what running the Action's script needs: bash and a
// built ctxsim (the test skips without bash, and under -short).
func actionTools(t *testing.T) (bash, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds ctxsim")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if bin, err = ctxsimBin(); err != nil {
		t.Fatal(err)
	}
	return bash, bin
}

// TestActionScript runs the GitHub Action's step (scripts/action-check.sh,
// which action.yml runs after installing ctxsim) as the runner would, on
// a committed capture: a baseline of the same build passes and writes the
// job summary; a baseline that cost half as much fails the job with exit 1.
func TestActionScript(t *testing.T) {
	bash, bin := actionTools(t)
	dir := t.TempDir()
	capture, _ := filepath.Abs("../../traces/capture/testdata/claude-tap-claude.json")
	script, _ := filepath.Abs("../../scripts/action-check.sh")
	summary, output := filepath.Join(dir, "summary.md"), filepath.Join(dir, "output")
	out := filepath.Join(dir, "ctxsim-out")
	baseline := filepath.Join(dir, "baseline.json")
	run := func() (int, string) {
		cmd := exec.Command(bash, script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CTXSIM="+bin, "CTXSIM_TRACES="+capture, "CTXSIM_BASELINE="+baseline,
			"CTXSIM_FROM=capture", "CTXSIM_POLICY=recorded claude-code", "CTXSIM_TOLERANCE=cost=0.5%", "CTXSIM_OUT="+out,
			"GITHUB_STEP_SUMMARY="+summary, "GITHUB_OUTPUT="+output)
		b, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(b)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(b)
	}
	// The baseline is this build's own results (ctxsim check --update).
	if code, msg := run(); code == exitOK || !strings.Contains(msg, "create it with --update") {
		t.Fatalf("no baseline yet: exit %d: %s", code, msg)
	}
	if b, err := exec.Command(bin, "check", "--baseline", baseline, "--results", filepath.Join(out, "summary.json"), "--update").CombinedOutput(); err != nil {
		t.Fatalf("check --update: %v: %s", err, b)
	}
	if code, msg := run(); code != exitOK {
		t.Fatalf("same build: exit %d: %s", code, msg)
	}
	md, _ := os.ReadFile(summary)
	o, _ := os.ReadFile(output)
	if !strings.Contains(string(md), "claude-tap-claude-2") || !strings.Contains(string(o), "summary="+filepath.Join(out, "check.md")) {
		t.Errorf("job summary:\n%s\noutput: %s", md, o)
	}
	// A baseline that cost half as much: the replay now costs more.
	b, _ := os.ReadFile(baseline)
	cost := regexp.MustCompile(`("cost_usd": )([0-9.e-]+)`)
	half := cost.ReplaceAllStringFunc(string(b), func(m string) string {
		p := cost.FindStringSubmatch(m)
		v, _ := strconv.ParseFloat(p[2], 64)
		return p[1] + strconv.FormatFloat(v/2, 'g', -1, 64)
	})
	if err := os.WriteFile(baseline, []byte(half), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := run(); code != exitFailure || !strings.Contains(msg, "regress") {
		t.Errorf("cheaper baseline: exit %d, want 1: %s", code, msg)
	}
	if md2, _ := os.ReadFile(summary); len(md2) <= len(md) {
		t.Error("the failing run wrote no job summary")
	}
}

// TestActionScriptDefaultPolicy: with no policy given, the Action replays a
// capture as sent (the harness's own markers are its baseline: recorded
// re-plans them with Claude Code's layout) and Claude Code logs under
// recorded, telling a capture apart with or without from: capture.
func TestActionScriptDefaultPolicy(t *testing.T) {
	bash, bin := actionTools(t)
	capture, _ := filepath.Abs("../../traces/capture/testdata/claude-tap-claude.json")
	logs, _ := filepath.Abs("../../testdata/claude-code")
	script, _ := filepath.Abs("../../scripts/action-check.sh")
	for _, c := range []struct {
		name, traces, from, want string
	}{
		{"capture", capture, "capture", "as-sent"},
		{"capture detected", capture, "", "as-sent"},
		{"logs", logs, "", "recorded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			cmd := exec.Command(bash, script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CTXSIM="+bin, "CTXSIM_TRACES="+c.traces, "CTXSIM_BASELINE="+filepath.Join(dir, "baseline.json"),
				"CTXSIM_FROM="+c.from, "CTXSIM_POLICY=", "CTXSIM_OUT="+out)
			b, _ := cmd.CombinedOutput() // no baseline yet: exit 2, after the replay
			sum, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatalf("no summary: %v: %s", err, b)
			}
			pols := map[string]bool{}
			for _, m := range regexp.MustCompile(`"policy": "([^"]+)"`).FindAllStringSubmatch(string(sum), -1) {
				pols[m[1]] = true
			}
			if len(pols) != 1 || !pols[c.want] {
				t.Errorf("policies replayed %v, want only %s", pols, c.want)
			}
		})
	}
}
