package compact

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// MicroMaxFailures is how many failures in a row at one cursor skip the
// exchange (_MICRO_COMPACT_MAX_CONSECUTIVE_FAILURES); batch compaction
// picks it up later.
const MicroMaxFailures = 3

// lastMicro is the index of the newest micro marker, or -1.
func lastMicro(msgs []prompt.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Tag == prompt.MicroSummary {
			return i
		}
	}
	return -1
}

// cursorIn is the micro cursor inside [start, end): the in-memory cursor if
// it is still valid, else just past the last summary marker, else start
// (agent/micro_compaction.py _resolve_compact_cursor). With no rolling
// summary in memory (after a restart, or a batch compaction, which clears
// it) the summary is rehydrated from that marker, batch or micro, and the
// marker is stamped as contained in it (hermes sets
// MICRO_COMPACT_MARKER_KEY on it): the next absorb supersedes it and a
// defrag may rewrite it.
func (m *Manager) cursorIn(msgs []prompt.Message, start, end int) int {
	c := m.mem.cursor
	if c >= start && c <= end && c > 0 && msgs[c-1].Hash() == m.mem.cursorMark {
		return c
	}
	for i := end - 1; i >= start; i-- {
		if IsSummary(&msgs[i]) {
			if strings.TrimSpace(m.mem.rolling) == "" {
				if s := rollingOf(&msgs[i]); s != "" {
					m.mem.rolling = s
					if msgs[i].Tag == prompt.BatchSummary {
						m.mem.stamped = msgs[i].Hash()
					}
				}
			}
			return i + 1
		}
	}
	return start
}

// rollingOf is the rolling summary a marker holds (hermes'
// _rolling_summary_from_marker: the text after the last "## Historical
// Task Snapshot" heading, up to the end marker). hermes' batch template
// opens with that heading, so from a batch marker it recovers the whole
// summary; ours renders the snapshot after the body, so for a batch marker
// the body is taken too.
func rollingOf(msg *prompt.Message) string {
	if len(msg.Blocks) == 0 {
		return ""
	}
	text := msg.Blocks[0].Text
	if msg.Tag == prompt.MicroSummary {
		s, _ := SnapshotOf(text)
		return strings.TrimSpace(s)
	}
	if !strings.HasPrefix(text, SummaryPrefix) {
		return ""
	}
	text = strings.TrimPrefix(text, SummaryPrefix)
	if j := strings.LastIndex(text, EndMarker); j >= 0 {
		text = text[:j]
	}
	return strings.TrimSpace(text)
}

// lastContained is the index of the newest marker the rolling summary
// provably contains: a micro marker, or the batch marker it was rehydrated
// from. -1 when there is none.
func (m *Manager) lastContained(msgs []prompt.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Tag == prompt.MicroSummary || m.mem.stamped != 0 && msgs[i].Tag == prompt.BatchSummary && msgs[i].Hash() == m.mem.stamped {
			return i
		}
	}
	return -1
}

// exchangeAt finds the exchange at or after i: the next assistant message
// (not a marker) and the assistant/tool rows after it, up to the next user
// row. User messages are never part of one. It returns ok=false when there
// is none before end, or when it would run into the tail (mid-turn).
func exchangeAt(msgs []prompt.Message, i, end int) (s, e int, ok bool) {
	for i < end && (msgs[i].Role != prompt.RoleAssistant || IsSummary(&msgs[i])) {
		i++
	}
	if i >= end {
		return 0, 0, false
	}
	j := i + 1
	for j < len(msgs) && (msgs[j].Role == prompt.RoleAssistant || msgs[j].Role == prompt.RoleTool) && !IsSummary(&msgs[j]) {
		j++
	}
	if j > end {
		return 0, 0, false
	}
	return i, j, true
}

