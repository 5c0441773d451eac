package claudecode

import "testing"

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
