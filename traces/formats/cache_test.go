package formats

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/filecache"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

// TestCachedOpenCorpus: over the training corpus (every Claude Code era,
// sidechains, subagents, compactions, rewinds; other formats read as
// before), Open through a file cache gives what Open without one gives,
// cold and warm.
func TestCachedOpenCorpus(t *testing.T) {
	const corpus = "../../../shared/traces/corpus"
	if _, err := os.Stat(corpus); err != nil {
		t.Skip("the training corpus (../shared/traces/corpus) is not here: skipping the cached-import check over it")
	}
	if testing.Short() {
		t.Skip("-short: the corpus is imported three times")
	}
	ctx := context.Background()
	want, ww, err := traces.Open(ctx, []string{corpus}, traces.OpenOptions{Formats: All()})
	require.NoError(t, err)
	dir := t.TempDir()
	c, err := filecache.Open(dir, filecache.Options{Build: "test"})
	require.NoError(t, err)
	var st []filecache.Stats
	for run := range 2 {
		if run == 1 {
			tracetest.DateStamps(t, dir) // for logs copied just before the test
		}
		got, gw, err := traces.Open(ctx, []string{corpus}, traces.OpenOptions{Formats: All(), Cache: c})
		require.NoError(t, err)
		require.Equal(t, ww.List(), gw.List(), "run %d warnings", run)
		require.Equal(t, len(want), len(got))
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Fatalf("run %d: session %s differs from the uncached import", run, want[i].ID)
			}
		}
		st = append(st, c.Stats())
	}
	// Every Claude Code log is put and stamped once and then served by
	// its stamp, unread (40 of the 45 logs of the corpus as shipped); the
	// other formats are read as before, uncached.
	p := st[0].Puts
	require.Positive(t, p)
	require.Equal(t, []filecache.Stats{{Puts: p, Stamps: p}, {Hits: p, StampHits: p, Puts: p, Stamps: p}}, st)
	require.Empty(t, c.Warnings())
}
