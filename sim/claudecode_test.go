package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// Rules of the recorded Claude Code replay (issue 22), one test each; each
// fails without its rule.

// recordedCalls replays s under the recorded policy, counting tokens with
// tok (calibrated on the session's bills), and returns its call records.
func recordedCalls(t *testing.T, s *traces.Session, tok estimate.Tokenizer, prewarm bool) []Record {
	t.Helper()
	memo := estimate.NewMemo(tok)
	prov := provider.NewAnthropic(provider.AnthropicOptions{Common: provider.Common{Prices: testOpts().Prices}})
	opts := Options{Prices: testOpts().Prices, Count: memo.CountHash, Prewarm: prewarm,
		Calibrate: func(s *traces.Session) *Calibrator { return NewCalibrator(s, memo) }}
	res, err := Run(context.Background(), s, NewRecorded(), prov, opts)
	require.NoError(t, err)
	var calls []Record
	for _, r := range res.Records {
		if r.Kind == KindCall {
			calls = append(calls, r)
		}
	}
	return calls
}

// recordedReads is the cache read of every call of s's recorded replay
// (one token per byte, the shared floor prewarmed).
func recordedReads(t *testing.T, s *traces.Session) []int64 {
	t.Helper()
	var reads []int64
	for _, r := range recordedCalls(t, s, bytesTok{}, true) {
		reads = append(reads, r.Usage.CacheRead)
	}
	return reads
}

// A recorded call's TTL runs from when its response began, as the log
// shows it (the first logged block, less its decoding), not from the
// model's TTFT after the request: the response of call 1 began ~20 s after
// its request, so its 5-minute entry is read 295 s after its first block,
// 315 s after the request (in the corpus, 5m entries are read up to ~305 s
// after the writing call's first block and missed from ~315 s; see
// run.recordedTiming). Counted from the request the entry had expired.
func TestRecordedTTLFromResponseStart(t *testing.T) {
	u := func(read, write int64) *traces.Usage {
		return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
	}
	msg := func(c byte, n int) []traces.Block { return txt(strings.Repeat(string(c), n)) }
	s := &traces.Session{ID: "ttl", Model: "claude-opus-4-6", Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: msg('a', 2000)},
		{Time: at(20), Kind: traces.Assistant, Blocks: msg('b', 60), Usage: u(0, 7069), LatencyMS: 21000},
		{Time: at(315), Kind: traces.User, Blocks: msg('c', 2000)},
		{Time: at(318), Kind: traces.Assistant, Blocks: msg('d', 60), Usage: u(7069, 2068)},
	}}
	calls := recordedCalls(t, s, bytesTok{}, false)
	require.Len(t, calls, 2)
	require.Greater(t, calls[0].TTFTMS, int64(18000), "the first call's response began ~18.6 s after its request")
	require.Equal(t, int64(7069), calls[1].Usage.CacheRead, "read 295 s after the writing call's first block: alive")
	require.Empty(t, calls[1].MissReason)
}

