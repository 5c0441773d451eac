package codex

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/chatlog"
	"github.com/ctxsim/ctxsim/traces/internal/jsonl"
)

// history is what the reader keeps of the conversation to replay Codex's
// own rewrites of it: a local compaction rebuilds the context from the
// initial context and the user messages, a rollback drops the last user
// turns.
type history struct {
	// initial is the context Codex injects before the first user message
	// (developer instructions, AGENTS.md, environment).
	initial []traces.Block
	started bool
	// users are the person's messages since the start or the last
	// compaction (a compaction's kept ones first).
	users []string
	// turns are the events of the user messages since then, each a turn's
	// start.
	turns []int
	// rewind is the event the next user message follows after a
	// rollback, -1 when none is pending.
	rewind int
}

type compacted struct {
	Message            string            `json:"message"`
	ReplacementHistory []json.RawMessage `json:"replacement_history"`
}

// compacted applies a compaction: a Compaction event, then the context it
// leaves as a continuation summary (a User event with Summary set, which
// the replay puts in place of the whole history).
//
//   - Remote (message empty): replacement_history is the new context, in
//     order: the user messages it kept, the developer message and the
//     encrypted compaction item (codex-rs/core/src/compact_remote.rs;
//     the API captures' trace_compact_codex.json sends exactly that).
//   - Local, newer CLIs: replacement_history is given too.
//   - Local, older CLIs (no replacement_history): the initial context, the
//     latest user messages up to 20,000 approximate tokens (4 bytes each),
//     the last one cut in the middle, then the summary
//     (codex-rs/core/src/compact.rs, build_compacted_history).
func (rd *reader) compacted(at time.Time, raw json.RawMessage) {
	var c compacted
	if err := json.Unmarshal(raw, &c); err != nil {
		rd.sc.Warn(jsonl.WarnInvalidJSON)
		return
	}
	rd.call = -1
	ev := traces.Event{Time: at, Kind: traces.Compaction, Meta: map[string]string{"compaction": "local"}}
	var blocks []traces.Block
	switch {
	case len(c.ReplacementHistory) > 0:
		if c.Message == "" {
			ev.Meta["compaction"] = "remote"
		}
		blocks = rd.replacement(c.ReplacementHistory)
	case c.Message != "":
		blocks = rd.localHistory(c.Message)
	}
	rd.push(ev)
	if len(blocks) > 0 {
		rd.input(traces.Event{Time: at, Kind: traces.User, Summary: true, Blocks: blocks})
	}
	rd.hist.turns, rd.hist.rewind = nil, -1
}

// replacement is the context a replacement_history leaves, as blocks.
func (rd *reader) replacement(items []json.RawMessage) []traces.Block {
	var out []traces.Block
	rd.hist.users = nil
	for _, raw := range items {
		var it responseItem
		if json.Unmarshal(raw, &it) != nil {
			rd.sc.Warn(jsonl.WarnInvalidJSON)
			continue
		}
		switch it.Type {
		case "message", "agent_message":
			bs := texts(it.Content, traces.Text)
			if it.Role == "user" && !contextual(bs) {
				rd.hist.users = append(rd.hist.users, joinText(bs))
			}
			out = append(out, bs...)
		case "compaction", "compaction_summary":
			if it.EncryptedContent != "" {
				out = append(out, opaque(traces.Text, "compaction", it.EncryptedContent, compactionTokens(len(it.EncryptedContent))))
			}
		case "reasoning":
			if n := max(0, (len(it.EncryptedContent)-reasoningOverhead)*141/1000); n > 0 {
				out = append(out, opaque(traces.Thinking, "reasoning", it.EncryptedContent, n))
			}
		case "ghost_snapshot":
		default:
			// A call or output the compaction kept: its text as the
			// model reads it.
			out = append(out, traces.Block{Kind: traces.Text, Text: chatlog.Arguments(raw)})
		}
	}
	return out
}

// compactUserTokens is Codex's budget for the user messages a local
// compaction keeps (compact.rs, COMPACT_USER_MESSAGE_MAX_TOKENS), counted
// as Codex approximates: 4 bytes a token (truncate.rs, approx_token_count).
const compactUserTokens = 20_000

