package safetext

import (
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"claude-opus-4-6":               "claude-opus-4-6",
		"café, 東京":                      "café, 東京",
		`C:\logs\a.jsonl`:               `C:\logs\a.jsonl`,
		"\x1b[2J\x1b]0;pwned\x07":       `\x1b[2J\x1b]0;pwned\x07`,
		"a\rb\nctxsim: forged\tc":       `a\rb\nctxsim: forged\tc`,
		"x\u202egnp.exe":                `x\u202egnp.exe`,
		"\u0085next\u2028line\x7f\xff!": `\x85next\u2028line\x7f\xff!`,
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
		if got := Line(in); strings.ContainsAny(got, "\x1b\r\n\t\x07\u202e\u2028\u0085") {
			t.Errorf("Line(%q) = %q still holds a control", in, got)
		}
	}
	if got := Markdown("a|b\nc"); got != `a\|b\nc` {
		t.Errorf("Markdown = %q", got)
	}
	if got := Lines("first\nsecond \x1b[1m\nctxsim: forged"); got != "first\n  second \\x1b[1m\n  ctxsim: forged" {
		t.Errorf("Lines = %q", got)
	}
}
