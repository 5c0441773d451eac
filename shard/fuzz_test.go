package shard

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

// refusedAt fails t unless err names file and a line of data.
func refusedAt(t *testing.T, err error, file string, data []byte) {
	t.Helper()
	var se *traces.SyntaxError
	if !errors.As(err, &se) || se.File != file || se.Line < 1 || se.Line > bytes.Count(data, []byte{'\n'})+1 {
		t.Fatalf("refused without naming %s and a line of it: %v", file, err)
	}
}

// FuzzReadManifest reads any bytes as a shard's manifest.json: what is
// refused names the file and a line; what is read, written back, reads
// back equal.
func FuzzReadManifest(f *testing.F) {
	dir := f.TempDir()
	m := Manifest{Version: "v", Command: "compare", Shard: "1/2", Seed: 7, Flags: []string{"provider=auto"}, Inputs: []Input{{"suite", "abc"}},
		Render: json.RawMessage(`{"policies":["a"]}`), Files: map[string]string{CellsFile: "00"}, Warnings: []traces.Warning{{Reason: "r", Count: 1, First: "f:1"}}}
	if err := WriteManifest(dir, m); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"seed": 7`), []byte(`"seed": 8`), 1))
	f.Add([]byte(`{"format":"ctxsim-shard/1","shard":"1/2"}`))
	f.Add([]byte("{\n  \"format\": \"ctxsim-shard/2\",\n  \"shard\": \"3/2\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := readManifest(data, ManifestFile)
		if err != nil {
			refusedAt(t, err, ManifestFile, data)
			return
		}
		dir := t.TempDir()
		if err := WriteManifest(dir, m); err != nil {
			t.Fatal(err)
		}
		back, err := ReadManifest(dir)
		if err != nil {
			t.Fatalf("read, written back, refused: %v", err)
		}
		// Render is raw JSON: written back indented, compare it compacted.
		for _, x := range []*Manifest{&m, &back} {
			var b bytes.Buffer
			if len(x.Render) > 0 && json.Compact(&b, x.Render) == nil {
				x.Render = b.Bytes()
			}
		}
		if !reflect.DeepEqual(m, back) {
			t.Fatalf("read %+v\nwritten back and read %+v", m, back)
		}
	})
}

// FuzzReadEntries reads any bytes as a shard's shard-cells.jsonl: what is
// refused names the file and a line; what is read, written back, reads
// back equal.
func FuzzReadEntries(f *testing.F) {
	dir := f.TempDir()
	if err := WriteEntries(dir, []Entry{{Order: []int{0, 1}, Unit: "t", Runs: json.RawMessage(`[{"trace":"t","policy":"p"}]`), Records: 2},
		{Order: []int{1}, Unit: "u", Data: json.RawMessage(`{"tenant":"u"}`)}}); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, CellsFile))
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"records":2`), []byte(`"records":-5`), 1))
	f.Add([]byte("{\"order\":[1]}\n{bad\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, CellsFile)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		es, err := readEntries(p)
		if err != nil {
			refusedAt(t, err, p, data)
			return
		}
		if err := WriteEntries(dir, es); err != nil {
			t.Fatal(err)
		}
		back, err := readEntries(p)
		if err != nil {
			t.Fatalf("read, written back, refused: %v", err)
		}
		if len(es) != len(back) || len(es) > 0 && !reflect.DeepEqual(es, back) {
			t.Fatalf("read %+v\nwritten back and read %+v", es, back)
		}
	})
}
