package tiktoken

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// A rank file that is not one "base64 rank" line per token, ranks in
// order, is an error naming the line, never a table with holes.
func TestParseTableErrors(t *testing.T) {
	var good strings.Builder
	for b := range 256 {
		good.WriteString(base64.StdEncoding.EncodeToString([]byte{byte(b)}))
		good.WriteString(" ")
		good.WriteString(strconv.Itoa(b))
		good.WriteString("\n")
	}
	tb, err := parseTable([]byte(good.String() + "aGk= 256\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := tb.rank("hi"); !ok || r != 256 {
		t.Errorf("rank(hi) = %d, %v", r, ok)
	}
	if r, ok := tb.rank("h"); !ok || r != 'h' {
		t.Errorf("rank(h) = %d, %v", r, ok)
	}
	if _, ok := tb.rank("hj"); ok {
		t.Error("rank(hj) found")
	}
	for name, text := range map[string]string{
		"rank out of order": good.String() + "aGk= 300\n",
		"no rank":           good.String() + "aGk=\n",
		"bad base64":        good.String() + "a!k= 256\n",
		"empty line":        good.String() + "\naGk= 256\n",
		"missing byte":      strings.SplitN(good.String(), "\n", 2)[1],
	} {
		if _, err := parseTable([]byte(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
