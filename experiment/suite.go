package experiment

import (
	"context"
	"fmt"

	ctxsim "github.com/ctxsim/ctxsim"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// Suite is the embedded workload "ctxsim compare" runs with no arguments:
// the recorded Claude Code sessions compiled into the binary (one account:
// tenant "recorded") and perProfile sessions of every synthetic profile,
// generated from seed.
func Suite(ctx context.Context, perProfile int, seed uint64) ([]*traces.Session, *traces.Warnings, error) {
	ss, ws, err := formats.ClaudeCode.Import(ctx, traces.Input{FS: ctxsim.Recorded(), Root: ".", Name: "testdata/claude-code"})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range ss {
		s.Tenant = "recorded"
	}
	for _, p := range synth.Profiles() {
		gen, err := synth.Generate(p.Name, perProfile, seed, synth.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		ss = append(ss, gen...)
	}
	return ss, ws, nil
}
