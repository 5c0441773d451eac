package record

import (
	"encoding/json"
	"strings"
	"testing"
)

var validSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `true`, `false`, `null`, ` {"a" : [1, 2.0, -3e2, "x\n\u00e9\\"]} `,
	`{"a":}`, `{"a" 1}`, `[1,]`, `{,}`, `01`, `1.`, `1e`, `-`, `"\x"`, `"\u12g4"`, "\"a\x01\"", `"abc`, `[1 2]`,
	`tru`, `nul`, `{"a":1}x`, `{"a":1,}`, "", " ", `[[[]]]`, `{"a":{"b":[{"c":null}]}}`, "\"\xff\xfe\"",
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 10000) + "1" + strings.Repeat("]", 10000),
}

// validJSON agrees with json.Valid on every seed: the valid and the
// invalid, the nesting limit's edge included.
func TestValidJSON(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.40q) = %v, json.Valid %v", s, got, want)
		}
	}
}

// The word-at-a-time skip over a string's plain bytes (plain8) agrees
// with json.Valid for every byte that ends, escapes or breaks a string,
// or is next to one in value (0x1f/0x20, a quote or backslash with its
// high bit set, 0x7f, 0xff), at every offset within and across words.
func TestValidJSONWords(t *testing.T) {
	bytes := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', '\\', 0x5b, 0x5d, 0x7f, 0x80, 0x9f, 0xa0, 0xa2, 0xdc, 0xff}
	for pre := range 18 {
		for _, c := range bytes {
			for _, post := range []int{0, 1, 7, 8, 9} {
				for _, tail := range []string{`"`, `\\""`, `\n"`, `\u00e9"`, ""} {
					b := []byte(`["` + strings.Repeat("a", pre) + string([]byte{c}) + strings.Repeat("b", post) + tail + `]`)
					if got, want := validJSON(b), json.Valid(b); got != want {
						t.Errorf("validJSON(%q) = %v, json.Valid %v", b, got, want)
					}
				}
			}
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

// A body that is JSON on one line is written as sent; one that spans
// lines is compacted; one that is not JSON, or was cut, is a string.
func TestBodyJSON(t *testing.T) {
	for _, c := range []struct {
		in        string
		truncated bool
		want      string
	}{
		{`{"a": [1, 2]}`, false, `{"a": [1, 2]}`},
		{"{\"a\":\n [1,\r\n 2]}", false, `{"a":[1,2]}`},
		{`{"a": [1, 2`, false, `"{\"a\": [1, 2"`},
		{`{"a":1}`, true, `"{\"a\":1}"`},
		{"plain\ntext", false, `"plain\ntext"`},
	} {
		if got := string(bodyJSON([]byte(c.in), c.truncated)); got != c.want {
			t.Errorf("bodyJSON(%q, %v) = %s, want %s", c.in, c.truncated, got, c.want)
		}
	}
}

// BenchmarkValidJSON checks two bodies: one of many short strings
// (2,000 small messages under a long system string, 486 KB) and a long
// session's request (300 messages of ~3 KB, 997 KB), whose long strings
// the word-at-a-time skip is for.
func BenchmarkValidJSON(b *testing.B) {
	short := []byte(`{"system":"` + strings.Repeat("You are careful. ", 20000) + `","messages":[` + strings.Repeat(`{"role":"user","content":[{"type":"text","text":"a line of a tool result\n"}]},`, 2000) + `{}]}`)
	var msgs []any
	for i := range 300 {
		msgs = append(msgs, map[string]any{"role": "user", "n": i, "content": []any{map[string]any{"type": "text", "text": strings.Repeat("line of a tool result, file contents or an answer. ", 60)}}})
	}
	long, _ := json.Marshal(map[string]any{"system": strings.Repeat("You are careful. ", 5000), "messages": msgs})
	for _, body := range []struct {
		name string
		b    []byte
	}{{"short-strings", short}, {"request", long}} {
		for _, v := range []struct {
			name string
			f    func([]byte) bool
		}{{"validJSON", validJSON}, {"json.Valid", json.Valid}} {
			b.Run(body.name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(len(body.b)))
				for b.Loop() {
					if !v.f(body.b) {
						b.Fatal("invalid")
					}
				}
			})
		}
	}
}