// Up to Claude Code 2.1.68 the recorded replay marks the last two messages,
// since 2.1.69 the last one (claudecode.MessageMarks): a call after 11
// parallel tool calls adds 23 blocks, more than the API's 20-block
// lookback from the last mark, so only the mark on the assistant message
// finds the previous call's entry (the corpus's 2.0.57 calls of 21 and 23
// blocks read their whole previous prompt).
func TestRecordedMarksByVersion(t *testing.T) {
	session := func(version string) *traces.Session {
		var calls, results []traces.Block
		calls = append(calls, traces.Block{Kind: traces.Text, Text: strings.Repeat("p", 200)})
		for i := range 11 {
			id := fmt.Sprintf("t%d", i)
			calls = append(calls, traces.Block{Kind: traces.ToolUse, ID: id, Name: "Bash", Input: strings.Repeat("i", 100)})
			results = append(results, traces.Block{Kind: traces.ToolResultBlock, ID: id, Text: strings.Repeat("r", 300)})
		}
		u := func(read, write int64) *traces.Usage {
			return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
		}
		return &traces.Session{ID: "marks", Model: "claude-sonnet-4-5", Harness: "claude-code " + version, Events: []traces.Event{
			{Time: at(0), Kind: traces.User, Blocks: txt(strings.Repeat("a", 3000))},
			{Time: at(5), Kind: traces.Assistant, Blocks: calls, Usage: u(0, 8000)},
			{Time: at(6), Kind: traces.ToolResult, Blocks: results},
			{Time: at(10), Kind: traces.Assistant, Blocks: txt("done"), Usage: u(8000, 3400)},
		}}
	}
	secondRead := func(version string) int64 {
		reads := recordedReads(t, session(version))
		require.Len(t, reads, 2)
		return reads[1]
	}
	two, one := secondRead("2.0.57"), secondRead("2.1.70")
	require.Greater(t, two, int64(7000), "2.0.57 marks the assistant message too: the previous entry is in reach")
	t.Logf("second call reads %d (2.0.57) and %d (2.1.70)", two, one)
	require.Less(t, one, two-2000, "2.1.70 marks the last message only: 23 blocks back is past the lookback")
}

// Claude Code rebuilt its system prompt's environment section, which names
// the working directory, for every prompt up to 2.1.31, and keeps it from
// 2.1.32 (claudecode.EnvPerPrompt): after a cd, the next prompt's first
// call reads only the floor's shared part on 1.0.89, and the whole
// previous prompt on 2.1.89.
func TestRecordedWorkingDirectory(t *testing.T) {
	session := func(version string) *traces.Session {
		u := func(read, write int64) *traces.Usage {
			return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
		}
		return &traces.Session{ID: "cwd", Model: "claude-opus-4-1", Harness: "claude-code " + version, Events: []traces.Event{
			{Time: at(0), Kind: traces.User, Blocks: txt(strings.Repeat("a", 2000))},
			// The first call reads 5,000 tokens another session wrote:
			// the floor's shared part.
			{Time: at(5), Kind: traces.Assistant, Blocks: txt(strings.Repeat("b", 500)), Usage: u(5000, 10009)},
			{Time: at(60), Kind: traces.FloorChange, Meta: map[string]string{traces.MetaCause: traces.CauseWorkingDir}},
			{Time: at(60), Kind: traces.User, Blocks: txt(strings.Repeat("c", 500))},
			{Time: at(65), Kind: traces.Assistant, Blocks: txt("d"), Usage: u(5000, 11019)},
		}}
	}
	old, kept := recordedReads(t, session("1.0.89")), recordedReads(t, session("2.1.89"))
	require.Len(t, old, 2)
	require.Equal(t, int64(5000), old[1], "1.0.89: the system text changed, the shared floor is read")
	require.Greater(t, kept[1], int64(15000), "2.1.89: the system text did not change")
}