// micro runs one micro-compaction pass (agent/micro_compaction.py). ran is
// false when there was nothing to do (no telemetry, as in hermes).
func (m *Manager) micro(ctx context.Context, now time.Time, v *prompt.View) (*prompt.View, Pass, bool) {
	msgs := v.Messages
	if len(msgs) < 4 {
		return v, Pass{}, false
	}
	start := alignForward(msgs, m.headCount(msgs))
	end := m.tailCut(msgs, TailBudget(&m.cfg, m.model.Window, m.threshold), start, false)
	if start >= end {
		return v, Pass{}, false
	}
	cursor := m.cursorIn(msgs, start, end)
	if m.mem.rolling == "" {
		if k := lastMicro(msgs); k >= 0 {
			m.mem.rolling, _ = SnapshotOf(msgs[k].Blocks[0].Text)
		}
	}
	before := m.rough.Estimate(v)
	p := Pass{Kind: KindMicro, Trigger: "cadence", TokensBefore: before, TokensAfter: before}
	t0 := now
	var out *SummaryOutput
	var err error
	exchangeTokens := 0
	nv := v

	// hermes looks for the next exchange first (step 3): with none, or one
	// that would end mid-turn, the pass does nothing, defrag included.
	s, e, ok := exchangeAt(msgs, cursor, end)
	if !ok {
		return v, Pass{}, false
	}
	if estimate.Rough(m.mem.rolling) >= m.cfg.MicroCompactDefragThresholdTokens {
		// Defrag: re-summarize the rolling summary and rewrite the newest
		// marker it contains in place; no splice, no cursor move. hermes
		// defrags whether or not such a marker exists (_needs_defrag looks
		// at the summary only): a summary rehydrated from a batch marker is
		// shrunk before it is merged into.
		k := m.lastContained(msgs)
		out, err = m.summarize(ctx, now, SummaryInput{Kind: KindDefrag, Previous: m.mem.rolling,
			TargetTokens: m.cfg.MicroCompactDefragThresholdTokens / 2, MaxTokens: min(MicroMaxTokens, MaxSummaryTokens(m.model.Window))})
		if ctx.Err() != nil {
			return v, Pass{}, false // cancelled: not a failure
		}
		if err != nil {
			p.Outcome = OutcomeDefragFailed
		} else {
			m.mem.rolling = out.Text
			if k >= 0 {
				nm := m.rewriteContained(&msgs[k], out.Text)
				nmsgs := append([]prompt.Message(nil), msgs...)
				nmsgs[k] = nm
				nv = &prompt.View{Tools: v.Tools, System: v.System, Messages: nmsgs}
				if cursor == k+1 {
					m.mem.cursor, m.mem.cursorMark = k+1, nm.Hash()
				}
			}
			p.Outcome = OutcomeDefrag
		}
	} else {
		exchangeTokens = m.rough.Messages(msgs[s:e])
		// Our reclaim gate: absorb whole exchanges until they hold enough
		// tokens, so the cache break pays for itself.
		for gate := m.cfg.MicroCompactMinReclaimTokens; gate > 0 && exchangeTokens < gate; {
			_, e2, ok := exchangeAt(msgs, e, end)
			if !ok {
				break
			}
			exchangeTokens += m.rough.Messages(msgs[e:e2])
			e = e2
		}
		switch {
		case m.cfg.MicroCompactMinReclaimTokens > 0 && exchangeTokens < m.cfg.MicroCompactMinReclaimTokens:
			p.Outcome = OutcomeBelowReclaim
		default:
			var absorbed []prompt.Message
			for i := s; i < e; i++ {
				if !realUser(&msgs[i]) {
					absorbed = append(absorbed, msgs[i])
				}
			}
			key := msgs[s].Hash()
			out, err = m.summarize(ctx, now, SummaryInput{Kind: KindMicro, Transcript: SummaryTranscript(absorbed), Previous: m.mem.rolling,
				TargetTokens: min(MicroMaxTokens, MaxSummaryTokens(m.model.Window)), MaxTokens: min(MicroMaxTokens, MaxSummaryTokens(m.model.Window))})
			if ctx.Err() != nil {
				return v, Pass{}, false // cancelled: not a failure
			}
			if err != nil {
				if m.mem.failAt != key {
					m.mem.failAt, m.mem.failCount = key, 0
				}
				m.mem.failCount++
				p.Outcome = OutcomeSummarizeFailed
				if m.mem.failCount >= MicroMaxFailures {
					p.Outcome = OutcomeExchangeSkipped
					m.mem.failAt, m.mem.failCount = 0, 0
					m.mem.cursor, m.mem.cursorMark = e, msgs[e-1].Hash()
				}
				break
			}
			m.mem.failAt, m.mem.failCount = 0, 0
			m.mem.rolling = out.Text
			nv = m.splice(v, s, e, out.Text)
			p.Outcome = OutcomeAbsorbed
		}
	}
	if out != nil {
		p.Summary = out
		t0 = t0.Add(out.Latency)
	}
	if err != nil {
		p.Err = err.Error()
	}
	p.TokensAfter = m.rough.Estimate(nv)
	if p.Committed() {
		m.dur.MicroPasses++
		m.dur.MicroSaved += p.TokensBefore - p.TokensAfter
	}
	occupancy := math.Round(float64(p.TokensAfter)/float64(m.threshold)*10000) / 100
	p.Detail = []KV{
		{"context_limit", float64(m.model.Window)},
		{"cursor", float64(m.mem.cursor)},
		{"duration_ms", float64(t0.Sub(now).Milliseconds())},
		{"exchange_tokens", float64(exchangeTokens)},
		{"messages_after", float64(len(nv.Messages))},
		{"messages_before", float64(len(msgs))},
		{"occupancy_pct", occupancy},
		{"passes_total", float64(m.dur.MicroPasses)},
		{"rolling_summary_tokens", float64(estimate.Rough(m.mem.rolling))},
		{"threshold_tokens", float64(m.threshold)},
		{"tokens_after", float64(p.TokensAfter)},
		{"tokens_before", float64(p.TokensBefore)},
		{"tokens_delta", float64(p.TokensAfter - p.TokensBefore)},
		{"tokens_saved_total", float64(m.dur.MicroSaved)},
	}
	return nv, p, true
}

