package runner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/shard"
)

// merge prices a cost run's shards again with the card they used: a
// price file missing or given against the shards is the input's fault
// (a usage error), another file is not.
func TestSamePrices(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	require.NoError(t, os.WriteFile(a, []byte(`{"m":{}}`), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(`{"n":{}}`), 0o644))
	h, err := shard.HashPath(a)
	require.NoError(t, err)
	card := shard.Manifest{}
	file := shard.Manifest{Inputs: []shard.Input{{Name: PricesInput, Hash: h}}}
	var ie *InputError
	require.NoError(t, SamePrices(card, ""))
	require.NoError(t, SamePrices(file, a))
	require.ErrorAs(t, SamePrices(card, a), &ie)
	require.True(t, ie.Usage)
	require.ErrorAs(t, SamePrices(file, ""), &ie)
	require.True(t, ie.Usage)
	err = SamePrices(file, b)
	require.True(t, errors.As(err, &ie) && !ie.Usage, "another file is not a usage error: %v", err)
	require.Equal(t, "--prices "+b+" is not the file the shards priced with", ie.Name(func(in string) string { return "--prices" }))
}
