package cacheplan

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

func count(b *traces.Block, _ uint64) int { return len(b.Text) + len(b.Input) + b.Tokens }

func text(s string) traces.Block { return traces.Block{Kind: traces.Text, Text: s} }

func msg(role prompt.Role, blocks ...traces.Block) prompt.Message {
	return prompt.NewMessage(role, blocks, -1, prompt.Plain)
}

// build renders a view with 2 tools, the given system blocks and messages.
func build(t *testing.T, wire prompt.Wire, system []string, msgs ...prompt.Message) *prompt.Request {
	t.Helper()
	v := &prompt.View{
		Tools: []traces.Block{{Kind: traces.ToolSchema, Name: "a", Text: "tool a"}, {Kind: traces.ToolSchema, Name: "b", Text: "tool b"}},
	}
	for _, s := range system {
		v.System = append(v.System, traces.Block{Kind: traces.System, Text: s})
	}
	v.Messages = msgs
	return prompt.NewBuilder(count, wire).Build("m", v, 10)
}

// marks describes the breakpoints as "section/msg:kind" strings.
func marks(req *prompt.Request) []string {
	var out []string
	for _, bp := range req.Breakpoints {
		b := req.Blocks[bp.Block]
		out = append(out, fmt.Sprintf("%d:%d/%s@%s", bp.Block, b.Msg, b.Kind, bp.TTL))
	}
	return out
}

func conversation() []prompt.Message {
	return []prompt.Message{
		msg(prompt.RoleUser, text("hello there")),
		msg(prompt.RoleAssistant, text("hi"), traces.Block{Kind: traces.ToolUse, ID: "t1", Name: "a", Input: "{}"}),
		msg(prompt.RoleTool, traces.Block{Kind: traces.ToolResultBlock, ID: "t1", Text: "result one"}),
		msg(prompt.RoleAssistant, traces.Block{Kind: traces.Thinking, Text: "hmm"}, text("done")),
		msg(prompt.RoleUser, text("thanks")),
		msg(prompt.RoleAssistant, text("more"), traces.Block{Kind: traces.Thinking, Text: "trailing thought"}),
	}
}

func TestPlanners(t *testing.T) {
	// Blocks with one system block: 0,1 tools; 2 system; messages 0..5 at
	// 3 | 4,5 | 6 | 7(thinking),8 | 9 | 10,11(thinking). A second system
	// block shifts the messages by one.
	tests := []struct {
		planner string
		system  []string
		ttl     prompt.TTL
		want    []string
	}{
		{"none", []string{"sys"}, prompt.TTL5m, nil},
		// Automatic mode: the last cacheable block (the trailing thinking
		// block cannot carry it).
		{"auto", []string{"sys"}, prompt.TTL5m, []string{"10:5/text@5m"}},
		{"auto", []string{"sys"}, prompt.NoCache, nil},
		{"system_and_3", []string{"sys"}, prompt.NoCache, nil},
		// system + last 3 messages; the last message's trailing thinking
		// block cannot carry the marker, its text can.
		{"system_and_3", []string{"sys"}, prompt.TTL5m, []string{"2:-1/system@5m", "8:3/text@5m", "9:4/text@5m", "10:5/text@5m"}},
		{"system_and_3", nil, prompt.TTL1h, []string{"5:2/tool_result@1h", "7:3/text@1h", "8:4/text@1h", "9:5/text@1h"}},
		{"hermes", []string{"static", "volatile"}, prompt.TTL1h, []string{"2:-1/system@1h", "3:-1/system@1h", "10:4/text@1h", "11:5/text@1h"}},
		// One system block: nothing to split, legacy layout.
		{"hermes", []string{"sys"}, prompt.TTL5m, []string{"2:-1/system@5m", "8:3/text@5m", "9:4/text@5m", "10:5/text@5m"}},
		// Tool-cache layout: static prefix, last tool, last 2 endpoints. The
		// last user message is an endpoint only when it is last; here the
		// final assistant reply and the one before the user turn are.
		{"hermes_tools", []string{"static", "volatile"}, prompt.TTL5m, []string{"1:-1/tool_schema@5m", "2:-1/system@5m", "9:3/text@5m", "11:5/text@5m"}},
		{"claude-code", []string{"sys"}, prompt.TTL5m, []string{"1:-1/tool_schema@5m", "2:-1/system@5m", "10:5/text@5m"}},
		{"claude-code", []string{"static", "session"}, prompt.TTL1h, []string{"2:-1/system@1h", "3:-1/system@1h", "11:5/text@1h"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d/%s", tt.planner, len(tt.system), tt.ttl), func(t *testing.T) {
			p, err := ByName(tt.planner)
			if err != nil {
				t.Fatal(err)
			}
			req := build(t, prompt.Wire{}, tt.system, conversation()...)
			p.Plan(req, tt.ttl)
			if got := marks(req); !slices.Equal(got, tt.want) {
				t.Errorf("%s marks %v, want %v", tt.planner, got, tt.want)
			}
			if len(req.Breakpoints) > prompt.MaxBreakpoints {
				t.Errorf("%d breakpoints", len(req.Breakpoints))
			}
		})
	}
}

