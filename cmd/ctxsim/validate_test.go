package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/stretchr/testify/require"
)

func TestImportThenValidate(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd(t, "import", "claude-code", ccDir, "-o", dir)
	require.Equal(t, exitOK, code, errs)
	if !strings.Contains(out, "6 sessions from claude-code") || !strings.Contains(out, "(281 events, 139 calls)") {
		t.Errorf("import output:\n%s", out)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	require.NoError(t, err)
	if len(files) != 6 {
		t.Fatalf("wrote %d files, want 6", len(files))
	}
	code, out, errs = runCmd(t, append([]string{"validate"}, files...)...)
	if code != exitOK || strings.Count(out, ": OK: ") != 6 {
		t.Errorf("validate: exit %d\n%s%s", code, out, errs)
	}
	// No temporary files are left behind.
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestValidateBad(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format":"ctxsim-trace","version":1,"session":{"id":"s"}}
{"t":"2026-01-01T00:00:05Z","kind":"user","blocks":[{"type":"text","text":"hi"}]}
{"t":"2026-01-01T00:00:01Z","kind":"tool_result","blocks":[{"type":"tool_result","id":"x"}]}
`), 0o644))
	broken := filepath.Join(dir, "broken.jsonl")
	require.NoError(t, os.WriteFile(broken, []byte("{\"format\":\"ctxsim-trace\",\"version\":1,\"session\":{\"id\":\"s\"}}\n{oops\n"), 0o644))
	code, out, _ := runCmd(t, "validate", bad, broken)
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	for _, want := range []string{
		bad + ":3: time 2026-01-01T00:00:01.000Z is before the previous event's",
		bad + ":3: block 0: tool_result for x has no earlier tool_use",
		broken + ":2: event:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
}

// --json gives each file's verdict, in the order given.
func TestValidateJSON(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCmd(t, "import", "claude-code", "../../testdata/claude-code/tool_heavy.jsonl", "-o", dir)
	require.Equal(t, exitOK, code, errs)
	good := dir + "/d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl"
	code, out, _ := runCmd(t, "validate", "--json", dir+"/missing.jsonl", good)
	if code != exitFailure {
		t.Errorf("exit %d, want %d for a missing file", code, exitFailure)
	}
	var rep struct {
		Files []traces.FileCheck `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	if len(rep.Files) != 2 || rep.Files[0].OK || !rep.Files[1].OK || rep.Files[1].Calls != 4 || rep.Files[1].BilledCalls != 4 {
		t.Errorf("verdicts %+v", rep.Files)
	}
}
