package sim

import (
	"context"
	"time"

	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/prompt"
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
// The summary's text and size come from the inner summarizer.
type forkSummarizer struct {
	r     *run
	inner compact.Summarizer
	b     *prompt.Builder
}

// Summarize implements compact.Summarizer.
func (f *forkSummarizer) Summarize(ctx context.Context, now time.Time, in compact.SummaryInput) (compact.SummaryOutput, error) {
	out, err := f.inner.Summarize(ctx, now, in)
	if err != nil {
		return out, err
	}
	r := f.r
	v := *r.view
	v.Messages = append(append([]prompt.Message(nil), r.view.Messages...), prompt.NewMessage(prompt.RoleUser, []traces.Block{forkInstruction}, -1, prompt.Plain))
	req := f.b.Build(r.model, &v, int(out.Usage.Output))
	// Its own conversation key: the fork's extra turn must not count as
	// the session's last call when its next call's misses are attributed.
	req.Key = r.sess.ID + "/compaction"
	if r.pol.Planner != nil && r.ttl != prompt.NoCache {
		r.pol.Planner.Plan(req, r.ttl)
	}
	req.Freeze()
	resp, err := r.prov.Send(now, req)
	if err != nil {
		// The fork did not go through (an overflow: the conversation is
		// over the window); the summary is what a fresh call would cost.
		return out, nil
	}
	out.Usage, out.Latency = resp.Usage, resp.Latency()
	return out, nil
}
