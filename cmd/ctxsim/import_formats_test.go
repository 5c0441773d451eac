package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/report"
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
			if tc.format == "chatlog" && !strings.Contains(readFile(t, files[0]), "timing is synthetic") {
				t.Errorf("chatlog trace does not say its timing is synthetic")
			}
		})
	}
}

// TestImportJSON: --json lists every file written, with its counts, and the
// read's counted warnings; the text of the warnings does not go to stderr.
func TestImportJSON(t *testing.T) {
	dir := t.TempDir()
	// A log with a line cut short, for a warning to report: short.jsonl
	// as another session.
	bad := filepath.Join(t.TempDir(), "cut.jsonl")
	short := strings.ReplaceAll(readFile(t, "../../testdata/claude-code/short.jsonl"), "55604662-cf2a", "55604662-0000")
	if err := os.WriteFile(bad, []byte(strings.Replace(short, "\n", "\n{\"type\":\"user\",\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"import", "claude-code", "--json", "-o", dir, "../../testdata/claude-code", bad}, nil, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errb.String())
	}
	var got struct {
		Written  []report.Written `json:"written"`
		Warnings []traces.Warning `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out.String())
	}
	// One warning channel (issue 10): the same warnings on stderr as in
	// the JSON.
	var stderrWant traces.Warnings
	for _, w := range got.Warnings {
		for range w.Count {
			stderrWant.AddPlace(w.First, w.Reason)
		}
	}
	if len(got.Warnings) == 0 || errb.String() != stderrWant.String() {
		t.Errorf("stderr = %q, want the JSON's warnings %+v", errb.String(), got.Warnings)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(got.Written) != len(files) || len(files) == 0 {
		t.Fatalf("listed %d written files, dir has %d", len(got.Written), len(files))
	}
	for _, w := range got.Written {
		s, err := traces.ReadSession(strings.NewReader(readFile(t, w.File)), w.File)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		for _, e := range s.Events {
			if e.Kind == traces.Assistant {
				calls++
			}
		}
		if s.ID != w.ID || len(s.Events) != w.Events || calls != w.Calls {
			t.Errorf("%s: listed id %s, %d events, %d calls; file has %s, %d, %d",
				w.File, w.ID, w.Events, w.Calls, s.ID, len(s.Events), calls)
		}
	}
	// The testdata logs import clean: the cut line is the one warning.
	if len(got.Warnings) != 1 || got.Warnings[0].Count != 1 || got.Warnings[0].First != bad+":2" {
		t.Errorf("warnings = %+v, want the one cut line at %s:2", got.Warnings, bad)
	}
}
