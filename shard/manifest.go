package shard

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"

	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/internal/atomicfile"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/internal/sumline"
	"github.com/ctxsim/ctxsim/traces"
)

// Format names the layout of manifest.json and cells.jsonl.
const Format = "ctxsim-shard/2"

// File names in a shard's output directory, beside the command's own
// outputs (summary.json, records.jsonl, ...).
const (
	ManifestFile = "manifest.json"
	CellsFile    = "shard-cells.jsonl"
	RecordsFile  = "records.jsonl"
)

// A Manifest says which run a shard's output belongs to. Shards of one run
// have equal manifests but for Shard.
type Manifest struct {
	Format string `json:"format"`
	// Version is the ctxsim build that wrote it: shards of different
	// builds may disagree, so they do not merge.
	Version string `json:"version"`
	// Command is the subcommand (compare, sweep, whatif, fidelity, cost).
	Command string `json:"command"`
	// Shard is "K/N".
	Shard string `json:"shard"`
	Seed  uint64 `json:"seed"`
	// Flags are every command-line flag that can change a result or the
	// printed table, as name=value in flag order; the command leaves out
	// those that only say where and how output goes.
	Flags []string `json:"flags"`
	// Inputs are the hashes of what was read, named by the command (its
	// trace paths' files, a price file, the embedded suite).
	Inputs []Input `json:"inputs"`
	// Render is what the command needs besides the cells to print its
	// table (policy order, titles); opaque to this package.
	Render json.RawMessage `json:"render,omitempty"`
	// Files are the xxhash64 (hex) of the shard's own files as written
	// (CellsFile, RecordsFile when there is one), so that a line added to
	// or removed from either is refused at merge; each line of CellsFile
	// and the manifest itself carry a checksum too (sumline).
	Files map[string]string `json:"files,omitempty"`
	// Warnings are what reading the inputs skipped or repaired, for the
	// merged summary.json and report. Not compared: shards read the same
	// inputs, so their warnings match (cost's shards scan different files:
	// here only what the walk skipped, the scans' warnings in the cells).
	Warnings []traces.Warning `json:"warnings,omitempty"`
	// Failed is how many sessions reading the inputs dropped whole
	// (traces.Warnings.Failed: a log none of whose lines could be read),
	// for the merged run to exit 1 on them as the unsharded one does. Not
	// compared, like Warnings.
	Failed int `json:"failed,omitempty"`
}

// An Input is one thing a run read, and the hash of its content.
type Input struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

// An Entry is one finished work item (a cell of the run) of a shard, a
// line of shard-cells.jsonl.
type Entry struct {
	// Order is the cell's position in the unsharded run, compared
	// lexicographically (for compare: policy index, then the tenant's
	// first session in load order).
	Order []int `json:"order"`
	// Unit is the identity the cell was assigned by.
	Unit string `json:"unit"`
	// Runs are the cell's rows of summary.json, as the command encoded
	// them (a JSON array; opaque to this package).
	Runs json.RawMessage `json:"runs,omitempty"`
	// Records is how many lines of records.jsonl the cell wrote, after the
	// previous cell's.
	Records int `json:"records"`
	// Data is whatever else the command needs to rebuild its outputs.
	Data json.RawMessage `json:"data,omitempty"`
}

// WriteManifest writes dir/manifest.json atomically, sealed with its
// checksum (sumline).
func WriteManifest(dir string, m Manifest) error {
	m.Format = Format
	b, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		b, err = sumline.Seal(b)
	}
	if err != nil {
		return err
	}
	return atomicfile.WriteFunc(filepath.Join(dir, ManifestFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	b, err := atomicfile.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, fmt.Errorf("%s: no %s: not the output directory of a shard", dir, ManifestFile)
	}
	if err != nil {
		return Manifest{}, err
	}
	return readManifest(b, p)
}

