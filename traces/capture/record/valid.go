package record

import (
	"encoding/binary"

	"github.com/ctxsim/ctxsim/traces/internal/jsonl"
)

// validJSON reports whether b is one JSON value, as json.Valid does (RFC
// 8259; bytes inside strings are not checked for UTF-8, as json.Valid
// does not), several times faster on API bodies, which are mostly long
// strings: a string's plain bytes are skipped eight at a time (plain8)
// instead of one scanner step each. Nesting deeper than maxDepth is
// refused, as json.Valid refuses it.
func validJSON(b []byte) bool {
	i, ok := value(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

const maxDepth = 10000

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// value checks the value at b[i:], returning the index past it.
func value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	if (b[i] == '{' || b[i] == '[') && depth >= maxDepth {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return str(b, i)
	case c == '{':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = str(b, i); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			if i, ok = value(b, skipSpace(b, i+1), depth+1); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == '}' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
	case c == '[':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = value(b, i, depth+1); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == ']' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return jsonl.Number(b, i)
	}
	return i, false
}

// Bytes repeated in each of a word's eight.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether none of the eight bytes of w ends or escapes a
// string or is a control character: no '"', no '\\', none below 0x20.
// Each test is the has-zero-byte word trick (some byte of v is zero iff
// (v-ones)&^v has a high bit set; a byte below 0x20 borrows likewise from
// w-0x20), exact for "any of the eight".
func plain8(w uint64) bool {
	quote := w ^ (ones * '"')
	slash := w ^ (ones * '\\')
	ctl := (w - ones*0x20) &^ w
	return ((quote-ones)&^quote|(slash-ones)&^slash|ctl)&highs == 0
}

// str checks the string at b[i:] (b[i] is its quote).
func str(b []byte, i int) (int, bool) {
	i++
	for i < len(b) {
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:i+8])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, false
				}
				for _, h := range b[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}