func TestToolCacheEndpoints(t *testing.T) {
	// The newest message is a tool result that closes a run: it is an
	// endpoint; the assistant that called the tool is open; the user
	// message that is not last is open.
	msgs := []prompt.Message{
		msg(prompt.RoleUser, text("q1")),
		msg(prompt.RoleAssistant, text("a1")),
		msg(prompt.RoleUser, text("q2")),
		msg(prompt.RoleAssistant, traces.Block{Kind: traces.ToolUse, ID: "x", Name: "a", Input: "{}"}),
		msg(prompt.RoleTool, traces.Block{Kind: traces.ToolResultBlock, ID: "x", Text: "r"}),
	}
	req := build(t, prompt.Wire{}, []string{"sys"}, msgs...)
	Hermes{ToolCache: true}.Plan(req, prompt.TTL5m)
	want := []string{"1:-1/tool_schema@5m", "4:1/text@5m", "7:4/tool_result@5m"}
	if got := marks(req); !slices.Equal(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
}

func TestScaffoldGetsTheMarker(t *testing.T) {
	scaffold := "You are a cron job. Static instructions follow at length."
	b := text(scaffold + " today: 42")
	b.ScaffoldEnd = len(scaffold)
	msgs := []prompt.Message{msg(prompt.RoleUser, b)}
	for _, split := range []bool{true, false} {
		req := build(t, prompt.Wire{SplitScaffolds: split}, []string{"sys"}, msgs...)
		SystemAnd3{}.Plan(req, prompt.TTL5m)
		last := req.Breakpoints[len(req.Breakpoints)-1].Block
		blk := req.Blocks[last]
		if split {
			if !blk.Scaffold || blk.Src.Text != scaffold || last != len(req.Blocks)-2 {
				t.Errorf("split: marker on block %d %q (scaffold %v), want the scaffold block", last, blk.Src.Text, blk.Scaffold)
			}
		} else if last != len(req.Blocks)-1 {
			t.Errorf("unsplit: marker on block %d, want the last block %d", last, len(req.Blocks)-1)
		}
	}
}

func TestChooseTTL(t *testing.T) {
	tests := []struct {
		setting string
		src     traces.Source
		want    prompt.TTL
		err     bool
	}{
		{"5m", traces.SourceCLI, prompt.TTL5m, false},
		{"1h", traces.SourceCron, prompt.TTL1h, false},
		{"", traces.SourceCLI, prompt.TTL5m, false},
		{"auto", traces.SourceCLI, prompt.TTL1h, false},
		{"auto", traces.SourceMessaging, prompt.TTL1h, false},
		{"auto", traces.SourceCron, prompt.TTL5m, false},
		{"auto", traces.SourceSubagent, prompt.TTL5m, false},
		{"AUTO", traces.SourceBatch, prompt.TTL5m, false},
		{"off", traces.SourceCLI, prompt.NoCache, false},
		{"none", traces.SourceCLI, prompt.NoCache, false},
		{"2h", traces.SourceCLI, prompt.NoCache, true},
	}
	for _, tt := range tests {
		got, err := ChooseTTL(tt.setting, tt.src)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ChooseTTL(%q, %s) = %v, %v; want %v, err %v", tt.setting, tt.src, got, err, tt.want, tt.err)
		}
	}
}

