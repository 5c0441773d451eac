package prompt

import (
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

// TestStripsThinking pins the extended-thinking page's defaults per model
// (see StripsThinking for the source).
func TestStripsThinking(t *testing.T) {
	for _, tt := range []struct {
		model string
		want  bool
	}{
		{"claude-3-7-sonnet-20250219", true},
		{"claude-sonnet-4-20250514", true},
		{"claude-sonnet-4-5-20250929", true},
		{"claude-sonnet-4-6", false},
		{"claude-sonnet-5", false},
		{"claude-opus-4-20250514", true},
		{"claude-opus-4-1-20250805", true},
		{"claude-opus-4-5-20251101", false},
		{"claude-opus-4-6", false},
		{"claude-opus-4-6[1m]", false},
		{"claude-opus-4-8", false},
		{"claude-opus-5", false},
		{"claude-haiku-4-5-20251001", true},
		{"claude-3-5-haiku-20241022", true},
		{"claude-mythos-5", false},
		{"anthropic/claude-sonnet-4", true},
		{"gpt-5.4", true},
		{"gpt-5.5", true},
		{"gpt-5-codex", true},
		{"openai/o3-mini", true},
		{"o4-mini", true},
		{"gpt-4.1", false},
		{"gpt-4o", false},
		{"o1x", false},
		{"m", false},
	} {
		if got := StripsThinking(tt.model); got != tt.want {
			t.Errorf("StripsThinking(%q) = %v, want %v", tt.model, got, tt.want)
		}
	}
}

// With ThinkingByModel, a new plain user turn drops the earlier turn's
// thinking for a model that strips it and keeps it for one that does not;
// a tool-result turn keeps it either way.
func TestBuilderThinkingByModel(t *testing.T) {
	count := func(b *traces.Block, _ uint64) int { return len(b.Text) + b.Tokens }
	think := traces.Block{Kind: traces.Thinking, Name: "th", Tokens: 40}
	use := traces.Block{Kind: traces.ToolUse, ID: "u1", Name: "Read", Tokens: 10}
	res := traces.Block{Kind: traces.ToolResultBlock, ID: "u1", Tokens: 20}
	msgs := []Message{
		NewMessage(RoleUser, []traces.Block{{Kind: traces.Text, Text: "question"}}, 0, Plain),
		NewMessage(RoleAssistant, []traces.Block{think, use}, 1, Plain),
		NewMessage(RoleTool, []traces.Block{res}, 2, Plain),
	}
	next := NewMessage(RoleUser, []traces.Block{{Kind: traces.Text, Text: "thanks"}}, 3, Plain)
	for _, tt := range []struct {
		model       string
		toolTurn    int // thinking blocks in the prompt after the tool result
		newUserTurn int // after a new plain user message
	}{
		{"claude-sonnet-4-5-20250929", 1, 0},
		{"claude-opus-4-1-20250805", 1, 0},
		{"claude-opus-4-6", 1, 1},
		{"claude-sonnet-4-6", 1, 1},
	} {
		b := NewBuilder(count, Wire{ThinkingByModel: true})
		thinking := func(r *Request) int {
			n := 0
			for i := range r.Blocks {
				if r.Blocks[i].Kind == traces.Thinking {
					n++
				}
			}
			return n
		}
		v := &View{Messages: msgs}
		if n := thinking(b.Build(tt.model, v, 0)); n != tt.toolTurn {
			t.Errorf("%s, tool turn: %d thinking blocks, want %d", tt.model, n, tt.toolTurn)
		}
		v = &View{Messages: append(append([]Message(nil), msgs...), next)}
		r := b.Build(tt.model, v, 0)
		if n := thinking(r); n != tt.newUserTurn {
			t.Errorf("%s, new user turn: %d thinking blocks, want %d", tt.model, n, tt.newUserTurn)
		}
		if want := 8 + 40*tt.newUserTurn + 10 + 20 + 6; r.Total != want {
			t.Errorf("%s: prompt %d tokens, want %d", tt.model, r.Total, want)
		}
	}
}

// A harness that asks the API to keep earlier thinking (KeepThinking)
// keeps it on a model that strips by default; a request that drops a block
// says where (StripAt: the 8 tokens of the question before it), and one
// that drops none says 0. Switching KeepThinking between builds rebuilds
// from the first changed message.
func TestBuilderKeepThinking(t *testing.T) {
	count := func(b *traces.Block, _ uint64) int { return len(b.Text) + b.Tokens }
	think := traces.Block{Kind: traces.Thinking, Name: "th", Tokens: 40}
	msgs := []Message{
		NewMessage(RoleUser, []traces.Block{{Kind: traces.Text, Text: "question"}}, 0, Plain),
		NewMessage(RoleAssistant, []traces.Block{think, {Kind: traces.Text, Text: "answer"}}, 1, Plain),
		NewMessage(RoleUser, []traces.Block{{Kind: traces.Text, Text: "thanks"}}, 2, Plain),
	}
	v := &View{Messages: msgs}
	b := NewBuilder(count, Wire{ThinkingByModel: true})
	r := b.Build("claude-sonnet-4-5-20250929", v, 0)
	if r.Total != 8+6+6 || r.StripAt != 8 {
		t.Errorf("stripped: total %d, StripAt %d; want 20 and 8", r.Total, r.StripAt)
	}
	b.KeepThinking = true
	r = b.Build("claude-sonnet-4-5-20250929", v, 0)
	if r.Total != 8+40+6+6 || r.StripAt != 0 {
		t.Errorf("kept: total %d, StripAt %d; want 60 and 0", r.Total, r.StripAt)
	}
	b.KeepThinking = false
	if r = b.Build("claude-sonnet-4-5-20250929", v, 0); r.Total != 20 || r.StripAt != 8 {
		t.Errorf("stripped again: total %d, StripAt %d; want 20 and 8", r.Total, r.StripAt)
	}
	if r = b.Build("claude-opus-4-6", v, 0); r.StripAt != 0 {
		t.Errorf("a model that keeps thinking: StripAt %d, want 0", r.StripAt)
	}
}