// Whether Claude Code keeps earlier thinking depends on its version
// (claudecode.ThinkingOf) and, from 2.0.36 to 2.1.83, on a server-side
// flag the log does not show: there the bills decide. A Sonnet 4.5
// session (a model whose API default drops earlier turns' thinking) whose
// bills read the whole previous prompt at each new user turn: 1.0.89 never
// keeps it (each new turn reads up to the first thinking block only, a
// "thinking" miss), 2.1.90 always does, and 2.1.41 starts from the API
// default, is shown otherwise by the first new turn's bill (which it
// prices as stripped), and keeps it from then on.
func TestRecordedThinkingHypothesis(t *testing.T) {
	session := func(version string) *traces.Session {
		u := func(read, write int64) *traces.Usage {
			return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
		}
		think := func(c byte) traces.Block {
			return traces.Block{Kind: traces.Thinking, Text: strings.Repeat(string(c), 800)}
		}
		use := func(id string) traces.Block {
			return traces.Block{Kind: traces.ToolUse, ID: id, Name: "Bash", Input: strings.Repeat("i", 90)}
		}
		res := func(id string) []traces.Block {
			return []traces.Block{{Kind: traces.ToolResultBlock, ID: id, Text: strings.Repeat("r", 300)}}
		}
		s := &traces.Session{ID: "think", Format: "claude-code", Model: "claude-sonnet-4-5-20250929", Harness: "claude-code " + version}
		s.Events = []traces.Event{{Time: at(0), Kind: traces.User, Blocks: txt(strings.Repeat("a", 2000))}}
		prompt, t0 := int64(2000), 0
		for turn := range 4 {
			id := fmt.Sprintf("u%d", turn)
			// A turn: thinking and a tool call, its result, an answer; the
			// bill reads the whole previous prompt each time.
			s.Events = append(s.Events,
				traces.Event{Time: at(t0 + 5), Kind: traces.Assistant, Blocks: []traces.Block{think(byte('k' + turn)), use(id)}, Usage: u(0, 0)},
				traces.Event{Time: at(t0 + 6), Kind: traces.ToolResult, Blocks: res(id)},
				traces.Event{Time: at(t0 + 10), Kind: traces.Assistant, Blocks: txt(strings.Repeat("t", 100)), Usage: u(0, 0)},
				traces.Event{Time: at(t0 + 30), Kind: traces.User, Blocks: txt(strings.Repeat(string(byte('b'+turn)), 300))})
			t0 += 30
		}
		// The bills: each call reads the previous call's prompt, thinking
		// kept, and writes the rest.
		var last int64
		for i := range s.Events {
			e := &s.Events[i]
			switch e.Kind {
			case traces.Assistant:
				e.Usage.CacheRead, e.Usage.CacheWrite5m = last, prompt-last
				last = prompt
				for _, b := range e.Blocks {
					prompt += int64(len(b.Text) + len(b.Input))
				}
			case traces.User, traces.ToolResult:
				if i > 0 {
					for _, b := range e.Blocks {
						prompt += int64(len(b.Text))
					}
				}
			}
		}
		s.Events = s.Events[:len(s.Events)-1] // end on an answer
		return s
	}
	run := func(version string) []Record {
		calls := recordedCalls(t, session(version), bytesTok{}, false)
		require.Len(t, calls, 8)
		return calls
	}
	// Calls 2, 4 and 6 (0-based) open a new user turn after a turn with
	// thinking.
	never, always, flagged := run("1.0.89"), run("2.1.90"), run("2.1.41")
	for _, c := range []int{2, 4, 6} {
		require.Equal(t, provider.MissThinking, never[c].MissReason, "1.0.89, call %d", c)
		require.Less(t, never[c].Usage.CacheRead, never[c].Recorded.CacheRead*3/4, "1.0.89, call %d reads up to a dropped thinking block", c)
		require.Greater(t, always[c].Usage.CacheRead, never[c].Recorded.CacheRead*9/10, "2.1.90, call %d reads the previous prompt", c)
		_, weighed := always[c].DetailValue(DetailThinkingKept)
		require.False(t, weighed, "2.1.90 has nothing to weigh")
	}
	v, ok := flagged[2].DetailValue(DetailThinkingKept)
	require.True(t, ok)
	require.Equal(t, 1.0, v, "the bill of call 2 read past the first thinking block")
	require.Equal(t, provider.MissThinking, flagged[2].MissReason, "call 2 itself is priced on the API default")
	for _, c := range []int{4, 6} {
		require.Greater(t, flagged[c].Usage.CacheRead, flagged[c].Recorded.CacheRead*9/10, "2.1.41, call %d: kept from the bill of call 2 on", c)
	}
}

