package claudecode

import (
	"slices"
	"testing"
)

func TestVersionOf(t *testing.T) {
	for _, tt := range []struct {
		harness string
		known   bool
		s       string
	}{
		{"claude-code 1.0.89", true, "1.0.89"},
		{"claude-code 2.1.191", true, "2.1.191"},
		{" claude-code 2.0.57 ", true, "2.0.57"},
		{"codex 0.142.4", false, ""},
		{"claude-code", false, ""},
		{"claude-code next", false, ""},
		{"", false, ""},
	} {
		v := VersionOf(tt.harness)
		if v.Known() != tt.known || v.String() != tt.s {
			t.Errorf("VersionOf(%q) = %q known %v, want %q known %v", tt.harness, v, v.Known(), tt.s, tt.known)
		}
	}
}

func TestMessageMarks(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want int
	}{
		{"1.0.17", 2}, {"2.0.57", 2}, {"2.1.68", 2}, {"2.1.69", 1}, {"2.1.191", 1}, {"", 1},
	} {
		if got := MessageMarks(Parse(tt.v)); got != tt.want {
			t.Errorf("MessageMarks(%q) = %d, want %d", tt.v, got, tt.want)
		}
	}
	if !Parse("2.1.10").AtLeast("2.1.9") || Parse("2.1.9").AtLeast("2.1.10") {
		t.Error("versions compare as strings, not numbers")
	}
}

func TestThinkingOf(t *testing.T) {
	for v, want := range map[string]Thinking{
		"1.0.89": ThinkingDefault, "2.0.35": ThinkingDefault, "2.0.36": ThinkingFlagged, "2.1.18": ThinkingFlagged,
		"2.1.19": ThinkingDefault, "2.1.20": ThinkingDefault, "2.1.21": ThinkingFlagged, "2.1.41": ThinkingFlagged,
		"2.1.83": ThinkingFlagged, "2.1.84": ThinkingKept, "2.1.112": ThinkingKept, "": ThinkingFlagged,
	} {
		if got := ThinkingOf(Parse(v)); got != want {
			t.Errorf("ThinkingOf(%q) = %v, want %v", v, got, want)
		}
	}
}

// Microcompact clears the oldest results of the listed tools down to
// 40,000 tokens, sparing the last three, past the warning threshold and
// when it saves 20,000 or more.
func TestMicrocompact(t *testing.T) {
	calls := []ToolResult{
		{ID: "a", Tool: "Read", Tokens: 15000}, {ID: "b", Tool: "Task", Tokens: 30000}, {ID: "c", Tool: "Bash", Tokens: 12000},
		{ID: "d", Tool: "Edit", Tokens: 9000}, {ID: "e", Tool: "Grep", Tokens: 8000}, {ID: "f", Tool: "Read", Tokens: 10000},
		{ID: "g", Tool: "Read", Tokens: 10000}, {ID: "h", Tool: "Read", Tokens: 10000},
	}
	v := Parse("1.0.89")
	// Listed: a c d e f g h = 74,000 tokens; clear a (59,000 left), c
	// (47,000), d (38,000): saved 36,000; Task's result is not listed.
	if got := Microcompact(v, "claude-opus-4-1", calls, 140000); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("1.0.89: cleared %q, want a, c, d", got)
	}
	// 1.0.72 does not list Edit: a, c, e.
	if got := Microcompact(Parse("1.0.72"), "claude-opus-4-1", calls, 140000); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("1.0.72: cleared %q, want a, c (65,000 listed: clearing a and c leaves 38,000)", got)
	}
	if got := Microcompact(v, "claude-opus-4-1", calls, 134999); got != nil {
		t.Errorf("below the warning threshold (135,000): cleared %q", got)
	}
	if got := Microcompact(v, "claude-opus-4-1", calls[3:], 140000); got != nil {
		t.Errorf("saving under 20,000: cleared %q", got)
	}
	for _, old := range []string{"1.0.59", "2.0.57", ""} {
		if got := Microcompact(Parse(old), "claude-opus-4-1", calls, 190000); got != nil {
			t.Errorf("%q: cleared %q, want nothing (not modelled)", old, got)
		}
	}
	if WarningThreshold("claude-haiku-4-5") != 200000-8192-33000 {
		t.Error("haiku's reserve is 8,192")
	}
}

func TestThinkingBudget(t *testing.T) {
	v := Parse("1.0.89")
	for text, want := range map[string]int{
		"fix the test":                        0,
		"Think hard about the schema":         10000,
		"ultrathink: why does this fail?":     31999,
		"I think it is broken, please check":  0,
		"think about the edge cases":          4000, // "think about it" is MIDDLE, "think" BASIC
		"rethink the design":                  0,    // no word boundary before "think"
		"よく考えて":                               10000,
		"Please think about it before coding": 10000,
	} {
		if got := ThinkingBudget(v, text); got != want {
			t.Errorf("ThinkingBudget(%q) = %d, want %d", text, got, want)
		}
	}
	if got := ThinkingBudget(Parse("2.0.57"), "ultrathink"); got != 0 {
		t.Errorf("2.0.57: %d, want 0 (not modelled)", got)
	}
	if ThinkingParam(4000) != "enabled:4000" || ThinkingParam(0) != "" {
		t.Error("ThinkingParam")
	}
}

// ResultTokens measures text as JavaScript does, in UTF-16 code units: a
// Read result's line-number arrow is one, an emoji two, whatever their
// UTF-8 bytes.
func TestResultTokens(t *testing.T) {
	for _, tt := range []struct {
		text   string
		images int
		want   int
	}{
		{"abcdefgh", 0, 2},
		{"     1→package main\n     2→", 0, 7}, // 27 units (31 bytes: by bytes, 8)
		{"→→→→→→→→", 0, 2},                     // 8 units, 24 bytes
		{"😀😀", 0, 1},                           // 4 units, 8 bytes
		{"", 2, 4000},
	} {
		if got := ResultTokens(tt.text, tt.images); got != tt.want {
			t.Errorf("ResultTokens(%q, %d) = %d, want %d", tt.text, tt.images, got, tt.want)
		}
	}
}
