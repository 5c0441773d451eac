package safetext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line is s with every character that could act on a terminal or split a
// line escaped: C0 controls (tab and line breaks included), DEL, C1
// controls, the bidirectional formatting characters (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069), the line and paragraph
// separators (U+2028, U+2029), and invalid UTF-8 bytes.
func Line(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Markdown is Line for a Markdown table cell: the cell separator | is
// escaped too.
func Markdown(s string) string {
	return strings.ReplaceAll(Line(s), "|", `\|`)
}

// Lines is Line for a message of several lines: its line breaks are kept,
// and every line after the first is indented, so that no line of it can
// pass for a line of its own (a "ctxsim: ..." forged in a file name).
func Lines(s string) string {
	if clean(s) {
		return s
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Line(p)
		if i > 0 {
			parts[i] = "  " + parts[i]
		}
	}
	return strings.Join(parts, "\n")
}

// clean reports whether s is printable ASCII, the common case, which
// needs no escape.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return !needsEscape(s[i:])
		}
	}
	return true
}

// needsEscape reports whether s (from its first byte that is not
// printable ASCII) holds anything Line escapes.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || unsafeRune(r) {
			return true
		}
		i += n
	}
	return false
}

// unsafeRune reports the characters beyond the controls that reorder or
// break what a terminal shows.
func unsafeRune(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
