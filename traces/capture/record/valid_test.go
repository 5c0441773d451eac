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

func BenchmarkValidJSON(b *testing.B) {
	body := []byte(`{"system":"` + strings.Repeat("You are careful. ", 20000) + `","messages":[` + strings.Repeat(`{"role":"user","content":[{"type":"text","text":"a line of a tool result\n"}]},`, 2000) + `{}]}`)
	for _, v := range []struct {
		name string
		f    func([]byte) bool
	}{{"validJSON", validJSON}, {"json.Valid", json.Valid}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !v.f(body) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
