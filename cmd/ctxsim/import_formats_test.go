package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

// TestImportOtherFormats runs `ctxsim import` on each importer's fixture and
// reads the written traces back with the native reader.
func TestImportOtherFormats(t *testing.T) {
	for _, tc := range []struct {
		format, path string
		sessions     int
	}{
		{"codex", "../../traces/codex/testdata/sessions", 1},
		{"hermes", "../../traces/hermes/testdata/export.jsonl", 2},
		{"chatlog", "../../traces/chatlog/testdata/swe-agent.jsonl", 2},
	} {
		t.Run(tc.format, func(t *testing.T) {
			dir := t.TempDir()
			var out, errb bytes.Buffer
			code := run([]string{"import", tc.format, tc.path, "-o", dir}, nil, &out, &errb)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			if len(files) != tc.sessions {
				t.Fatalf("wrote %d traces, want %d (stdout %s)", len(files), tc.sessions, out.String())
			}
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				s, err := traces.ReadSession(bytes.NewReader(b), f)
				if err != nil {
					t.Errorf("%s: %v", f, err)
					continue
				}
				if s.Format != tc.format {
					t.Errorf("%s: format %q, want %q", f, s.Format, tc.format)
				}
			}
			if tc.format == "chatlog" && !strings.Contains(readAll(t, files[0]), "timing is synthetic") {
				t.Errorf("chatlog trace does not say its timing is synthetic")
			}
		})
	}
}

func readAll(t *testing.T, f string) string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