// Claude Code sends its user context (CLAUDE.md and the like) as a first
// message no cache mark ends, so after a compaction the first call reads
// the tools and system prompt only and writes the context again
// (run.contextAfter). The inferred floor holds both: on 1.0.89, whose
// first call read the shared 5,000 tokens, the floor is cut there at the
// first compaction (the main system prompt goes with the context); the
// bill after it reads the true end of the system prompt (8,000), where the
// second compaction cuts. On 2.0.57 nothing is cut until a compaction's
// bill says, so the first compaction still reads the whole floor.
func TestRecordedContextAfterCompaction(t *testing.T) {
	session := func(version string) *traces.Session {
		u := func(read, write int64) *traces.Usage {
			return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
		}
		// Floor: 5,000 shared + 3,000 system + 4,000 context.
		return &traces.Session{ID: "ctx", Format: "claude-code", Model: "claude-opus-4-1", Harness: "claude-code " + version, Events: []traces.Event{
			{Time: at(0), Kind: traces.User, Blocks: txt(strings.Repeat("a", 1000))},
			{Time: at(5), Kind: traces.Assistant, Blocks: txt(strings.Repeat("b", 100)), Usage: u(5000, 8000)},
			{Time: at(20), Kind: traces.User, Blocks: txt(strings.Repeat("c", 500))},
			{Time: at(25), Kind: traces.Assistant, Blocks: txt(strings.Repeat("d", 100)), Usage: u(13000, 600)},
			{Time: at(60), Kind: traces.User, Summary: true, Blocks: txt(strings.Repeat("s", 800))},
			{Time: at(65), Kind: traces.Assistant, Blocks: txt(strings.Repeat("e", 100)), Usage: u(8000, 4800)},
			{Time: at(80), Kind: traces.User, Blocks: txt(strings.Repeat("f", 300))},
			{Time: at(85), Kind: traces.Assistant, Blocks: txt(strings.Repeat("g", 100)), Usage: u(12800, 400)},
			{Time: at(120), Kind: traces.User, Summary: true, Blocks: txt(strings.Repeat("t", 800))},
			{Time: at(125), Kind: traces.Assistant, Blocks: txt(strings.Repeat("h", 100)), Usage: u(8000, 4800)},
		}}
	}
	near := func(t *testing.T, got, want int64, what string) {
		t.Helper()
		if got < want-150 || got > want+150 {
			t.Errorf("%s: read %d, want about %d", what, got, want)
		}
	}
	old, v2 := recordedReads(t, session("1.0.89")), recordedReads(t, session("2.0.57"))
	require.Len(t, old, 5)
	near(t, old[2], 5000, "1.0.89, after the first compaction: the shared floor")
	near(t, old[4], 8000, "1.0.89, after the second: the system prompt's end, as the first one's bill read")
	near(t, v2[2], 12000, "2.0.57, after the first compaction: no bill has said yet")
	near(t, v2[4], 8000, "2.0.57, after the second")
}

type quarterTok struct{}

func (quarterTok) Name() string          { return "quarter" }
func (quarterTok) Count(text string) int { return (len(text) + 2) / 4 }

// Claude Code 1.0.60 to 1.0.x clears the oldest results of its file and
// shell tools before a request once the last response's usage passed the
// warning threshold (claudecode.Microcompact; the transcript keeps them
// whole): 15 Read results of 10,000 tokens, the last bill at 141K, and the
// 16th call sends 11 of them cleared, reading only the prompt before the
// first, as its bill shows. 1.0.59 has no such rule: it reads the whole
// previous prompt and sends 110K tokens the bill did not.
func TestRecordedMicrocompact(t *testing.T) {
	session := func(version string) *traces.Session {
		s := &traces.Session{ID: "micro", Format: "claude-code", Model: "claude-opus-4-1", Harness: "claude-code " + version,
			Events: []traces.Event{{Time: at(0), Kind: traces.User, Blocks: txt(strings.Repeat("a", 4000))}}}
		prompt, last := int64(1000), int64(0)
		bill := func() *traces.Usage {
			u := &traces.Usage{Input: 1, CacheRead: last, CacheWrite5m: prompt - last - 1, Output: 5}
			last = prompt
			return u
		}
		for i := range 16 {
			id := fmt.Sprintf("r%02d", i)
			use := traces.Block{Kind: traces.ToolUse, ID: id, Name: "Read", Input: strings.Repeat("p", 36)}
			if i == 15 {
				// The bill of the clearing call: 11 results of 10,000
				// tokens are 9 tokens each, and it reads up to the first.
				prompt -= 11 * (10000 - 9)
				last = 1000 + 10
			}
			s.Events = append(s.Events,
				traces.Event{Time: at(10*i + 5), Kind: traces.Assistant, Blocks: []traces.Block{use}, Usage: bill()},
				traces.Event{Time: at(10*i + 6), Kind: traces.ToolResult, Blocks: []traces.Block{{Kind: traces.ToolResultBlock, ID: id, Text: strings.Repeat(string(rune('b'+i)), 40000)}}})
			prompt += 10 + 10000
		}
		return s
	}
	run := func(version string) Record {
		calls := recordedCalls(t, session(version), quarterTok{}, false)
		return calls[len(calls)-1]
	}
	cleared, whole := run("1.0.89"), run("1.0.59")
	require.InDelta(t, cleared.Recorded.Prompt(), cleared.Prompt, 1000, "11 of 15 results cleared, as billed")
	require.Less(t, cleared.Usage.CacheRead, int64(2000), "the cache breaks at the first cleared result")
	require.Greater(t, whole.Usage.CacheRead, int64(140000), "1.0.59 reads the whole previous prompt")
}

