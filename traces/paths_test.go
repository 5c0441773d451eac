package traces_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
)

func TestImportPathsAndReadSessionPath(t *testing.T) {
	dir := t.TempDir()
	write := func(id string) string {
		var b bytes.Buffer
		require.NoError(t, traces.WriteSession(&b, &traces.Session{ID: id, Model: "m"}))
		p := filepath.Join(dir, id+".jsonl")
		require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
		return p
	}
	a, b := write("a"), write("b")
	stdin, err := os.ReadFile(a)
	require.NoError(t, err)

	// In the order given, "-" read from stdin.
	ss, ws, err := traces.ImportPaths(context.Background(), traces.Native, []string{b, "-", a}, bytes.NewReader(stdin))
	require.NoError(t, err)
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	require.Equal(t, "b,a,a", strings.Join(ids, ","))
	require.Zero(t, ws.Len())
	_, _, err = traces.ImportPaths(context.Background(), traces.Native, []string{a, filepath.Join(dir, "c.jsonl")}, nil)
	require.ErrorContains(t, err, "c.jsonl: no such file or directory")

	s, err := traces.ReadSessionPath(b, nil)
	require.NoError(t, err)
	require.Equal(t, "b", s.ID)
	s, err = traces.ReadSessionPath("-", bytes.NewReader(stdin))
	require.NoError(t, err)
	require.Equal(t, "a", s.ID)
	// Errors name the file as the caller named it.
	_, err = traces.ReadSessionPath("-", strings.NewReader("{bad"))
	require.ErrorContains(t, err, "stdin:1:")
	_, err = traces.ReadSessionPath("-", nil)
	require.EqualError(t, err, "-: no standard input")
}
