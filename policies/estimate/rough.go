package estimate

import (
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// CharsPerToken is hermes' single constant for every "N tokens ≈ 4N chars"
// conversion (CHARS_PER_TOKEN).
const CharsPerToken = 4

// ImageTokens is what the rough estimator charges per image before any
// vision turn has been calibrated (hermes' default image cost).
const ImageTokens = 1500

// BudgetImageTokens is what the compressor's tail walk charges per image
// (_estimate_msg_budget_tokens).
const BudgetImageTokens = 1600

// cjkDense reports whether r is one of the codepoints hermes counts as one
// token each (_CJK_DENSE_RE): Hangul Jamo, CJK radicals through unified
// ideographs (with Kana), Hangul Jamo Extended-A, Hangul syllables, CJK
// compatibility ideographs and the halfwidth/fullwidth forms.
func cjkDense(r rune) bool {
	switch {
	case r >= 0x1100 && r <= 0x11FF,
		r >= 0x2E80 && r <= 0x9FFF,
		r >= 0xA960 && r <= 0xA97F,
		r >= 0xAC00 && r <= 0xD7AF,
		r >= 0xF900 && r <= 0xFAFF,
		r >= 0xFF00 && r <= 0xFFEF:
		return true
	}
	return false
}

// Rough is hermes' estimate_tokens_rough: all-ASCII text is ceil(len/4);
// otherwise every CJK/Hangul/Kana codepoint is one token and the rest is
// ceil(utf8 bytes/4), which keeps 2-byte scripts (Cyrillic, Greek, Arabic)
// from being undercounted.
//
// Both cases are one pass: ASCII bytes, skipped eight at a time, count one
// byte each in either case, so only the other codepoints are decoded. An
// invalid byte counts as U+FFFD (3 bytes), as ranging over the string does.
// The compressor sizes every message of its tail walk this way, uncached,
// so this is on the hot path of every compaction.
func Rough(s string) int {
	dense, rest := 0, 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && (uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56)&0x8080808080808080 == 0 {
			rest += 8
			i += 8
			continue
		}
		if s[i] < utf8.RuneSelf {
			rest++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if cjkDense(r) {
			dense++
			continue
		}
		rest += utf8.RuneLen(r)
	}
	return dense + (rest+CharsPerToken-1)/CharsPerToken
}

// RoughTool is hermes' tool-schema estimate: (name + description + compact
// JSON parameters) characters over 4. A schema block holds the description
// in Text and the parameters in Input.
func RoughTool(b *traces.Block) int {
	if b.Opaque() {
		return b.Tokens
	}
	n := utf8.RuneCountInString(b.Name) + utf8.RuneCountInString(b.Text) + utf8.RuneCountInString(b.Input)
	return (n + CharsPerToken - 1) / CharsPerToken
}

// RoughBlock is the rough size of one content block: opaque blocks count
// their recorded size, images ImageTokens, tool calls their name and
// arguments, everything else its text.
func RoughBlock(b *traces.Block) int { return (*RoughSizes)(nil).Block(b, 0) }

// RoughMessage is the rough size of a message: the sum of its blocks.
//
// Simplification: hermes estimates str(message), so its rough count also
// includes a few tokens of dict syntax per message; ours does not, which
// makes our rough estimate slightly lower (by ~8 tokens per message).
func RoughMessage(m *prompt.Message) int { return (*RoughSizes)(nil).Message(m) }

// MsgBudget is hermes' _estimate_msg_budget_tokens, the size the compressor
// uses to walk the protected tail: content tokens + 10 per message + the
// full serialized tool call (id, name, arguments and the wrapping JSON, not
// only the arguments, #28053) + thinking at len/4; images count
// BudgetImageTokens each.
func MsgBudget(m *prompt.Message) int { return (*RoughSizes)(nil).Budget(m) }
