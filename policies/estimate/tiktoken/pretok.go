package tiktoken

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer: a hand-written scanner for the two split patterns,
// equivalent to running them through a backtracking regexp engine with
// leftmost-first alternation (what tiktoken's fancy-regex and
// pkoukk/tiktoken-go's regexp2 do). The patterns, from tiktoken's
// openai_public.py:
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Classes are Go's unicode tables (as regexp2 uses them): \s is
// unicode.IsSpace, \p{X} is unicode.Categories[X]; (?i) compares
// unicode.ToLower of the text's rune, as regexp2 does.

// Rune classes, as bits.
const (
	cL  = 1 << iota // \p{L}
	cN              // \p{N}
	cS              // \s
	cU              // o200k's upper class: Lu Lt Lm Lo M
	cW              // o200k's lower class: Ll Lm Lo M
	cNL             // \r or \n
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		t[r] = slowClass(r)
	}
	return t
}()

func slowClass(r rune) uint8 {
	var c uint8
	switch {
	case unicode.IsSpace(r):
		c = cS
		if r == '\r' || r == '\n' {
			c |= cNL
		}
	case unicode.IsLetter(r):
		c = cL
		switch {
		case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
			c |= cU
		case unicode.Is(unicode.Ll, r):
			c |= cW
		default: // Lm, Lo
			c |= cU | cW
		}
	case unicode.IsMark(r):
		c = cU | cW
	case unicode.IsNumber(r):
		c = cN
	}
	return c
}

// at decodes the rune at s[i] and its class.
func at(s string, i int) (rune, int, uint8) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1, asciiClass[c]
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return r, w, slowClass(r)
}

// run is the end of the run of runes from i whose class has a bit of want.
func run(s string, i int, want uint8) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiClass[c]&want == 0 {
				return i
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if slowClass(r)&want == 0 {
			return i
		}
		i += w
	}
	return i
}

// nonRun is the end of the run of runes from i whose class has no bit of avoid.
func nonRun(s string, i int, avoid uint8) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiClass[c]&avoid != 0 {
				return i
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if slowClass(r)&avoid != 0 {
			return i
		}
		i += w
	}
	return i
}

// lower is (?i)'s view of the rune at s[i].
func lower(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return rune(c), 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return unicode.ToLower(r), w
}

// contraction is the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i], or -1.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' {
		return -1
	}
	r, w := lower(s, i+1)
	j := i + 1 + w
	switch r {
	case 's', 't', 'm', 'd':
		return j
	case 'r', 'v', 'l':
		want := 'e'
		if r == 'l' {
			want = 'l'
		}
		if r2, w2 := lower(s, j); r2 == want {
			return j + w2
		}
	}
	return -1
}

// optContraction is the end of an optional contraction at s[i].
func optContraction(s string, i int) int {
	if e := contraction(s, i); e >= 0 {
		return e
	}
	return i
}

// upperLower matches [U]*[W]+C? at s[j] (o200k's first word pattern), or -1.
func upperLower(s string, j int) int {
	u := run(s, j, cU)
	if u < len(s) {
		if _, _, c := at(s, u); c&cW != 0 {
			return optContraction(s, run(s, u, cW))
		}
	}
	// Backtrack the greedy U* one rune at a time until W+ can start.
	for k := u; k > j; {
		r, w := utf8.DecodeLastRuneInString(s[j:k])
		k -= w
		var c uint8
		if r < utf8.RuneSelf {
			c = asciiClass[r]
		} else {
			c = slowClass(r)
		}
		if c&cW != 0 {
			return optContraction(s, run(s, k, cW))
		}
	}
	return -1
}

// upperThenLower matches [U]+[W]*C? at s[j] (o200k's second word
// pattern), or -1.
func upperThenLower(s string, j int) int {
	u := run(s, j, cU)
	if u == j {
		return -1
	}
	return optContraction(s, run(s, u, cW))
}

// prefixable reports whether a rune of class c (not \r, \n) may be
// [^\r\n\p{L}\p{N}].
func prefixable(c uint8) bool { return c&(cL|cN|cNL) == 0 }

// spaces matches \s*[\r\n]+|\s+(?!\S)|\s+ at s[i], whose rune is white space.
func spaces(s string, i int) int {
	n := run(s, i, cS)
	// \s*[\r\n]+: the greedy \s* backs off to the run's last newline.
	for k := n - 1; k >= i; k-- {
		if s[k] == '\n' || s[k] == '\r' {
			return k + 1
		}
	}
	if n == len(s) {
		return n
	}
	// \s+(?!\S): all but the run's last rune, which stays to prefix the next piece.
	_, w := utf8.DecodeLastRuneInString(s[i:n])
	if n-w > i {
		return n - w
	}
	return n // \s+
}

// digits matches \p{N}{1,3} at s[i], whose rune is a number.
func digits(s string, i, w int) int {
	e := i + w
	for k := 1; k < 3 && e < len(s); k++ {
		_, w2, c := at(s, e)
		if c&cN == 0 {
			break
		}
		e += w2
	}
	return e
}

// punct matches ` ?[^\s\p{L}\p{N}]+` then a run of tail bytes at s[i], or -1.
func punct(s string, i int, r rune, tail string) int {
	j := i
	if r == ' ' {
		j++
	}
	e := nonRun(s, j, cS|cL|cN)
	if e == j {
		return -1
	}
	for e < len(s) && indexByte(tail, s[e]) {
		e++
	}
	return e
}

func indexByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// nextO200k is the end of the o200k_base piece starting at s[i].
func nextO200k(s string, i int) int {
	r, w, c := at(s, i)
	if prefixable(c) && i+w < len(s) {
		if e := upperLower(s, i+w); e >= 0 {
			return e
		}
	}
	if e := upperLower(s, i); e >= 0 {
		return e
	}
	if prefixable(c) && i+w < len(s) {
		if e := upperThenLower(s, i+w); e >= 0 {
			return e
		}
	}
	if e := upperThenLower(s, i); e >= 0 {
		return e
	}
	if c&cN != 0 {
		return digits(s, i, w)
	}
	if e := punct(s, i, r, "\r\n/"); e >= 0 {
		return e
	}
	return spaces(s, i)
}

// nextCL100k is the end of the cl100k_base piece starting at s[i].
func nextCL100k(s string, i int) int {
	if e := contraction(s, i); e >= 0 {
		return e
	}
	r, w, c := at(s, i)
	if prefixable(c) && i+w < len(s) {
		if _, _, c2 := at(s, i+w); c2&cL != 0 {
			return run(s, i+w, cL)
		}
	}
	if c&cL != 0 {
		return run(s, i, cL)
	}
	if c&cN != 0 {
		return digits(s, i, w)
	}
	if e := punct(s, i, r, "\r\n"); e >= 0 {
		return e
	}
	return spaces(s, i)
}
