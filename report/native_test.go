package report

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
)

func nativeSession(id string) *traces.Session {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &traces.Session{ID: id, Model: "claude-opus-4-6", Events: []traces.Event{
		{Kind: traces.User, Time: t0, Blocks: []traces.Block{{Kind: traces.Text, Text: "hi"}}},
		{Kind: traces.Assistant, Time: t0.Add(time.Second), Blocks: []traces.Block{{Kind: traces.Text, Text: "hello"}}},
	}}
}

// Ids that are not safe file names are made so; two that map to one name
// are refused before anything is written; a new directory appears whole.
func TestWriteNativeSet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	got, err := WriteNativeSet(dir, []*traces.Session{nativeSession("a/b"), nativeSession("..")})
	require.NoError(t, err)
	require.Equal(t, []Written{
		{ID: "a/b", File: filepath.Join(dir, "a_b.jsonl"), Events: 2, Calls: 1},
		{ID: "..", File: filepath.Join(dir, "_...jsonl"), Events: 2, Calls: 1},
	}, got)
	for _, w := range got {
		_, err := os.Stat(w.File)
		require.NoError(t, err)
	}

	dir2 := filepath.Join(t.TempDir(), "out")
	_, err = WriteNativeSet(dir2, []*traces.Session{nativeSession("a/b"), nativeSession("a_b")})
	require.ErrorContains(t, err, "map to the same file")
	_, err = os.Stat(dir2)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
}