// Claude Code sizes its context for that threshold with the last
// response's final output tokens, which a 1.0.x log does not always keep
// (run.finalOutput; corpus SWORDIntel 77570c3a line 197 logs 1 for a Bash
// call). Here the call before the clearing logs 1 output token where the
// session's calls billed 100 for the same content: its prompt, 134,950
// tokens, passes the 135,000-token threshold only with the final count,
// and the next call clears 11 of 15 results, as its bill shows.
func TestRecordedMicrocompactFinalOutput(t *testing.T) {
	s := &traces.Session{ID: "final", Format: "claude-code", Model: "claude-opus-4-1", Harness: "claude-code 1.0.89",
		Events: []traces.Event{{Time: at(0), Kind: traces.User, Blocks: txt(strings.Repeat("a", 4000))}}}
	prompt, last := int64(1810), int64(0)
	for i := range 16 {
		id := fmt.Sprintf("r%02d", i)
		use := traces.Block{Kind: traces.ToolUse, ID: id, Name: "Read", Input: strings.Repeat("p", 36)}
		out := int64(100)
		switch i {
		case 14:
			out = 1 // the stream's starting count, logged
		case 15:
			prompt -= 11 * (9500 - 9)
			last = 1000 + 10
		}
		u := &traces.Usage{Input: 1, CacheRead: last, CacheWrite5m: prompt - last - 1, Output: out}
		last = prompt
		s.Events = append(s.Events,
			traces.Event{Time: at(10*i + 5), Kind: traces.Assistant, Blocks: []traces.Block{use}, Usage: u},
			traces.Event{Time: at(10*i + 6), Kind: traces.ToolResult, Blocks: []traces.Block{{Kind: traces.ToolResultBlock, ID: id, Text: strings.Repeat(string(rune('b'+i)), 38000)}}})
		prompt += 10 + 9500
	}
	calls := recordedCalls(t, s, quarterTok{}, false)
	require.Equal(t, int64(134950), calls[14].Recorded.Prompt(), "the fixture: the 15th bill is 50 tokens short of the threshold")
	last15 := calls[len(calls)-1]
	require.InDelta(t, last15.Recorded.Prompt(), last15.Prompt, 1000, "11 of 15 results cleared, as billed")
	require.Less(t, last15.Usage.CacheRead, int64(2000), "the cache breaks at the first cleared result")
}

