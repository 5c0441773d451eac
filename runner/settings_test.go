package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/shard"
)

// Settings.Runner sets every field a command line gives, checks them
// before reading the price file, and reads the file over the embedded card.
func TestSettingsRunner(t *testing.T) {
	s := Settings{Provider: "vllm", Seed: 7, SummarizerFailRate: 0.25, ProviderErrorRate: 0.5, KVCapacity: 4096, KVBlockSize: 32, NoHindsight: true}
	rn, err := s.Runner()
	require.NoError(t, err)
	require.Equal(t, "vllm", rn.Provider)
	require.Equal(t, uint64(7), rn.Seed)
	require.Equal(t, [2]float64{0.25, 0.5}, [2]float64{rn.SummarizerFailRate, rn.ProviderErrorRate})
	require.Equal(t, [2]int{4096, 32}, [2]int{rn.VLLM.Capacity, rn.VLLM.BlockSize})
	require.False(t, rn.Hindsight)
	_, err = rn.Prices.Lookup("claude-opus-4-6")
	require.NoError(t, err, "the embedded card")

	rn, err = Settings{Provider: "anthropic", ClearToolUses: true}.Runner()
	require.NoError(t, err)
	require.True(t, rn.ClearToolUses && rn.Hindsight)

	// A bad setting is refused whatever the price file: the file is not read.
	var ie *InputError
	_, err = Settings{Provider: "openai", ClearToolUses: true, Prices: filepath.Join(t.TempDir(), "missing.json")}.Runner()
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "clear tool uses is an Anthropic feature (provider openai)", err.Error())

	_, err = Settings{Provider: "auto", Prices: filepath.Join(t.TempDir(), "missing.json")}.Runner()
	require.ErrorAs(t, err, &ie)
	require.Contains(t, ie.Name(func(string) string { return "--prices" }), "--prices: open ")

	file := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"my-model": {"input_cost_per_token": 0.000002, "output_cost_per_token": 0.000008, "litellm_provider": "openai"}}`), 0o644))
	rn, err = Settings{Provider: "auto", Prices: file}.Runner()
	require.NoError(t, err)
	p, err := rn.Prices.Lookup("my-model")
	require.NoError(t, err)
	require.InDelta(t, 2.0, p.Input, 1e-9, "$ per million input tokens from the file")
	_, err = rn.Prices.Lookup("claude-opus-4-6")
	require.NoError(t, err, "the embedded card stays under the file")
}

// Console names each failed cell on its writer, its error's further
// lines indented; off a terminal it draws no bar, so nothing else is
// written.
func TestConsole(t *testing.T) {
	rn, ss := testSetup(t)
	plan := testCells(t, rn, ss)
	plan.Cells[1].Result, plan.Cells[1].Err = &Result{}, errors.New("floor larger\nthan the window")
	var b bytes.Buffer
	o := Console(&b, 2, shard.Spec{})
	require.Equal(t, 2, o.Workers)
	err := rn.run(context.Background(), plan, nil, o, &Replay{}, func(*Cell) {})
	var cf *CellsFailed
	require.ErrorAs(t, err, &cf)
	require.Equal(t, "ctxsim: cell "+plan.Cells[1].Key()+": floor larger\n  than the window\n", b.String())
}

// An unsharded run has no manifest; a shard's names its command, seed,
// flags, inputs and render, and refuses standard input.
func TestShardManifest(t *testing.T) {
	m, err := ShardManifest(shard.Spec{}, "compare", 1, []string{"seed=1"}, []string{"-"}, false, "", nil)
	require.NoError(t, err)
	require.Equal(t, shard.Manifest{}, m)

	trace := filepath.Join("..", "testdata", "claude-code", "short.jsonl")
	sp := shard.Spec{K: 2, N: 3}
	m, err = ShardManifest(sp, "compare", 5, []string{"seed=5", "policy=[hermes-default]"}, []string{trace}, true, "", CompareRender{Policies: []string{"hermes-default"}})
	require.NoError(t, err)
	require.Equal(t, "compare", m.Command)
	require.Equal(t, uint64(5), m.Seed)
	require.Equal(t, []string{"seed=5", "policy=[hermes-default]"}, m.Flags)
	h, err := shard.HashPath(trace)
	require.NoError(t, err)
	require.Len(t, m.Inputs, 2)
	require.Equal(t, "embedded suite", m.Inputs[0].Name)
	require.Equal(t, shard.Input{Name: "trace " + trace, Hash: h}, m.Inputs[1])
	require.JSONEq(t, `{"policies":["hermes-default"],"suite":false,"detail":false}`, string(m.Render))

	_, err = ShardManifest(sp, "compare", 5, nil, []string{"-"}, false, "", nil)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	require.True(t, ie.Usage)
}

func TestNothingToReplay(t *testing.T) {
	err := error(NothingToReplayError{Sessions: 3})
	var nr NothingToReplayError
	require.True(t, errors.As(err, &nr))
	require.Equal(t, 3, nr.Sessions)
	require.Equal(t, "nothing to replay: 3 session(s), none with a model call (a session without one costs nothing)", err.Error())
}
