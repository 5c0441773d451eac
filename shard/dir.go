package shard

import (
	"encoding/json"
	"os"
	"path/filepath"

	ctxsim "github.com/ctxsim/ctxsim"
	"github.com/ctxsim/ctxsim/traces"
)

// WriteDir writes a shard's entries to dir and then its manifest, with the
// run's warnings, which marks the shard complete: a shard that failed has
// none, and merge refuses it. Unsharded (sp zero), it does nothing.
func WriteDir(dir string, sp Spec, entries []Entry, m Manifest, warnings []traces.Warning) error {
	if !sp.Sharded() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := WriteEntries(dir, entries); err != nil {
		return err
	}
	files, err := fileSums(dir)
	if err != nil {
		return err
	}
	m.Files = files
	m.Shard = sp.String()
	m.Warnings = warnings
	return WriteManifest(dir, m)
}

// fileSums are the hashes of dir's own files as written, for
// Manifest.Files.
func fileSums(dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range []string{CellsFile, RecordsFile} {
		sum, ok, err := hashFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if ok {
			out[name] = sum
		}
	}
	return out, nil
}

// NewManifest is the identity of a sharded run of command: its settings
// (flags as name=value, the output-only ones left out), the seed, the
// inputs' hashes and this build's version; render is what merge needs to
// print.
func NewManifest(command string, seed uint64, flags []string, inputs []Input, render any) (Manifest, error) {
	m := Manifest{Version: BuildVersion(), Command: command, Seed: seed, Inputs: inputs, Flags: flags}
	b, err := json.Marshal(render)
	m.Render = b
	return m, err
}

// BuildVersion names the build: module version and VCS revision, so that
// shards of different builds do not merge.
func BuildVersion() string {
	b := ctxsim.ThisBuild()
	if !b.Known {
		return "unknown"
	}
	v := b.Version
	if b.Revision != "" {
		v += " " + b.Revision
	}
	if b.Modified {
		v += " modified"
	}
	return v
}

// Input is the hash of the input named name (Manifest.Inputs), "" when
// the run read none by that name.
func (m Manifest) Input(name string) string {
	for _, in := range m.Inputs {
		if in.Name == name {
			return in.Hash
		}
	}
	return ""
}

// HashPath hashes the file or tree at p; Clean first, so "traces/" is
// the directory traces, not an entry "traces" inside it.
func HashPath(p string) (string, error) {
	p = filepath.Clean(p)
	return HashFiles(os.DirFS(filepath.Dir(p)), filepath.Base(p))
}