// Claude Code 1.0.x sets a turn's thinking budget from its prompt's
// keywords (claudecode.ThinkingBudget), and the API keys cached messages on
// the thinking setting: the turn that says "think hard" reads only the
// shared floor (corpus SWORDIntel 5f2d5220 line 186), and the next one,
// which says nothing and so turns thinking off again, reads what the last
// call without thinking wrote, not the previous call. 2.0.57's toggle is not
// in the prompt, so it reads on.
func TestRecordedThinkingBudget(t *testing.T) {
	session := func(version string) *traces.Session {
		u := func(read, write int64) *traces.Usage {
			return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
		}
		return &traces.Session{ID: "budget", Format: "claude-code", Model: "claude-sonnet-4-20250514", Harness: "claude-code " + version, Events: []traces.Event{
			{Time: at(0), Kind: traces.User, Blocks: txt("fix the parser " + strings.Repeat("a", 2000))},
			{Time: at(5), Kind: traces.Assistant, Blocks: txt(strings.Repeat("b", 200)), Usage: u(5000, 2220)},
			{Time: at(30), Kind: traces.User, Blocks: txt("now think hard about the edge cases " + strings.Repeat("c", 500))},
			{Time: at(35), Kind: traces.Assistant, Blocks: txt(strings.Repeat("d", 200)), Usage: u(5000, 2960)},
			{Time: at(60), Kind: traces.User, Blocks: txt("ok, commit it " + strings.Repeat("e", 300))},
			{Time: at(65), Kind: traces.Assistant, Blocks: txt(strings.Repeat("f", 200)), Usage: u(7220, 1260)},
		}}
	}
	old, v2 := recordedReads(t, session("1.0.89")), recordedReads(t, session("2.0.57"))
	require.Len(t, old, 3)
	require.Less(t, old[1], int64(5200), "1.0.89: thinking on, only the shared floor is read")
	require.InDelta(t, 7220, old[2], 100, "1.0.89: thinking off again, the first call's entry is read")
	require.Greater(t, v2[1], int64(7000), "2.0.57 reads the previous prompt")
	require.Greater(t, v2[2], int64(7900), "2.0.57 reads the previous prompt, its second call's")
}

// From 2.0.0 to 2.1.46 a turn's thinking budget comes from the setting
// Claude Code logs with each typed prompt (thinkingMetadata); a skill the
// person types (/name) carries none and turns thinking off, so the cached
// messages break at each switch, both ways. A skill the model calls inside
// a turn changes nothing, and from 2.1.47 the log has no per-prompt
// setting (thinking is one session setting).
func TestRecordedPromptThinkingSetting(t *testing.T) {
	u := func(read, write int64) *traces.Usage {
		return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
	}
	prompt := func(s int, text, setting string) traces.Event {
		e := traces.Event{Time: at(s), Kind: traces.User, Blocks: txt(text)}
		if setting != "" {
			e.Meta = map[string]string{traces.MetaThinking: setting}
		}
		return e
	}
	meta := func(s int, text string) traces.Event {
		return traces.Event{Time: at(s), Kind: traces.User, Blocks: txt(text), Meta: map[string]string{"meta": "true"}}
	}
	session := func(version, on, mid string) *traces.Session {
		return &traces.Session{ID: "setting", Format: "claude-code", Model: "claude-opus-4-5-20251101", Harness: "claude-code " + version, Events: []traces.Event{
			prompt(0, "fix the parser "+strings.Repeat("a", 2000), on),
			{Time: at(5), Kind: traces.Assistant, Blocks: txt(strings.Repeat("b", 200)), Usage: u(5000, 2220)},
			prompt(30, "<command-message>review</command-message>\n<command-name>/review</command-name>", mid),
			meta(30, "Review the change. "+strings.Repeat("c", 500)),
			{Time: at(35), Kind: traces.Assistant, Blocks: txt(strings.Repeat("d", 200)), Usage: u(5000, 3000)},
			prompt(60, "ok, commit it "+strings.Repeat("e", 300), on),
			{Time: at(65), Kind: traces.Assistant, Blocks: txt(strings.Repeat("f", 200)), Usage: u(5000, 3600)},
		}}
	}
	for _, c := range []struct{ version, on string }{{"2.1.29", "max=31999"}, {"2.0.57", "level=high"}} {
		reads := recordedReads(t, session(c.version, c.on, ""))
		require.Len(t, reads, 3, c.version)
		require.Less(t, reads[1], int64(5200), "%s: the typed skill turns thinking off: only the floor is read", c.version)
		require.InDelta(t, 7220, reads[2], 100, "%s: the next prompt turns it on again: the first call's entry, not the second's", c.version)
	}
	// 2.1.72 logs no per-prompt setting; given some, they mean nothing.
	reads := recordedReads(t, session("2.1.72", "max=31999", "max=0"))
	require.Greater(t, reads[1], int64(7000), "2.1.72: no per-prompt setting, the previous prompt is read")
	require.Greater(t, reads[2], int64(7700), "2.1.72: the previous prompt is read")

	// The model calls a skill mid-turn: its command message follows a tool
	// result and the turn's setting stands (corpus 2.0.57 703e4528).
	midTurn := &traces.Session{ID: "skill-tool", Format: "claude-code", Model: "claude-opus-4-5-20251101", Harness: "claude-code 2.0.57", Events: []traces.Event{
		prompt(0, "make a skill "+strings.Repeat("a", 2000), "level=high"),
		{Time: at(5), Kind: traces.Assistant, Blocks: []traces.Block{{Kind: traces.ToolUse, ID: "s1", Name: "Skill", Text: `{"command":"create"}`}}, Usage: u(5000, 2220)},
		{Time: at(6), Kind: traces.ToolResult, Blocks: []traces.Block{{Kind: traces.ToolResultBlock, ID: "s1", Text: "Launching skill: create"}}},
		prompt(6, "<command-message>The \"create\" skill is running</command-message>", ""),
		meta(6, "Create a skill. "+strings.Repeat("c", 500)),
		{Time: at(10), Kind: traces.Assistant, Blocks: txt(strings.Repeat("d", 200)), Usage: u(7000, 600)},
	}}
	reads = recordedReads(t, midTurn)
	require.Greater(t, reads[1], int64(7000), "a skill the model called keeps the turn's thinking")
}