// rewriteContained is marker msg with its summary replaced by rolling, as
// hermes' defrag rewrites the marker's content in place, role and keys
// kept. A micro marker, or a batch marker standing alone, becomes a micro
// marker; a batch summary merged into a tail message keeps that message's
// own blocks (hermes overwrites the whole content, the message's text
// with it) and stays stamped.
func (m *Manager) rewriteContained(msg *prompt.Message, rolling string) prompt.Message {
	blocks := append([]traces.Block{textBlock(marker("", rolling))}, msg.Blocks[1:]...)
	if msg.Tag == prompt.BatchSummary && len(msg.Blocks) > 1 {
		nm := prompt.NewMessage(msg.Role, blocks, msg.Event, prompt.BatchSummary)
		m.mem.stamped = nm.Hash()
		return nm
	}
	m.mem.stamped = 0
	return prompt.NewMessage(msg.Role, blocks[:1], -1, prompt.MicroSummary)
}

// splice replaces the assistant and tool rows of msgs[s:e] with one micro
// marker carrying the rolling summary, placed after the last of them; user
// messages in the span stay. Older micro markers are dropped (the summary
// is cumulative); batch markers stay. Where dropping a stale marker (or the
// rows of several exchanges, under our reclaim gate) leaves two user turns
// side by side, they are merged, as hermes does after superseding a marker,
// and only when both are plain text (hermes merges string content only,
// agent/micro_compaction.py). Nothing else is merged: user turns that were
// adjacent in the transcript stay as they were.
func (m *Manager) splice(v *prompt.View, s, e int, rolling string) *prompt.View {
	msgs := v.Messages
	mk := prompt.NewMessage(prompt.RoleAssistant, []traces.Block{textBlock(marker("", rolling))}, -1, prompt.MicroSummary)
	out := make([]prompt.Message, 0, len(msgs))
	dropped := false // rows were removed right before the next row
	push := func(msg prompt.Message) {
		if n := len(out); dropped && n > 0 && mergeable(&out[n-1]) && mergeable(&msg) {
			out[n-1] = merge(&out[n-1], &msg)
			dropped = false
			return
		}
		dropped = false
		out = append(out, msg)
	}
	cursor := 0
	for i := range msgs {
		switch {
		case msgs[i].Tag == prompt.MicroSummary:
			dropped = true
			continue
		case m.mem.stamped != 0 && msgs[i].Tag == prompt.BatchSummary && msgs[i].Hash() == m.mem.stamped:
			// The batch marker the rolling summary was rehydrated from is
			// superseded like a micro marker (hermes stamps it with
			// MICRO_COMPACT_MARKER_KEY). A summary merged into a tail
			// message leaves that message as it was (hermes drops the
			// row, the user's text in it too).
			if len(msgs[i].Blocks) > 1 {
				orig := &msgs[i]
				push(prompt.NewMessage(orig.Role, orig.Blocks[1:], orig.Event, prompt.Plain))
				continue
			}
			dropped = true
			continue
		case i >= s && i < e && !realUser(&msgs[i]):
			dropped = true
			if i == e-1 {
				push(mk)
				cursor = len(out)
			}
			continue
		}
		push(msgs[i])
		if i == e-1 {
			// The span ended on a user message (cannot happen: exchanges end
			// on assistant/tool rows), keep the marker after it anyway.
			push(mk)
			cursor = len(out)
		}
	}
	m.mem.cursor, m.mem.cursorMark = cursor, mk.Hash()
	m.mem.stamped = 0
	return &prompt.View{Tools: v.Tools, System: v.System, Messages: out}
}

// mergeable reports whether msg is a user turn with string content: a
// transcript message of one text block, or turns merged before.
func mergeable(msg *prompt.Message) bool {
	if !realUser(msg) || (msg.Tag != prompt.Plain && msg.Tag != prompt.Merged) {
		return false
	}
	for i := range msg.Blocks {
		if msg.Blocks[i].Kind != traces.Text {
			return false
		}
	}
	return len(msg.Blocks) == 1 || msg.Tag == prompt.Merged
}

// merge joins two user turns. Each turn's text stays its own block, so every
// merged turn is still carried verbatim and counted as such (prompt.Merged);
// hermes joins them with "\n\n" into one string, which costs the same text
// tokens less one framing per joined turn.
func merge(a, b *prompt.Message) prompt.Message {
	blocks := append(append(make([]traces.Block, 0, len(a.Blocks)+len(b.Blocks)), a.Blocks...), b.Blocks...)
	return prompt.NewMessage(prompt.RoleUser, blocks, a.Event, prompt.Merged)
}
