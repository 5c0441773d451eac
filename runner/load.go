package runner

import (
	"context"
	"fmt"
	"io"

	ctxsim "github.com/ctxsim/ctxsim"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// A Workload is the sessions a run replays: the embedded suite when it
// names neither paths nor profiles (EmbeddedSessions), else the traces
// under Paths (traces.Open over every format, told apart by content
// unless From names one; "-" is Stdin) and PerProfile synthetic sessions
// of each of Profiles, seeded by Seed.
type Workload struct {
	Paths      []string
	From       string
	Stdin      io.Reader
	Profiles   []string
	PerProfile int
	Seed       uint64
	// Shard, when sharded, reads native traces by header only
	// (traces.OpenOptions.Stubs); Loaded.Stubs reads the ones a shard
	// owns in full when its plan keeps them.
	Shard shard.Spec
	// Cache, when set, keeps what the importers read from each log file
	// across runs (traces.FileCache; traces/filecache keeps one on disk).
	Cache traces.FileCache
	// Progress, when set, hears the log files read, of how many
	// (traces.OpenOptions.Progress).
	Progress func(read, files int)
}

// Loaded is a loaded workload.
type Loaded struct {
	Sessions []*traces.Session
	Stubs    *traces.Stubs
	// Warnings are the input's (a session that could not be loaded is
	// one, Warnings.Failed counts them); the rest load regardless.
	Warnings *traces.Warnings
	// Callless counts the sessions dropped for having no model call
	// (traces.DropCallless): nothing to replay or bill.
	Callless int
}

// Load loads w: the suite, then the traces, then the profiles.
func Load(ctx context.Context, w Workload) (*Loaded, error) {
	l := &Loaded{Warnings: &traces.Warnings{}}
	if len(w.Paths) == 0 && len(w.Profiles) == 0 {
		ss, ws, err := EmbeddedSessions(ctx, w.PerProfile, w.Seed)
		if err != nil {
			return nil, err
		}
		l.Sessions = append(l.Sessions, ss...)
		l.Warnings.Merge(ws)
	}
	if len(w.Paths) > 0 {
		opts := traces.OpenOptions{Formats: formats.All(), From: w.From, Stdin: w.Stdin, Cache: w.Cache, Progress: w.Progress}
		var stub func(*traces.Session) bool
		if w.Shard.Sharded() {
			l.Stubs = traces.NewStubs()
			opts.Stubs, stub = l.Stubs, l.Stubs.Stub
		}
		ss, ws, err := traces.Open(ctx, w.Paths, opts)
		if err != nil {
			return nil, err
		}
		kept := traces.DropCallless(ss, ws, stub)
		l.Callless += len(ss) - len(kept)
		l.Sessions = append(l.Sessions, kept...)
		l.Warnings.Merge(ws)
	}
	for _, p := range w.Profiles {
		ss, err := synth.Generate(ctx, p, w.PerProfile, w.Seed, synth.Options{})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, badInput("{profile}: %v", err)
		}
		l.Sessions = append(l.Sessions, ss...)
	}
	return l, nil
}

// EmbeddedSessions are the embedded workload "ctxsim compare" runs with
// no arguments: the recorded Claude Code sessions compiled into the binary
// (one account: tenant "recorded") and perProfile sessions of every
// synthetic profile, generated from seed.
func EmbeddedSessions(ctx context.Context, perProfile int, seed uint64) ([]*traces.Session, *traces.Warnings, error) {
	ss, ws, err := formats.ClaudeCode.Import(ctx, traces.Input{FS: ctxsim.Recorded(), Root: ".", Name: "testdata/claude-code"})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range ss {
		s.Tenant = "recorded"
	}
	for _, p := range synth.Profiles() {
		gen, err := synth.Generate(ctx, p.Name, perProfile, seed, synth.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		ss = append(ss, gen...)
	}
	return ss, ws, nil
}
