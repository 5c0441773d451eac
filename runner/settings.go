package runner

import (
	"fmt"
	"io"

	"github.com/ctxsim/ctxsim/internal/safetext"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
)

// Settings are a Runner's settings as plain values, what a command line
// gives (the CLI's replay flags set them): the fake provider, the price
// file, the seed, the injected faults, context editing, the vLLM cache,
// and whether to solve the hindsight optimum.
type Settings struct {
	Provider string
	// Prices is a LiteLLM price file overriding and extending the
	// embedded rate card (LoadPrices); "" for the card alone.
	Prices                                string
	Seed                                  uint64
	SummarizerFailRate, ProviderErrorRate float64
	ClearToolUses                         bool
	KVCapacity, KVBlockSize               int
	NoHindsight                           bool
}

// Runner is a runner with s's settings, checked (Runner.Check) before the
// price file is read, so a bad setting is reported whatever the file.
func (s Settings) Runner() (*Runner, error) {
	rn, err := New(nil, s.Provider, s.Seed)
	if err != nil {
		return nil, err
	}
	rn.SummarizerFailRate, rn.ProviderErrorRate, rn.ClearToolUses = s.SummarizerFailRate, s.ProviderErrorRate, s.ClearToolUses
	rn.Hindsight = !s.NoHindsight
	rn.VLLM.Capacity, rn.VLLM.BlockSize = s.KVCapacity, s.KVBlockSize
	if err := rn.Check(); err != nil {
		return nil, err
	}
	if rn.Prices, err = LoadPrices(s.Prices); err != nil {
		return nil, err
	}
	return rn, nil
}

// Console are the Options of a run on workers for shard sp that shows
// itself on w, a terminal's standard error: a progress bar while the
// cells run (report.NewProgress: none when w is no terminal) and a line
// naming each cell that fails, with its error.
func Console(w io.Writer, workers int, sp shard.Spec) Options {
	bar := report.NewProgress(w, 0)
	return Options{Workers: workers, Shard: sp,
		Start: func(todo int) { bar = report.NewProgress(w, todo) },
		Done:  func(*Cell) { bar.Add(1) },
		Failed: func(c *Cell) {
			fmt.Fprintf(w, "ctxsim: cell %s: %s\n", safetext.Line(c.Key()), safetext.Lines(c.Err.Error()))
		},
		End: func() { bar.Finish() },
	}
}

// ShardManifest is the identity of a sharded run of command (shard.NewManifest):
// the flags that change a result or the table (name=value), the seed,
// the hashes of its inputs (InputHashes) and what its table needs
// (render). An unsharded run has none: the zero Manifest.
func ShardManifest(sp shard.Spec, command string, seed uint64, flags, paths []string, suite bool, prices string, render any) (shard.Manifest, error) {
	if !sp.Sharded() {
		return shard.Manifest{}, nil
	}
	in, err := InputHashes(paths, suite, prices)
	if err != nil {
		return shard.Manifest{}, err
	}
	return shard.NewManifest(command, seed, flags, in, render)
}

// NothingToReplayError is a workload whose sessions all lack a model call
// (Loaded.Callless): they cost nothing, which is an answer rather than a
// failure.
type NothingToReplayError struct{ Sessions int }

func (n NothingToReplayError) Error() string {
	return fmt.Sprintf("nothing to replay: %d session(s), none with a model call (a session without one costs nothing)", n.Sessions)
}
