package compact

import (
	"context"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// hasNote reports whether the system prompt already carries SystemNote.
func hasNote(sys []traces.Block) bool {
	for i := range sys {
		if strings.Contains(sys[i].Text, SystemNote) {
			return true
		}
	}
	return false
}

// latestAsk is the newest real user message's text (≤ 1400 chars), which
// overwrites the summary's Historical Task Snapshot.
func latestAsk(msgs []prompt.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if !realUser(&msgs[i]) {
			continue
		}
		var parts []string
		for _, b := range msgs[i].Blocks {
			if b.Kind == traces.Text && b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		if len(parts) > 0 {
			s := strings.Join(parts, "\n")
			if len(s) > latestAskChars {
				s = s[:safeCut(s, latestAskChars)]
			}
			return s
		}
	}
	return "(no user message)"
}

// focus is the auto focus topic: the last 3 real user asks.
func focus(msgs []prompt.Message) string {
	var asks []string
	for i := len(msgs) - 1; i >= 0 && len(asks) < 3; i-- {
		if realUser(&msgs[i]) {
			for _, b := range msgs[i].Blocks {
				if b.Kind == traces.Text && b.Text != "" {
					asks = append(asks, oneLine(b.Text, 300))
					break
				}
			}
		}
	}
	return strings.Join(asks, "\n")
}

// compress is hermes' ContextCompressor.compress (§3.3): phase-1 prune,
// boundaries, the summary call, assembly with the summary marker and the
// once-only system note. No-op paths are ineffective strikes.
func (m *Manager) compress(ctx context.Context, now time.Time, v *prompt.View, kind Kind, trigger string) (*prompt.View, []Pass) {
	before := m.rough.Estimate(v)
	p := Pass{Kind: kind, Trigger: trigger, TokensBefore: before, TokensAfter: before}
	noop := func(outcome string) (*prompt.View, []Pass) {
		// A structural no-op: nothing to compress right now, not an
		// ineffective compaction. It backs off instead of striking.
		p.Outcome = outcome
		p.Detail = m.structuralNoOp(now)
		return v, []Pass{p}
	}
	msgs := v.Messages
	head := m.headCount(msgs)
	if len(msgs) <= head+3+1 {
		return noop(OutcomeTooFew)
	}
	budget := TailBudget(&m.cfg, m.model.Window, m.threshold)

	// Phase 1: the deterministic prune, tail protected by the token budget
	// with a count floor of min(protect_last_n, 8).
	tail0 := min(m.tailCut(msgs, budget, head, true), len(msgs)-min(m.cfg.ProtectLastN, 8))
	pruned := prunePasses(msgs, pruneOpts{memo: m.memo, head: head, tailStart: max(tail0, head), minChars: summaryMinChars, demoteTail: true, tailBudget: budget})

	start := alignForward(pruned, head)
	end := m.tailCut(pruned, budget, start, true)
	if start >= end {
		return noop(OutcomeNoWindow)
	}
	window := pruned[start:end]
	// Earlier summaries in the window are the previous summary (an iterative
	// update), not input to summarize again. A summary merged into a tail
	// message carries that message too: its own blocks are conversation,
	// summarized like any other message. hermes' merged carrier keeps the
	// message's content before _MERGED_SUMMARY_DELIMITER, and its handoff
	// readers unwrap it rather than drop the row
	// (agent/context_compressor.py classify_summary_content "merged",
	// _MERGED_PRIOR_CONTEXT_HEADER; #57690).
	var previous []string
	rest := make([]prompt.Message, 0, len(window))
	for i := range window {
		if IsSummary(&window[i]) {
			var own []traces.Block
			for _, b := range window[i].Blocks {
				if strings.HasPrefix(b.Text, SummaryPrefix) {
					previous = append(previous, strings.TrimPrefix(b.Text, SummaryPrefix))
					continue
				}
				own = append(own, b)
			}
			if len(own) > 0 {
				rest = append(rest, prompt.NewMessage(window[i].Role, own, window[i].Event, prompt.Plain))
			}
			continue
		}
		rest = append(rest, window[i])
	}
	if len(rest) == 0 {
		return noop(OutcomeEmptyWindow)
	}

	var passes []Pass
	in := SummaryInput{
		Kind:         kind,
		Transcript:   SummaryTranscript(rest),
		Previous:     strings.Join(previous, "\n\n"),
		TargetTokens: SummaryBudget(m.rough.Messages(window), m.model.Window),
		Focus:        focus(pruned),
	}
	body, fallback := "", false
	out, err := m.summarize(ctx, now, in)
	if ctx.Err() != nil {
		// Cancelled: not a failed summary (no strike, no fallback); the
		// view stays as it was and the caller stops.
		return v, nil
	}
	if out != nil {
		p.Summary = out
	}
	if err != nil {
		p.Err = err.Error()
		passes = append(passes, m.summaryFailed(now))
		if m.cfg.AbortOnSummaryFailure {
			p.Outcome = OutcomeSummaryFailed
			return v, append([]Pass{p}, passes...)
		}
		body, fallback = DigestSummary(rest), true
	} else {
		body = out.Text
		m.dur.CooldownStep = 0
	}
	text := marker(body, latestAsk(pruned))

	// Assembly: head, summary, tail. The summary's role keeps the
	// alternation valid; it is forced to user when nothing precedes it
	// (Anthropic needs a user message first, #52160) or no user message
	// would survive (#58753); on a collision it is merged into the first
	// tail message.
	headMsgs, tail := pruned[:start], pruned[end:]
	role := prompt.RoleUser
	tailHasUser := false
	for i := range tail {
		if realUser(&tail[i]) {
			tailHasUser = true
			break
		}
	}
	if len(headMsgs) > 0 && tailHasUser && wireUser(&headMsgs[len(headMsgs)-1]) {
		role = prompt.RoleAssistant
	}
	out2 := make([]prompt.Message, 0, len(headMsgs)+1+len(tail))
	out2 = append(out2, headMsgs...)
	if len(tail) > 0 && wireUser(&tail[0]) == (role == prompt.RoleUser) {
		first := tail[0]
		blocks := append([]traces.Block{textBlock(text)}, first.Blocks...)
		out2 = append(out2, prompt.NewMessage(first.Role, blocks, first.Event, prompt.BatchSummary))
		tail = tail[1:]
	} else {
		out2 = append(out2, prompt.NewMessage(role, []traces.Block{textBlock(text)}, -1, prompt.BatchSummary))
	}
	out2 = append(out2, tail...)
	nv := &prompt.View{Tools: v.Tools, System: v.System, Messages: sanitizeToolPairs(out2)}
	if !hasNote(v.System) {
		// The once-only note: a real cache break of the system prompt.
		nv.System = append(append([]traces.Block(nil), v.System...), traces.Block{Kind: traces.System, Text: SystemNote})
	}

	m.dur.Compactions++
	m.mem.verify = true
	m.mem.structuralUntil = time.Time{} // record_completed_compaction clears it
	m.dur.PruneRearm = 0                // and so does a batch compaction (compress's tail)
	m.mem.cursor, m.mem.rolling, m.mem.stamped = -1, "", 0
	if fallback {
		p.Outcome = OutcomeFallback
		m.dur.FallbackStreak++
		passes = append(passes, m.tripPass("fallback")...)
	} else {
		p.Outcome = OutcomeCompacted
		m.dur.FallbackStreak = 0
	}
	p.TokensAfter = m.rough.Estimate(nv)
	p.Detail = []KV{
		{"messages_after", float64(len(nv.Messages))},
		{"messages_before", float64(len(msgs))},
		{"summary_target_tokens", float64(in.TargetTokens)},
		{"tail_budget_tokens", float64(budget)},
	}
	return nv, append([]Pass{p}, passes...)
}

// summarize calls the summarizer; an empty or truncated answer is a failure
// (with what it cost still reported).
func (m *Manager) summarize(ctx context.Context, now time.Time, in SummaryInput) (*SummaryOutput, error) {
	if m.sum == nil {
		return nil, ErrEmptySummary
	}
	out, err := m.sum.Summarize(ctx, now, in)
	if err != nil {
		return &out, err
	}
	if strings.TrimSpace(out.Text) == "" || out.Truncated {
		return &out, ErrEmptySummary
	}
	return &out, nil
}