// Once a bill has said where the system prompt ends (a call whose
// thinking changed read only that far), the inferred floor's context part
// moves into the first message, so the next change reads no further than
// the system prompt either (corpus 2.1.29 6b7ca74d: 35,891 each time, of a
// floor the first bill put at 49K); calls that go back to a setting still
// read what was written under it.
func TestRecordedContextMovesAtThinkingChange(t *testing.T) {
	u := func(read, write int64) *traces.Usage {
		return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
	}
	on := map[string]string{traces.MetaThinking: "max=31999"}
	s := &traces.Session{ID: "move", Format: "claude-code", Model: "claude-opus-4-5-20251101", Harness: "claude-code 2.1.29", Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt("<command-message>plan</command-message>\n<command-name>/plan</command-name>")},
		{Time: at(0), Kind: traces.User, Blocks: txt("Plan the work. " + strings.Repeat("a", 2000)), Meta: map[string]string{"meta": "true"}},
		{Time: at(5), Kind: traces.Assistant, Blocks: txt(strings.Repeat("b", 200)), Usage: u(5000, 12300)},
		{Time: at(30), Kind: traces.User, Blocks: txt("go " + strings.Repeat("c", 500)), Meta: on},
		{Time: at(35), Kind: traces.Assistant, Blocks: txt(strings.Repeat("d", 200)), Usage: u(9000, 9000)},
		{Time: at(60), Kind: traces.User, Blocks: txt("think less " + strings.Repeat("e", 300)), Meta: map[string]string{traces.MetaThinking: "max=10000"}},
		{Time: at(65), Kind: traces.Assistant, Blocks: txt(strings.Repeat("f", 200)), Usage: u(9000, 9800)},
		{Time: at(90), Kind: traces.User, Blocks: txt("again " + strings.Repeat("g", 300)), Meta: on},
		{Time: at(95), Kind: traces.Assistant, Blocks: txt(strings.Repeat("h", 200)), Usage: u(18000, 600)},
	}}
	reads := recordedReads(t, s)
	require.Len(t, reads, 4)
	require.Greater(t, reads[1], int64(14000), "no bill has said where the system prompt ends: the floor is read whole")
	require.InDelta(t, 9000, reads[2], 50, "the second bill said: the context goes with the messages")
	require.Greater(t, reads[3], int64(17000), "back to the setting of the second call, within the TTL: its entry is read")
}
