package tiktoken

import (
	"bytes"
	"encoding/base64"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

var update = flag.Bool("update", false, "TestTables rewrites the embedded rank tables from the loader's files")

// The embedded tables are the offline loader's ranks, byte for byte as
// buildTable lays them out; -update rewrites them.
func TestTables(t *testing.T) {
	for _, name := range Names {
		src, err := assets.Assets.ReadFile(name + ".tiktoken")
		if err != nil {
			t.Fatal(err)
		}
		want, err := buildTable(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if *update {
			if err := os.WriteFile(name+".tkt", want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		enc, _ := Get(name)
		if !bytes.Equal([]byte(enc.data), want) {
			t.Errorf("%s.tkt differs from the table built from the loader's %s.tiktoken: run go test -run TestTables -update", name, name)
			continue
		}
		// Every token is found at its rank, every byte too.
		tb := enc.mustLoad()
		n := 0
		for line := range strings.Lines(string(src)) {
			tok, _ := base64.StdEncoding.DecodeString(strings.Fields(line)[0])
			if r, ok := tb.rank(string(tok)); !ok || int(r) != n {
				t.Fatalf("%s: rank(%q) = %d, %v; want %d", name, tok, r, ok, n)
			}
			n++
		}
		if n < 100000 {
			t.Errorf("%s: %d tokens", name, n)
		}
	}
}

// The hash spreads the tokens: a lookup probes about 1.5 slots on
// average, never a long run.
func TestTableProbes(t *testing.T) {
	tb := o200k.mustLoad()
	total, worst := 0, 0
	n := len(tb.off)/4 - 1
	for r := range n {
		tok := tb.arena[le32(tb.off, uint64(r)):le32(tb.off, uint64(r+1))]
		h, p := hash(tok)&tb.mask, 1
		for le32(tb.slots, h) != uint32(r)+1 {
			h, p = (h+1)&tb.mask, p+1
		}
		total, worst = total+p, max(worst, p)
	}
	if mean := float64(total) / float64(n); mean > 1.6 || worst > 40 {
		t.Errorf("probes: mean %.2f, worst %d", mean, worst)
	}
}

// A rank file that is not one "base64 rank" line per token, ranks in
// order, is an error naming the line, never a table with holes.
func TestBuildTableErrors(t *testing.T) {
	var good strings.Builder
	for b := range 256 {
		good.WriteString(base64.StdEncoding.EncodeToString([]byte{byte(b)}))
		good.WriteString(" ")
		good.WriteString(strconv.Itoa(b))
		good.WriteString("\n")
	}
	data, err := buildTable([]byte(good.String() + "aGk= 256\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := loadTable(string(data))
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
		if _, err := buildTable([]byte(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for name, data := range map[string]string{
		"empty":     "",
		"magic":     "tkt0" + string(data[4:]),
		"truncated": string(data[:len(data)-1]),
	} {
		if _, err := loadTable(data); err == nil {
			t.Errorf("load %s: no error", name)
		}
	}
}
