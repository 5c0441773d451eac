package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// forkInstruction is the summary instruction a forked compaction appends to
// the conversation. Its size is the recorded one: the agent-acompact call of
// the shared session sends an 8,903-character instruction, ~2,200 tokens. It
// is opaque (its text is Claude Code's) and the same every time, so it is
// cacheable like any block.
var forkInstruction = traces.Block{Kind: traces.Text, Name: "compaction-instruction", Tokens: 2200}

// forkSummarizer is a compaction summary made the way Claude Code makes
// one: the session's current request, plus the instruction, sent by the main
// model through the session's own provider, so the conversation is read
// from the prompt cache and only the instruction and the summary are new.
// The summary's text and size come from the inner summarizer; the request
// is the engine's (run.sendFork), checked like any call.
type forkSummarizer struct {
	r     *run
	inner compact.Summarizer
	b     *prompt.Builder
	// abort stops the hook the summary is made in (see run.hook).
	abort context.CancelCauseFunc
}

// Summarize implements compact.Summarizer.
func (f *forkSummarizer) Summarize(ctx context.Context, now time.Time, in compact.SummaryInput) (compact.SummaryOutput, error) {
	out, err := f.inner.Summarize(ctx, now, in)
	if err != nil {
		return out, err
	}
	out, err = f.r.sendFork(now, out)
	if err != nil && f.abort != nil {
		f.abort(err)
	}
	return out, err
}

// sendFork sends the forked summary request at now: the session's current view
// plus the instruction, planned by the policy's planner, frozen and checked
// like any call. It bills the summary (out's output) at what the provider
// charged for the request. A provider's API error (an overflow: the
// conversation is over the window) leaves out as the inner summarizer
// billed it, as a fresh call; any other failure is an error that stops the
// run.
func (r *run) sendFork(now time.Time, out compact.SummaryOutput) (compact.SummaryOutput, error) {
	v := *r.view
	v.Messages = append(append([]prompt.Message(nil), r.view.Messages...), prompt.NewMessage(prompt.RoleUser, []traces.Block{forkInstruction}, -1, prompt.Plain))
	req := r.fork.b.Build(r.model, &v, int(out.Usage.Output))
	// Its own conversation key: the fork's extra turn must not count as
	// the session's last call when its next call's misses are attributed.
	req.Key = r.sess.ID + "/compaction"
	req.Window = r.window
	if pl := r.planner(); pl != nil && r.ttl != prompt.NoCache {
		pl.Plan(req, r.ttl)
	}
	req.Freeze()
	resp, err := r.prov.Send(now, req)
	if ferr := req.CheckFrozen(); ferr != nil {
		return out, fmt.Errorf("session %s: forked summary: %w", r.sess.ID, ferr)
	}
	if err != nil {
		var ae *provider.APIError
		if errors.As(err, &ae) {
			return out, nil
		}
		return out, fmt.Errorf("session %s: forked summary: %w", r.sess.ID, err)
	}
	out.Usage, out.Latency = resp.Usage, resp.Latency()
	return out, nil
}
