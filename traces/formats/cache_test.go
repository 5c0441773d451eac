package formats

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/filecache"
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
	c, err := filecache.Open(t.TempDir(), filecache.Options{Build: "test"})
	require.NoError(t, err)
	var st []filecache.Stats
	for run := range 2 {
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
	// Every Claude Code log is put once and then served (40 of the 45
	// logs of the corpus as shipped); the other formats are read as
	// before, uncached.
	require.Positive(t, st[0].Puts)
	require.Equal(t, []filecache.Stats{{Hits: 0, Puts: st[0].Puts}, {Hits: st[0].Puts, Puts: st[0].Puts}}, st)
	require.Empty(t, c.Warnings())
}