// TestChooseSessionTTL: Claude Code's promptCacheTtl and
// subagentPromptCacheTtl (code.claude.com/docs/en/prompt-caching): on a
// subscription the main conversation writes 1h, subagents 5m.
func TestChooseSessionTTL(t *testing.T) {
	tests := []struct {
		main, sub string
		src       traces.Source
		want      prompt.TTL
	}{
		{"1h", "5m", traces.SourceCLI, prompt.TTL1h},
		{"1h", "5m", traces.SourceSubagent, prompt.TTL5m},
		{"1h", "inherit", traces.SourceSubagent, prompt.TTL1h},
		{"1h", "", traces.SourceSubagent, prompt.TTL1h},
		{"5m", "1h", traces.SourceSubagent, prompt.TTL1h},
		{"auto", "inherit", traces.SourceSubagent, prompt.TTL5m},
		{"1h", "off", traces.SourceSubagent, prompt.NoCache},
	}
	for _, tt := range tests {
		got, err := ChooseSessionTTL(tt.main, tt.sub, tt.src)
		if err != nil || got != tt.want {
			t.Errorf("ChooseSessionTTL(%q, %q, %s) = %v, %v; want %v", tt.main, tt.sub, tt.src, got, err, tt.want)
		}
	}
	if _, err := ChooseSessionTTL("1h", "2h", traces.SourceSubagent); err == nil {
		t.Error("subagent tier 2h accepted")
	}
}

func TestByName(t *testing.T) {
	for _, n := range Names() {
		p, err := ByName(n)
		if err != nil || p.Name() != n {
			t.Errorf("ByName(%q) = %v, %v", n, p, err)
		}
	}
	if _, err := ByName("nope"); err == nil {
		t.Error("ByName(nope) succeeded")
	}
}

func TestHermesByRoute(t *testing.T) {
	// The hermes presets' layout picks hermes' tool-cache plan on native
	// Anthropic (the request has tools) and the static-prefix plan on any
	// other route, as anthropic_prompt_cache_policy does.
	p, err := ByName("hermes")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		provider string
		want     []string
	}{
		{"anthropic", []string{"1:-1/tool_schema@5m", "2:-1/system@5m", "9:3/text@5m", "11:5/text@5m"}},
		{"openai", []string{"2:-1/system@5m", "3:-1/system@5m", "10:4/text@5m", "11:5/text@5m"}},
	} {
		req := build(t, prompt.Wire{}, []string{"static", "volatile"}, conversation()...)
		ForRoute(p, tt.provider).Plan(req, prompt.TTL5m)
		if got := marks(req); !slices.Equal(got, tt.want) {
			t.Errorf("%s: marks %v, want %v", tt.provider, got, tt.want)
		}
	}
}

func TestToolCacheTwoEndpoints(t *testing.T) {
	// With one system block there is no static prefix to mark: hermes
	// still marks only the last 2 completed endpoints (a1, a3 here; the
	// user messages that are not last are open), leaving a breakpoint
	// unused. Before, the spare breakpoint went to a third endpoint.
	msgs := []prompt.Message{
		msg(prompt.RoleUser, text("q1")),
		msg(prompt.RoleAssistant, text("a1")),
		msg(prompt.RoleUser, text("q2")),
		msg(prompt.RoleAssistant, text("a2")),
		msg(prompt.RoleUser, text("q3")),
		msg(prompt.RoleAssistant, text("a3")),
	}
	req := build(t, prompt.Wire{}, []string{"sys"}, msgs...)
	Hermes{ToolCache: true}.Plan(req, prompt.TTL5m)
	want := []string{"1:-1/tool_schema@5m", "6:3/text@5m", "8:5/text@5m"}
	if got := marks(req); !slices.Equal(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
}

// Claude Code's mark sits on the result it received last; results sent
// after it that finished earlier are left unmarked (input in this call).
func TestClaudeCodeMarksResultReceivedLast(t *testing.T) {
	res := func(id string, early bool) traces.Block {
		return traces.Block{Kind: traces.ToolResultBlock, ID: id, Text: "result " + id, Early: early}
	}
	use := traces.Block{Kind: traces.ToolUse, ID: "a", Name: "Glob", Input: "{}"}
	for _, c := range []struct {
		early bool
		want  string
	}{{false, "c"}, {true, "b"}} {
		req := build(t, prompt.Wire{}, []string{"sys"}, msg(prompt.RoleUser, text("go")), msg(prompt.RoleAssistant, use),
			msg(prompt.RoleTool, res("a", false), res("b", false), res("c", c.early)))
		ClaudeCode{Messages: 2}.Plan(req, prompt.TTL5m)
		last := req.Blocks[req.Breakpoints[len(req.Breakpoints)-1].Block]
		if last.Src.ID != c.want {
			t.Errorf("early %v: mark on result %q, want %q", c.early, last.Src.ID, c.want)
		}
	}
}
