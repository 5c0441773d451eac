package claudecode

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/filecache"
)

// TestCachedImport: an import through a file cache gives what an import
// without one gives, sessions and warnings, on the first run (every file a
// miss, put) and the second (every file a hit, no JSON decoded).
func TestCachedImport(t *testing.T) {
	want, ww, err := ImportFS(context.Background(), os.DirFS(testdata), ".", testdata)
	require.NoError(t, err)
	files, err := listFiles(os.DirFS(testdata), ".", &traces.Warnings{}, testdata)
	require.NoError(t, err)
	c, err := filecache.Open(t.TempDir(), filecache.Options{Build: "test"})
	require.NoError(t, err)
	o := Options{Cache: struct{ traces.FileCache }{c}} // content keys only: TestStampedImport has stamps
	for run, hits := range []int{0, len(files)} {
		got, gw, err := o.ImportFS(context.Background(), os.DirFS(testdata), ".", testdata)
		require.NoError(t, err)
		require.Equal(t, filecache.Stats{Hits: hits, Puts: len(files)}, c.Stats(), "run %d", run)
		require.Equal(t, ww.List(), gw.List(), "run %d warnings", run)
		require.Equal(t, len(want), len(got))
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Fatalf("run %d: session %s differs from the uncached import", run, want[i].ID)
			}
		}
	}
	require.Empty(t, c.Warnings())
	require.Greater(t, len(files), 3, "the test needs several files (subagents)")
}
