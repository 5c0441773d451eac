package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// record runs the command after "--" with the base URLs set, stops when
// it exits and passes its failure on; the capture file exists either way.
func TestRecordCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "capture.jsonl")
	code, _, errs := runCmd(t, "record", "-o", file, "--listen", "127.0.0.1:0", "--", "sh", "-c", `test -n "$ANTHROPIC_BASE_URL" && case "$OPENAI_BASE_URL" in http://127.0.0.1:*/v1) exit 3;; esac`)
	if code != exitFailure || !strings.Contains(errs, "sh exited with 3") || !strings.Contains(errs, "recorded 0 pairs") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(file); err != nil {
		t.Error(err)
	}
	if code, _, errs := runCmd(t, "record", "--", "true"); code != exitUsage || !strings.Contains(errs, "-o FILE") {
		t.Errorf("no -o: exit %d: %s", code, errs)
	}
}
