package claudecode

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/filecache"
)

// BenchmarkCost is `ctxsim cost` on the largest shared session.
func BenchmarkCost(b *testing.B) {
	fi, err := os.Stat(bigFile)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		if _, _, err := ScanUsage(context.Background(), bigFile); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImport is the full import of the same session.
func BenchmarkImport(b *testing.B) {
	fi, err := os.Stat(bigFile)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		if _, _, err := Import(context.Background(), bigFile); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCostTree is `ctxsim cost` on a whole log tree named by
// CTXSIM_BENCH_TREE (e.g. a copy of ~/.claude/projects; the side-by-side
// with ccusage in docs/bad-input.md uses one of a few hundred MB).
func BenchmarkCostTree(b *testing.B) {
	tree := os.Getenv("CTXSIM_BENCH_TREE")
	if tree == "" {
		b.Skip("CTXSIM_BENCH_TREE is not set")
	}
	var size int64
	files, err := traces.WalkFiles(tree, isLog, &traces.Warnings{})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, _, err := ScanUsage(context.Background(), tree); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportCached is the import of the shared sessions (every file
// of testdata/claude-code) without a file cache ("json"), and warm: every
// file served from a traces/filecache entry, found by the
// file's stamp ("warm": the file is not read when its stamp is trusted,
// that is when the file was last changed 2 s or more before the first
// import) or by its contents ("warm-read": read and hashed).
func BenchmarkImportCached(b *testing.B) {
	fsys := os.DirFS(testdata)
	c, err := filecache.Open(b.TempDir(), filecache.Options{Build: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Cache: c}
	if _, _, err := o.ImportFS(context.Background(), fsys, ".", testdata); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		o    Options
	}{{"json", Options{}}, {"warm", o}, {"warm-read", Options{Cache: struct{ traces.FileCache }{c}}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := bc.o.ImportFS(context.Background(), fsys, ".", testdata); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	if st := c.Stats(); st.Hits == 0 {
		b.Fatalf("the warm import was not served from the cache: %+v", st)
	}
}

// BenchmarkParseBillLine is the one-pass line reader alone, over the lines
// of the largest shared session held in memory.
func BenchmarkParseBillLine(b *testing.B) {
	data, err := os.ReadFile(bigFile)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	b.SetBytes(int64(len(data)))
	var l billLine
	for b.Loop() {
		for _, line := range lines {
			if err := parseBillLine(line, &l); err != nil {
				b.Fatal(err)
			}
		}
	}
}
