package cacheplan

import "github.com/ctxsim/ctxsim/policies/prompt"

// ClaudeCode reproduces the breakpoints Claude Code places, as its recorded
// usage shows them: the end of the floor's stable shared part, the end of
// the system prompt, and the end of the last message. All marks share one
// TTL (each recorded session bills all its writes at 5m or all at 1h).
//
// The stable shared part is the floor up to the block before the last
// system block when the system prompt has two or more blocks (the engine
// renders Claude Code's per-session system text, working directory, git
// status and the like, as the last system block), else the tool schemas.
//
// Evidence, from the 169 calls of the sanitized sessions in
// testdata/claude-code (the 4d5611e5 session and its two subagents, short,
// subagent, tool_heavy; Claude Code 2.1.38 and 2.1.39, claude-opus-4-6 and
// claude-sonnet-4-5):
//
//   - The last message is marked at its end. 160 calls bill input_tokens of
//     1 to 3 and 7 more (the Sonnet subagent) 4 to 7, so only the reply's
//     framing follows the last breakpoint (4d5611e5 line 26: input 1, write
//     1598, read 26447). 157 of the 161 calls that read anything read
//     exactly the previous call's prompt less its input: the previous
//     call's last-message entry, found by the lookback.
//   - The end of the system prompt is marked. The 4 other reads stop at the
//     floor: after the compaction at 4d5611e5 line 755 and the fresh
//     conversation at line 1502 the first call reads 21478 tokens though
//     every message changed; after an /mcp reconnect (tool_heavy line 27) a
//     call reads 18014. Only a breakpoint leaves an entry there, and every
//     call in between refreshed it. (The fourth, subagent line 72, reads
//     102 tokens more than the previous prompt: an interrupted request,
//     absent from the log, wrote it.)
//   - A stable part of the floor is marked too. A session's first call reads
//     11442 (4d5611e5), 11515 (short) or 17915 (tool_heavy, subagent)
//     tokens that another session wrote and writes the rest of its floor:
//     tool_heavy's shared prefix stops 99 tokens before its floor ends at
//     18014, so an entry sits inside the floor, at the end of what sessions
//     share.
//   - Nothing inside the history is marked that the logs can see. No call
//     reads an older prefix than the previous prompt, and only two calls
//     bill a large input, both after parallel tool calls whose results
//     finished out of order: tool_heavy line 34 (input 47) and subagent
//     line 17 (input 1562). The result that finished last is marked, the
//     API orders results by tool_use, and the results after the marked one
//     are billed as input (tool_heavy: the 132-character Glob result that
//     finished first; subagent: the last two of four search results).
//
// Checked against the corpus (../shared/traces/corpus, 2,181 main-chain
// calls of Claude Code 1.0.x to 2.1.x) for a mark on the second-to-last
// message as well (issue 14 item 9), which only a read after a rewind or
// a re-send can show: 2,008 reads land exactly on the previous call's
// last-message entry, 9 on an older call's, 30 at the floor, 100 are cold,
// 28 read past the previous prompt (unlogged requests). Only 6 land
// between two calls' ends, the reads a second mark could explain, and
// the provider's sub-prefix caching explains them as well:
// getmany-software/llm-guard aa57d486 line 201, an edited user message
// after a cold call, reads 84,820, the end of the second-to-last message
// of the call it rewinds (85,196 less the 376-token message it replaced),
// which a second mark would have written and which the prefixes cached
// inside a written entry also hold (see AnthropicStep). Replaying the
// corpus with the last two messages marked (before the sub-prefix rule)
// moved the fidelity total by $0.01 of $355 (observed error +0.60% both
// ways) and the four sessions of testdata/claude-code not at all: the
// logs do not tell the two apart, so the planner keeps the one mark its
// evidence above requires.
//
// Results that finished out of order: the planner marks the result
// received last (traces.Block.Early marks the ones sent after it), so
// their tail is input in that call and a write in the next, as billed
// (47 and 1562 tokens above). The logs cannot tell a marker on an earlier
// message from none: no
// recorded turn adds more than 20 blocks, so the lookback always reaches
// the previous entry. If Claude Code does place one, turns of over 20
// blocks are where this planner overbills.
//
// Messages is how many of the last messages are marked (0 means 1): Claude
// Code marked the last two up to 2.1.68 and the last one since
// (claudecode.MessageMarks). The recorded replay takes it from the log's
// version; the claude-code preset, a policy for any session, marks one.
type ClaudeCode struct{ Messages int }

// Name implements Planner.
func (ClaudeCode) Name() string { return "claude-code" }

// Plan implements Planner.
func (c ClaudeCode) Plan(req *prompt.Request, ttl prompt.TTL) {
	if ttl == prompt.NoCache {
		return
	}
	m := make(marker, 0, 2*prompt.MaxBreakpoints) // on the stack: a plan allocates nothing
	if sys := systemBlocks(req); len(sys) >= 2 {
		m = m.add(sys[len(sys)-2])
		m = m.add(sys[len(sys)-1])
	} else {
		m = m.add(lastOf(req, prompt.Tools))
		m = m.add(lastOf(req, prompt.System))
	}
	var buf [prompt.MaxBreakpoints]span
	for _, s := range lastMessages(req, max(c.Messages, 1), buf[:0]) {
		m = m.add(arrivedLast(req, s))
	}
	m.apply(req, ttl)
}

// arrivedLast is where Claude Code's mark goes in a message: its last
// block that can carry one and was not received before the result the
// mark sits on (traces.Block.Early).
func arrivedLast(req *prompt.Request, s span) int {
	early := func(i int) bool { return req.Blocks[i].Src != nil && req.Blocks[i].Src.Early }
	m := markBlock(req, s)
	if m < 0 || !early(m) {
		return m
	}
	for i := m - 1; i >= s.lo; i-- {
		if req.Blocks[i].Cacheable && !early(i) {
			return i
		}
	}
	return m
}