// localHistory is the context an older local compaction leaves.
func (rd *reader) localHistory(summary string) []traces.Block {
	var kept []string
	left := compactUserTokens
	for i := len(rd.hist.users) - 1; i >= 0 && left > 0; i-- {
		m := rd.hist.users[i]
		n := (len(m) + 3) / 4
		if n <= left {
			kept = append(kept, m)
			left -= n
			continue
		}
		kept = append(kept, truncateMiddle(m, left))
		break
	}
	out := append([]traces.Block(nil), rd.hist.initial...)
	rd.hist.users = rd.hist.users[:0]
	for i := len(kept) - 1; i >= 0; i-- {
		out = append(out, traces.Block{Kind: traces.Text, Text: kept[i]})
		rd.hist.users = append(rd.hist.users, kept[i])
	}
	return append(out, traces.Block{Kind: traces.Text, Text: summary})
}

// truncateMiddle keeps about tokens×4 bytes of s, half from each end, as
// Codex's truncate_text does, with its marker in between.
func truncateMiddle(s string, tokens int) string {
	keep := tokens * 4
	if keep >= len(s) {
		return s
	}
	head, tail := keep/2, keep-keep/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	cut := (len(s) - head - (len(s) - start) + 3) / 4
	return s[:head] + "…" + strconv.Itoa(cut) + " tokens truncated…" + s[start:]
}

// rollBack applies thread_rolled_back{num_turns}: the last n user turns
// leave the conversation (codex-rs/core/src/context_manager/history.rs,
// drop_last_n_user_turns). The next user message follows the event before
// the first dropped one (traces.MetaRewindTo); the dropped calls stay
// billed.
func (rd *reader) rollBack(n int) {
	turns := rd.hist.turns
	if n <= 0 || len(turns) == 0 {
		return
	}
	if n > len(turns) {
		rd.sc.Warn(WarnRollbackPast)
		n = len(turns)
	}
	cut := turns[len(turns)-n]
	rd.hist.turns = turns[:len(turns)-n]
	rd.hist.users = rd.hist.users[:max(0, len(rd.hist.users)-n)]
	rd.hist.rewind = cut - 1
	rd.call = -1
}

// compactionTokens sizes an encrypted compaction item from its length.
// Calibrated on the three compactions of the API captures
// (trace_compact_codex.json): the same three messages cost 16,697 tokens
// without the item and 17,428, 17,525 and 17,588 with items of 4,580,
// 5,348 and 5,880 characters (the capture notes each truncated item's
// original length); less the item's framing (about 8 tokens, from
// trace_codex.json), the items cost 723, 820 and 883 tokens, which
// 159 + length × 0.1233 gives within 2 tokens. The compacting calls
// billed 729, 826 and 889 output tokens for them: an item costs as input
// about what it cost as output.
func compactionTokens(n int) int {
	if n <= 0 {
		return 0
	}
	return 159 + n*1233/10000
}

// agentMessageTokens sizes an encrypted inter-agent message from its
// length: no capture shows one billed, so it is the Fernet arithmetic
// (base64 of 57 bytes of envelope and the ciphertext) at 4 bytes of text
// a token, an assumption.
func agentMessageTokens(n int) int {
	return max(0, (n*3/4-57)/4)
}

// dynamicTool is a tool the client gave the session
// (session_meta.dynamic_tools; codex-rs/protocol/src/dynamic_tools.rs):
// sent with every request as a function tool unless it is deferred (loaded
// through tool search) or kept out of the context.
type dynamicTool struct {
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	InputSchema      json.RawMessage `json:"inputSchema"`
	DeferLoading     bool            `json:"deferLoading"`
	ExposeToContext  *bool           `json:"exposeToContext"`
	InputSchemaSnake json.RawMessage `json:"input_schema"`
}

// toolSchemas are the floor's blocks for the dynamic tools sent.
func toolSchemas(tools []dynamicTool) []traces.Block {
	var out []traces.Block
	for _, t := range tools {
		if t.DeferLoading || (t.ExposeToContext != nil && !*t.ExposeToContext) {
			continue
		}
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = t.InputSchemaSnake
		}
		def, err := json.Marshal(struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Strict      bool            `json:"strict"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
		}{"function", t.Name, t.Description, false, schema})
		if err != nil { // a schema that is not JSON: its text as logged
			def = []byte(strconv.Quote(t.Description + " " + string(schema)))
		}
		out = append(out, traces.Block{Kind: traces.ToolSchema, Name: t.Name, Input: string(def)})
	}
	return out
}
