package estimate

import (
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

func TestRough(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"one char is one token, never 0", "a", 1},
		{"ascii ceil(len/4)", "abcd", 1},
		{"ascii ceil(5/4)", "abcde", 2},
		{"ascii 400 chars", strings.Repeat("x", 400), 100},
		{"CJK ideographs 1 each", "你好世界", 4},
		{"Hangul syllables", "안녕하세요", 5},
		{"Hangul Jamo U+1100", "\u1100\u11FF", 2},
		{"Kana", "カタカナひらがな", 8},
		{"fullwidth forms", "ＡＢＣ", 3},
		{"Cyrillic by bytes: 6 chars 12 bytes", "Привет", 3},
		{"Arabic by bytes: 5 chars 10 bytes", "مرحبا", 3},
		{"mixed: 2 ideographs + ceil(3 bytes/4)", "hi 你好", 3},
		{"emoji 4 bytes", "😀", 1},
		{"ascii around CJK: 10 bytes rest", "hello你world", 1 + 3},
	}
	for _, tt := range tests {
		if got := Rough(tt.in); got != tt.want {
			t.Errorf("%s: Rough(%q) = %d, want %d", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestRoughTool(t *testing.T) {
	// name 8 + description 20 + parameters 58 = 86 chars → ceil(86/4) = 22.
	b := traces.Block{Kind: traces.ToolSchema, Name: "terminal", Text: "Run a shell command.",
		Input: `{"type":"object","properties":{"command":{"type":"string"}}}`}
	if got, want := RoughTool(&b), (8+20+len(b.Input)+3)/4; got != want {
		t.Errorf("RoughTool = %d, want %d", got, want)
	}
	if got := RoughBlock(&b); got != RoughTool(&b) {
		t.Errorf("RoughBlock(schema) = %d, want RoughTool %d", got, RoughTool(&b))
	}
	opaque := traces.Block{Kind: traces.ToolSchema, Name: "mcp__x", Tokens: 900}
	if got := RoughTool(&opaque); got != 900 {
		t.Errorf("RoughTool(opaque) = %d, want 900", got)
	}
}

func TestMsgBudget(t *testing.T) {
	call := traces.Block{Kind: traces.ToolUse, ID: "toolu_01", Name: "read_file", Input: `{"path":"a.go"}`}
	m := prompt.NewMessage(prompt.RoleAssistant, []traces.Block{
		{Kind: traces.Text, Text: strings.Repeat("y", 40)}, // 10
		call, call, // two parallel calls, each with the full serialization
		{Kind: traces.Image, Text: "base64..."},
	}, 0, prompt.Plain)
	perCall := (len(call.ID) + len(call.Name) + len(call.Input) + 62 + 3) / 4
	want := 10 + 10 + 2*perCall + BudgetImageTokens
	if got := MsgBudget(&m); got != want {
		t.Errorf("MsgBudget = %d, want %d", got, want)
	}
	// The rough estimate counts the arguments only, and images at 1500.
	if got, want := RoughMessage(&m), 10+2*(Rough(call.Name)+Rough(call.Input))+ImageTokens; got != want {
		t.Errorf("RoughMessage = %d, want %d", got, want)
	}
}

type charTok struct{}

func (charTok) Name() string          { return "chars" }
func (charTok) Count(text string) int { return len([]rune(text)) }

func view(msgs ...string) *prompt.View {
	v := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: strings.Repeat("s", 400)}}}
	for i, s := range msgs {
		role := prompt.RoleUser
		if i%2 == 1 {
			role = prompt.RoleAssistant
		}
		v.Messages = append(v.Messages, prompt.NewMessage(role, []traces.Block{{Kind: traces.Text, Text: s}}, i, prompt.Plain))
	}
	return v
}

func TestEstimators(t *testing.T) {
	v := view(strings.Repeat("a", 100), "你好你好")
	rough := NewRough()
	if got, want := rough.Estimate(v), 100+25+4; got != want {
		t.Errorf("rough = %d, want %d", got, want)
	}
	exact := NewExact(NewMemo(charTok{}), 3)
	if got, want := exact.Estimate(v), 400+100+4+2*3; got != want {
		t.Errorf("exact = %d, want %d", got, want)
	}
}

func TestCalibrated(t *testing.T) {
	rough := NewRough()
	c := NewCalibrated(rough)
	v1 := view(strings.Repeat("a", 4000)) // rough 100 + 1000
	if n, ok := c.Project("m", v1); ok || n != 1100 {
		t.Fatalf("no anchor: Project = %d, %v; want 1100 (rough), false", n, ok)
	}
	if c.Capture("m", v1, 0) {
		t.Fatal("Capture(billed 0) took an anchor")
	}
	if !c.Capture("m", v1, 800) {
		t.Fatal("Capture(800) took no anchor")
	}
	// Append 400 rough tokens: projected = 800 + 400.
	v2 := &prompt.View{System: v1.System, Messages: append(append([]prompt.Message(nil), v1.Messages...),
		prompt.NewMessage(prompt.RoleAssistant, []traces.Block{{Kind: traces.Text, Text: strings.Repeat("b", 1600)}}, 1, prompt.Plain))}
	if n, ok := c.Project("m", v2); !ok || n != 1200 {
		t.Errorf("appended: Project = %d, %v; want 1200, true", n, ok)
	}
	// A shrink (masking inside the new part) never projects below billed.
	if n, ok := c.Project("m", v1); !ok || n != 800 {
		t.Errorf("same view: Project = %d, %v; want 800, true", n, ok)
	}
	// Rewriting the billed prefix fails closed to the rough estimate.
	v3 := view(strings.Repeat("c", 4000))
	if n, ok := c.Project("m", v3); ok || n != 1100 {
		t.Errorf("rewritten: Project = %d, %v; want 1100, false", n, ok)
	}
	// So does a system prompt change (the compaction note).
	v4 := v2.Clone()
	v4.System = append(v4.System, traces.Block{Kind: traces.System, Text: "note"})
	if _, ok := c.Project("m", v4); ok {
		t.Error("system changed: projection still anchored")
	}
	// And a model switch.
	if n, ok := c.Project("other", v2); ok || n != rough.Estimate(v2) {
		t.Errorf("model switch: Project = %d, %v; want rough %d, false", n, ok, rough.Estimate(v2))
	}
	c.Clear()
	if _, ok := c.Anchor(); ok {
		t.Error("Clear kept the anchor")
	}
}

func BenchmarkRoughEstimate(b *testing.B) {
	var msgs []string
	for i := 0; i < 500; i++ {
		msgs = append(msgs, strings.Repeat("lorem ipsum ", 200)+string(rune('a'+i%26)))
	}
	v := view(msgs...)
	e := NewRough()
	e.Estimate(v)
	b.ResetTimer()
	for b.Loop() {
		e.Estimate(v)
	}
}