// readManifest reads manifest.json's bytes b, named p: what is refused
// is p:line: why (the object's first line when no other is to blame).
func readManifest(b []byte, p string) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, traces.JSONError(p, b, err)
	}
	bad := func(format string, args ...any) (Manifest, error) {
		return Manifest{}, &traces.SyntaxError{File: p, Line: traces.LineAt(b, int64(bytes.IndexByte(b, '{'))), Msg: fmt.Sprintf(format, args...)}
	}
	if m.Format != Format {
		return bad("format %q, want %q", m.Format, Format)
	}
	if err := sumline.Check(b); err != nil {
		return bad("%v", err)
	}
	if _, err := Parse(m.Shard); err != nil || m.Shard == "" {
		return bad("shard %q: want K/N", m.Shard)
	}
	return m, nil
}

// WriteEntries writes dir/shard-cells.jsonl atomically, one entry a line,
// each sealed with its checksum (sumline).
func WriteEntries(dir string, entries []Entry) error {
	return atomicfile.WriteFunc(filepath.Join(dir, CellsFile), func(w io.Writer) error {
		enc := sumline.NewWriter(w)
		for i := range entries {
			if err := enc.Encode(&entries[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// diff says how b differs from a (both of one run), or "".
func (a Manifest) diff(b Manifest) string {
	switch {
	case a.Version != b.Version:
		return fmt.Sprintf("ctxsim version %q vs %q", a.Version, b.Version)
	case a.Command != b.Command:
		return fmt.Sprintf("command %q vs %q", a.Command, b.Command)
	case a.Seed != b.Seed:
		return fmt.Sprintf("seed %d vs %d", a.Seed, b.Seed)
	}
	if !slices.Equal(a.Flags, b.Flags) {
		fa, fb := flagMap(a.Flags), flagMap(b.Flags)
		for _, f := range append(slices.Clone(a.Flags), b.Flags...) {
			k, _, _ := strings.Cut(f, "=")
			if fa[k] != fb[k] {
				return fmt.Sprintf("--%s %q vs %q", k, fa[k], fb[k])
			}
		}
		return "the flags differ"
	}
	if !slices.Equal(a.Inputs, b.Inputs) {
		ia, ib := map[string]string{}, map[string]string{}
		for _, in := range a.Inputs {
			ia[in.Name] = in.Hash
		}
		for _, in := range b.Inputs {
			ib[in.Name] = in.Hash
		}
		for _, in := range append(slices.Clone(a.Inputs), b.Inputs...) {
			if ia[in.Name] != ib[in.Name] {
				return fmt.Sprintf("input %s hashes %q vs %q", in.Name, ia[in.Name], ib[in.Name])
			}
		}
		return "the inputs differ"
	}
	if string(a.Render) != string(b.Render) {
		return "the table settings differ"
	}
	return ""
}

func flagMap(fl []string) map[string]string {
	m := map[string]string{}
	for _, f := range fl {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

// hashFile is the xxhash64 (hex) of the file at p; ok is false when there
// is none.
func hashFile(p string) (sum string, ok bool, err error) {
	f, err := atomicfile.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	h := xxhash.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false, err
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// checkFiles verifies that dir's own files are the ones its manifest m
// hashed, as written: a line added or removed since is refused.
func checkFiles(dir string, m Manifest) error {
	for _, name := range []string{CellsFile, RecordsFile} {
		sum, ok, err := hashFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if want, listed := m.Files[name]; ok != listed || sum != want {
			return fmt.Errorf("%s: not the file the shard wrote (its checksum in %s differs: lines added, removed or edited); rerun shard %s", filepath.Join(dir, name), ManifestFile, m.Shard)
		}
	}
	return nil
}

// HashFiles hashes the regular files under root in fsys (or root itself
// when it is a file): each file's path relative to root and its content, in
// path order, streamed. Two trees hash alike when they hold the same files
// with the same bytes, wherever they are mounted.
func HashFiles(fsys fs.FS, root string) (string, error) {
	h := xxhash.New()
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if rel == "" {
			rel = path.Base(p)
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "file %q\n", rel)
		n, err := io.Copy(h, f)
		fmt.Fprintf(h, "\nsize %d\n", n)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
