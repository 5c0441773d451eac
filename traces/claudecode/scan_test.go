package claudecode

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
	utf16enc "unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
)

// call is goodCall with its usage replaced, and its ids and time set.
func call(msgID string, sec int, usage string) string {
	l := strings.Replace(goodCall, `"m1"`, `"`+msgID+`"`, 1)
	l = strings.Replace(l, "21:00:02", "21:00:"+twoDigits(sec), 1)
	i := strings.Index(l, `"usage":`)
	return l[:i] + `"usage":` + usage + "}}"
}

func twoDigits(n int) string { return fmt.Sprintf("%02d", n) }

func scan(t *testing.T, data string) (*SessionUsage, *traces.Warnings) {
	t.Helper()
	w := &traces.Warnings{}
	fu, err := scanFile(strings.NewReader(data), "s1.jsonl", w)
	require.NoError(t, err)
	return fu.main, w
}

// accounted checks the scan's promise: every line is a call, a record that
// bills nothing, or a warning.
func accounted(t *testing.T, s *SessionUsage, w *traces.Warnings) {
	t.Helper()
	if miss := s.lines - s.used; miss > w.Total() {
		t.Errorf("%d of %d lines neither used nor warned about (%d warnings)", miss, s.lines, w.Total())
	}
}

// TestScanBadNumbers pins issue 10's wrong numbers: each bad count is
// resolved as documented, with a warning naming the line, and no total is
// ever negative or wrapped.
func TestScanBadNumbers(t *testing.T) {
	const split = `"cache_creation":{"ephemeral_5m_input_tokens":%5,"ephemeral_1h_input_tokens":%1}`
	u := func(in, cw, cr, out, w5, w1 string) string {
		s := strings.NewReplacer("%5", w5, "%1", w1).Replace(split)
		return `{"input_tokens":` + in + `,"cache_creation_input_tokens":` + cw + `,"cache_read_input_tokens":` + cr + `,` + s + `,"output_tokens":` + out + `}`
	}
	cases := []struct {
		name  string
		usage string
		want  traces.Usage
		warn  string
	}{
		{"negative", u("-5", "10", "100", "5", "10", "0"), traces.Usage{CacheWrite5m: 10, CacheRead: 100, Output: 5}, traces.WarnNegativeTokens},
		{"near 1e18", u("3", "10", "999999999999999999", "5", "10", "0"), traces.Usage{Input: 3, CacheWrite5m: 10, Output: 5}, traces.WarnHugeTokens},
		{"past int64", u("3", "10", "100", "1e30", "10", "0"), traces.Usage{Input: 3, CacheWrite5m: 10, CacheRead: 100}, traces.WarnHugeTokens},
		{"fraction", u("3.5", "10", "100", "5", "10", "0"), traces.Usage{Input: 3, CacheWrite5m: 10, CacheRead: 100, Output: 5}, traces.WarnFractionTokens},
		{"string", u(`"3"`, "10", "100", "5", "10", "0"), traces.Usage{CacheWrite5m: 10, CacheRead: 100, Output: 5}, traces.WarnHugeTokens},
		{"split short", u("3", "100", "0", "5", "10", "60"), traces.Usage{Input: 3, CacheWrite5m: 40, CacheWrite1h: 60, Output: 5}, traces.WarnSplitMismatch},
		{"split over", u("3", "100", "0", "5", "10", "160"), traces.Usage{Input: 3, CacheWrite1h: 100, Output: 5}, traces.WarnSplitMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, w := scan(t, goodUser+"\n"+call("m1", 2, tc.usage)+"\n")
			require.Len(t, s.Calls, 1)
			if got := s.Calls[0].Usage; got != tc.want {
				t.Errorf("usage = %+v, want %+v", got, tc.want)
			}
			ws := w.List()
			if len(ws) != 1 || ws[0].Reason != tc.warn || ws[0].First != "s1.jsonl:2" {
				t.Errorf("warnings = %+v, want one %q at s1.jsonl:2", ws, tc.warn)
			}
			// The importer runs the same check.
			ss, iw, err := Import(context.Background(), writeTemp(t, goodUser+"\n"+call("m1", 2, tc.usage)+"\n"))
			require.NoError(t, err)
			if got, _ := billed(ss[0]); got != tc.want || iw.Len() != 1 || iw.List()[0].Reason != tc.warn {
				t.Errorf("import: usage %+v, warnings %+v", got, iw.List())
			}
		})
	}
	// A sum of bounded calls never wraps.
	var total traces.Usage
	for range 100 {
		total = total.Add(traces.Usage{CacheRead: 1 << 62})
	}
	if total.CacheRead < 0 || total.Prompt() < 0 {
		t.Errorf("sum wrapped: %+v", total)
	}
}

func writeTemp(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s1.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	return p
}

// TestScanDuplicates pins "conflicting duplicate usage lines resolve
// silently" and "lines out of order cost differently": the most complete
// line wins whatever the order, and a prompt-side conflict is warned about.
func TestScanDuplicates(t *testing.T) {
	usage := func(in, out int) string {
		return `{"input_tokens":` + strconv.Itoa(in) + `,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":` + strconv.Itoa(out) + `}`
	}
	partial, final := call("m1", 2, usage(3, 1)), call("m1", 3, usage(3, 50))
	for _, order := range [][]string{{partial, final}, {final, partial}} {
		s, w := scan(t, goodUser+"\n"+strings.Join(order, "\n")+"\n")
		require.Len(t, s.Calls, 1)
		if s.Calls[0].Usage.Output != 50 || w.Total() != 0 {
			t.Errorf("streamed call: %+v, warnings %v", s.Calls[0].Usage, w.List())
		}
	}
	conflict := call("m1", 3, usage(7, 50))
	for _, order := range [][]string{{final, conflict}, {conflict, final}} {
		s, w := scan(t, goodUser+"\n"+strings.Join(order, "\n")+"\n")
		require.Len(t, s.Calls, 1)
		if s.Calls[0].Usage.Input != 7 {
			t.Errorf("conflict kept %+v, want the larger prompt whatever the order", s.Calls[0].Usage)
		}
		if ws := w.List(); len(ws) != 1 || ws[0].Reason != traces.WarnUsageConflict || ws[0].First != "s1.jsonl:3" {
			t.Errorf("warnings = %+v, want a conflict at s1.jsonl:3", ws)
		}
	}
}

// TestScanShuffled: a file's bill does not depend on its line order.
func TestScanShuffled(t *testing.T) {
	data, err := os.ReadFile(bigFile)
	if err != nil {
		t.Skipf("no testdata: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	want, _ := scan(t, string(data))
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	got, w := scan(t, strings.Join(lines, "\n")+"\n")
	if got.Total() != want.Total() || got.ID != want.ID || got.Model != want.Model || !got.Start.Equal(want.Start) || len(got.Calls) != len(want.Calls) {
		t.Errorf("shuffled: %s %s %v %d calls %+v; in order: %s %s %v %d calls %+v",
			got.ID, got.Model, got.Start, len(got.Calls), got.Total(), want.ID, want.Model, want.Start, len(want.Calls), want.Total())
	}
	for i := range got.Calls {
		if got.Calls[i].MessageID != want.Calls[i].MessageID {
			t.Fatalf("call %d: %s, want %s", i, got.Calls[i].MessageID, want.Calls[i].MessageID)
		}
	}
	accounted(t, got, w)
}

// TestScanAccountsForEveryLine pins "cost drops lines in silence": each kind
// of junk is a warning in the fast path too.
func TestScanAccountsForEveryLine(t *testing.T) {
	cases := []struct{ name, line, warn string }{
		{"truncated", goodCall[:70], warnTruncated},
		{"invalid UTF-8", strings.Replace(goodCall, "hello", "h\xffllo", 1), warnInvalidUTF8},
		{"binary junk", "\x00\x01\x02\x7f", warnInvalidJSON},
		{"deeply nested", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), warnInvalidJSON},
		{"not an object", `[1,2,3]`, warnNotRecord},
		{"no type", `{"usage":{"input_tokens":5}}`, warnNotRecord},
		{"no usage", strings.Replace(goodCall, `"usage"`, `"usagex"`, 1), warnNoUsage},
		{"negative", strings.Replace(goodCall, `"output_tokens":5`, `"output_tokens":-5`, 1), traces.WarnNegativeTokens},
		{"no message", `{"type":"assistant","sessionId":"s1"}`, warnNoMessage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := goodUser + "\n" + tc.line
			if tc.warn != warnTruncated {
				data += "\n"
			}
			s, w := scan(t, data)
			found := false
			for _, x := range w.List() {
				found = found || (x.Reason == tc.warn && x.First == "s1.jsonl:2")
			}
			if !found {
				t.Errorf("warnings = %+v, want %q at s1.jsonl:2", w.List(), tc.warn)
			}
			accounted(t, s, w)
		})
	}
}

// TestWalkHostileTree pins "a FIFO or a symlink to /dev/zero inside a log
// tree blocks the walk forever": both are skipped with a warning, as is a
// symlink out of the tree; a symlink inside it is read.
func TestWalkHostileTree(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "p"), 0o755))
	good := goodUser + "\n" + goodCall + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(tree, "p", "s1.jsonl"), []byte(good), 0o644))
	outside := filepath.Join(dir, "outside.jsonl")
	require.NoError(t, os.WriteFile(outside, []byte(strings.ReplaceAll(good, "s1", "s9")), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(tree, "p", "fifo.jsonl"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(tree, "p", "zero.jsonl")))
	require.NoError(t, os.Symlink(outside, filepath.Join(tree, "p", "out.jsonl")))
	require.NoError(t, os.Symlink("s1.jsonl", filepath.Join(tree, "p", "in.jsonl")))
	require.NoError(t, os.Symlink(tree, filepath.Join(tree, "loop.jsonl")))

	done := make(chan struct{})
	var (
		us  []*SessionUsage
		ss  []*traces.Session
		w   *traces.Warnings
		iw  *traces.Warnings
		err error
	)
	go func() {
		defer close(done)
		us, w, err = ScanUsage(context.Background(), tree)
		if err == nil {
			ss, iw, err = Import(context.Background(), tree)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("walk hung")
	}
	require.NoError(t, err)
	// in.jsonl is s1.jsonl again: its calls are counted once.
	if len(us) != 1 || us[0].ID != "s1" || len(us[0].Calls) != 1 {
		t.Errorf("scan: %+v", us)
	}
	if len(ss) != 2 {
		t.Errorf("import read %d sessions, want s1 and its link", len(ss))
	}
	for _, ws := range []*traces.Warnings{w, iw} {
		got := map[string]int{}
		for _, x := range ws.List() {
			got[x.Reason] = x.Count
		}
		for _, r := range []string{traces.WarnSpecialFile, traces.WarnSymlinkOut, traces.WarnSymlinkDir} {
			if got[r] != 1 && !(r == traces.WarnSpecialFile && got[r] == 2) {
				t.Errorf("warnings %v: want %q", ws.List(), r)
			}
		}
		if got[traces.WarnSpecialFile] != 2 {
			t.Errorf("want the FIFO and /dev/zero skipped: %v", ws.List())
		}
	}
	// A file named on its own is read even through a symlink, if regular.
	if _, _, err := ScanUsage(context.Background(), filepath.Join(tree, "p", "out.jsonl")); err != nil {
		t.Errorf("named symlink: %v", err)
	}
	if _, _, err := ScanUsage(context.Background(), filepath.Join(tree, "p", "fifo.jsonl")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("named FIFO: %v", err)
	}
}

// FuzzBillLine checks the scan's one-pass reader against encoding/json:
// it accepts every valid line, reads the same fields, and rejects what
// encoding/json rejects except inside strings and number spelling (which
// it does not inspect; see billLine).
func FuzzBillLine(f *testing.F) {
	f.Add([]byte(goodCall))
	f.Add([]byte(goodCall[:70]))
	f.Add([]byte(`{"type":"a\"b","message":{"usage":[1,{"x":null}]}}`))
	f.Add([]byte(`{"a":[true,false,null,-1.5e3,{}], "type" : "x" } `))
	f.Add([]byte(strings.Repeat("[", 20000)))
	f.Add([]byte("\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var l billLine
		err := parseBillLine(b, &l)
		if !json.Valid(b) {
			return
		}
		if err != nil {
			if errors.Is(err, errDepth) {
				return
			}
			t.Fatalf("rejected valid JSON %q: %v", b, err)
		}
		// Keys match exactly (encoding/json's struct fields would match
		// case-insensitively; such lines are odd, and decodeOdd reads
		// them); the last of a repeated key wins in both. Strings are
		// compared as the importer decodes them: decodeLine makes each
		// run of invalid UTF-8 one U+FFFD first, as text does
		// (FuzzBillLine 9bfffbaf: "\xff\xff").
		var m map[string]json.RawMessage
		if json.Unmarshal(bytes.ToValidUTF8(b, []byte("\uFFFD")), &m) != nil {
			return
		}
		var want string
		if raw, ok := m["type"]; !ok || json.Unmarshal(raw, &want) != nil {
			return
		}
		if got := text(l.typ); l.typ == nil || (got != want && utf8.ValidString(want)) {
			t.Errorf("type %q, want %q", got, want)
		}
	})
}

// TestScanKeysAsEncodingJSON pins FuzzImport's finding c1ef72af: the
// importer decodes with encoding/json, which matches keys without regard
// to case, decodes escapes in them and merges a repeated object key, so
// the fast scan must bill such lines as the importer does (it hands them
// to encoding/json too).
func TestScanKeysAsEncodingJSON(t *testing.T) {
	split := `"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":0}`
	for name, line := range map[string]string{
		"split key case":     strings.Replace(goodCall, split, `"cache_creation":{"ephemeral_5m_input_tokens":0,"Ephemeral_1h_input_tokens":10}`, 1),
		"usage key case":     strings.Replace(goodCall, `"usage":`, `"USAGE":`, 1),
		"escaped usage key":  strings.Replace(goodCall, `"usage":`, `"us\u0061ge":`, 1),
		"kelvin in key":      strings.Replace(goodCall, `"input_tokens":3`, `"input_to\u212aens":3`, 1),
		"type key case":      strings.Replace(goodCall, `{"type":"assistant"`, `{"TYPE":"assistant"`, 1),
		"usage repeated":     strings.Replace(goodCall, `"output_tokens":5}`, `"output_tokens":5},"usage":{"output_tokens":7}`, 1),
		"split repeated":     strings.Replace(goodCall, split, split+`,"cache_creation":{"ephemeral_1h_input_tokens":10}`, 1),
		"message repeated":   strings.Replace(goodCall, `"requestId":"r1"`, `"message":{"id":"m0","usage":{"input_tokens":50}},"requestId":"r1"`, 1),
		"request id escaped": strings.Replace(goodCall, `"requestId":"r1"`, `"request\u0049d":"r1"`, 1),
	} {
		data := goodUser + "\n" + line + "\n"
		var w traces.Warnings
		ss, err := readSession(strings.NewReader(data), "f.jsonl", &w)
		require.NoError(t, err, name)
		var iu traces.Usage
		for _, s := range ss {
			u, _ := billed(s)
			iu = iu.Add(u)
		}
		su, w2 := scan(t, data)
		if su.Total() != iu {
			t.Errorf("%s: import billed %+v (%d warnings), scan %+v (%d warnings)", name, iu, w.Total(), su.Total(), w2.Total())
		}
		if iu == (traces.Usage{}) && name != "type key case" {
			t.Errorf("%s: nothing billed; the case tests nothing", name)
		}
	}
}

// progressEcho is a Claude Code 2.1 progress line echoing a subagent
// response (the shape of subagent.jsonl's), with its usage.
const progressEcho = `{"parentUuid":"p1","isSidechain":false,"sessionId":"s1","type":"progress","data":{"message":{"type":"assistant","timestamp":"2026-02-10T21:58:17.856Z","message":{"model":"claude-haiku-4-5-20251001","id":"msg_1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a \"b\"\\c\u00e9"}}],"stop_reason":null,"usage":{"input_tokens":2,"cache_creation_input_tokens":2398,"cache_read_input_tokens":15584,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2398},"output_tokens":3,"service_tier":"standard"}},"requestId":"req_1","uuid":"u1"},"normalizedMessages":[],"type":"agent_progress","prompt":"Draft","agentId":"afb92ff"},"toolUseID":"agent_msg_1","uuid":"u2","timestamp":"2026-02-10T21:58:17.857Z"}`

// echoes bills progress line b twice: by progressAgents.scan on the
// one-pass reader's spans, and by add (encoding/json) behind the line
// filters scan replaced. It returns both, their warnings, and whether
// scan read the line itself.
func echoes(b []byte) (fast, ref []*SessionUsage, fw, rw traces.Warnings, own, ok bool) {
	var l billLine
	if parseBillLine(b, &l) != nil || string(l.typ) != "progress" {
		return nil, nil, fw, rw, false, false
	}
	pf := &progressAgents{name: "f", byID: map[string]int{}, byCall: map[string][2]int{}}
	pr := &progressAgents{name: "f", byID: map[string]int{}, byCall: map[string][2]int{}}
	pf.scan(b, &l, func(r string) { fw.Add("f", 1, r) })
	if bytes.Contains(b, keyUsage) && bytes.Contains(b, keyAgentID) {
		pr.add(b, func(r string) { rw.Add("f", 1, r) })
	}
	return pf.agents, pr.agents, fw, rw, pf.decoded == 0, true
}

// FuzzProgressEcho checks that the progress echo read from the one-pass
// reader's spans bills what encoding/json's decode bills, on any line.
func FuzzProgressEcho(f *testing.F) {
	f.Add([]byte(progressEcho))
	for _, r := range [][2]string{
		{`"agentId":"afb92ff"`, `"agentId":"afb\u0039ff"`},
		{`"agentId":"afb92ff"`, `"AgentID":"afb92ff"`},
		{`"agentId":"afb92ff"`, `"agentId":null`},
		{`"agentId":"afb92ff"`, `"agentId":7`},
		{`"agentId":"afb92ff"`, `"agentId":"a","agentId":"b"`},
		{`"sessionId":"s1"`, `"sessionId":["s1"]`},
		{`"type":"assistant"`, `"type":"assist\u0061nt"`},
		{`"requestId":"req_1"`, `"requestId":"req_\u00e9"`},
		{`"model":"claude-haiku-4-5-20251001"`, `"model":"<synthetic>"`},
		{`"model":"claude-haiku-4-5-20251001"`, `"model":"claude-\xff"`},
		{`"input_tokens":2`, `"input_tokens":02`},
		{`"input_tokens":2`, `"input_tokens":"2"`},
		{`"input_tokens":2`, `"Input_tokens":2`},
		{`"cache_creation":{`, `"cache_creation":null,"x":{`},
		{`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2398}`, `"cache_creation":4`},
		{`"usage":{`, `"usage":null,"u":{`},
		{`"usage":{`, `"usage":[],"u":{`},
		{`"stop_reason":null`, `"stop_reason":nul`},
		{`"Draft"`, "\"Dr\taft\""},
		{`"Draft"`, `"Dr\qaft"`},
		{`"Draft"`, `"Dr\u00Gft"`},
		{`"Draft",`, "\"Draft\",\t"},
		{`"data":{`, `"data":null,"d":{`},
		{`"data":{`, `"data":{},"data":{`},
		{`{"type":"assistant","timestamp"`, `{"type":"assistant","message":5,"timestamp"`},
	} {
		if !strings.Contains(progressEcho, r[0]) {
			f.Fatalf("seed: %q not in the line", r[0])
		}
		f.Add([]byte(strings.Replace(progressEcho, r[0], r[1], 1)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ref, fw, rw, _, ok := echoes(b)
		if !ok {
			return
		}
		if !reflect.DeepEqual(fast, ref) || fw.String() != rw.String() {
			t.Fatalf("scan billed %s (warnings %q), encoding/json %s (warnings %q)", showAgents(fast), fw.String(), showAgents(ref), rw.String())
		}
	})
}

func showAgents(as []*SessionUsage) string {
	var s []string
	for _, a := range as {
		s = append(s, fmt.Sprintf("%+v", *a))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// TestProgressEchoRealLogs checks the progress lines of the shared logs:
// scan reads every one itself, and bills what encoding/json's decode
// bills; the seed line is billed (the comparison tests something).
func TestProgressEchoRealLogs(t *testing.T) {
	fast, _, _, _, own, ok := echoes([]byte(progressEcho))
	if !ok || !own || len(fast) != 1 || len(fast[0].Calls) != 1 || fast[0].Calls[0].Usage.CacheWrite1h != 2398 || fast[0].ID != "s1.agent-afb92ff" {
		t.Fatalf("seed line: own %v, billed %s", own, showAgents(fast))
	}
	echoed := 0
	for _, name := range []string{bigFile, testdata + "/subagent.jsonl", testdata + "/short.jsonl", testdata + "/tool_heavy.jsonl"} {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		for i, b := range bytes.Split(data, []byte("\n")) {
			fast, ref, fw, rw, own, ok := echoes(b)
			if !ok {
				continue
			}
			if !own {
				t.Errorf("%s:%d: left to encoding/json", name, i+1)
			}
			if !reflect.DeepEqual(fast, ref) || fw.String() != rw.String() {
				t.Errorf("%s:%d: scan billed %s, encoding/json %s", name, i+1, showAgents(fast), showAgents(ref))
			}
			echoed += len(ref)
		}
	}
	if echoed != 42 {
		t.Errorf("%d echoed responses, want the 42 of the shared logs", echoed)
	}
}

// TestLineSource checks the scan's chunked line reader against splitting
// the whole input at '\n', whatever the sizes of the reads: the same
// lines, the last one marked when it has no '\n', and lines over the
// limit reported empty, with or without a '\n'.
func TestLineSource(t *testing.T) {
	type line struct {
		b         string
		eof, long bool
	}
	split := func(data string, max int) []line {
		var out []line
		for len(data) > 0 {
			b, rest, found := strings.Cut(data, "\n")
			l := line{b: b, eof: !found}
			if len(b) > max {
				l = line{eof: !found, long: true}
			}
			out, data = append(out, l), rest
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"", "\n", "\n\n", "a", "a\n", "a\nb", "abcdefghij\nab\n", "abcdefghijk\nab", "abcdefghijklmnopqrstuvwxyz\n\nx\nabcdefghijklmnopqrstuvwxyz"}
	for range 200 {
		var sb strings.Builder
		for range rng.IntN(8) {
			sb.WriteString(strings.Repeat("x", rng.IntN(25)))
			if rng.IntN(5) > 0 {
				sb.WriteByte('\n')
			}
		}
		inputs = append(inputs, sb.String())
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"data+EOF": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
	}
	for _, in := range inputs {
		want := split(in, 10)
		for name, r := range readers {
			// A buffer of 4 grows for longer lines, one of 64 holds many.
			for _, size := range []int{0, 4, 64} {
				src := lineSource{r: r(in), buf: make([]byte, size), max: 10}
				var got []line
				for {
					b, eof, long, ok, err := src.next()
					require.NoError(t, err)
					if !ok {
						break
					}
					got = append(got, line{string(b), eof, long})
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%q, %s reads, buffer %d: got %+v, want %+v", in, name, size, got, want)
				}
			}
		}
	}
	// A line over the limit is dropped as it is read: the buffer stays
	// one chunk.
	huge := strings.Repeat("x", 3*chunkSize) + "\nab"
	src := lineSource{r: strings.NewReader(huge), max: 10}
	for _, want := range []line{{long: true}, {b: "ab", eof: true}} {
		b, eof, long, ok, err := src.next()
		require.NoError(t, err)
		if got := (line{string(b), eof, long}); !ok || got != want {
			t.Errorf("huge line: got %+v (ok %v), want %+v", got, ok, want)
		}
	}
	if len(src.buf) > chunkSize {
		t.Errorf("buffer grew to %d bytes for a line over the limit", len(src.buf))
	}
	src = lineSource{r: iotest.ErrReader(errors.New("disk on fire")), max: 10}
	if _, _, _, _, err := src.next(); err == nil || err.Error() != "disk on fire" {
		t.Errorf("read error: %v", err)
	}
}

// utf16 is s in UTF-16 with a byte-order mark, as Windows PowerShell's `>`
// writes a file.
func utf16(s string, big bool) string {
	return utf16Bare("\ufeff"+s, big)
}

// utf16Bare is s in UTF-16 without a byte-order mark.
func utf16Bare(s string, big bool) string {
	var b []byte
	put := func(u uint16) {
		if big {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	for _, u := range utf16enc.Encode([]rune(s)) {
		put(u)
	}
	return string(b)
}

// utf32 is s in UTF-32, with a byte-order mark when mark is set.
func utf32(s string, big, mark bool) string {
	if mark {
		s = "\ufeff" + s
	}
	var b []byte
	for _, r := range s {
		if big {
			b = binary.BigEndian.AppendUint32(b, uint32(r))
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(r))
		}
	}
	return string(b)
}

// TestScanBillsWhatImportBills pins issue 27's silent drops in cost, where
// cost and the importer read one file two ways: a UTF-16 log was every
// line invalid JSON to both ($0.00, exit 0), and a billed line with a raw
// NUL (or another control byte, or a bad escape) in a string was billed
// by cost and skipped by import. Both now read the same text (a UTF-16
// file with a byte-order mark decoded, a UTF-8 one's mark dropped) and
// skip the same lines with the same warning; and cost warns about a call
// it cannot date, which the importer warns about too.
func TestScanBillsWhatImportBills(t *testing.T) {
	good := goodUser + "\n" + goodCall + "\n"
	want := traces.Usage{Input: 3, CacheWrite5m: 10, CacheRead: 100, Output: 5}
	for name, c := range map[string]struct {
		data  string
		bill  traces.Usage
		warn  string // the scan's one warning, "" for none
		first string // its place, s1.jsonl:2 if ""
	}{
		"utf-16le":                {data: utf16(good, false), bill: want},
		"utf-16be":                {data: utf16(good, true), bill: want},
		"utf-16le without a mark": {data: utf16Bare(good, false), bill: want},
		"utf-16be without a mark": {data: utf16Bare(good, true), bill: want},
		"utf-32le":                {data: utf32(good, false, true), bill: want},
		"utf-32be":                {data: utf32(good, true, true), bill: want},
		"utf-32le without a mark": {data: utf32(good, false, false), bill: want},
		"utf-32be without a mark": {data: utf32(good, true, false), bill: want},
		"utf-8 byte-order mark":   {data: "\xef\xbb\xbf" + good, bill: want},
		"raw NUL in a string":     {data: goodUser + "\n" + strings.Replace(goodCall, `"hello"`, "\"hel\x00lo\"", 1) + "\n", warn: warnInvalidJSON},
		"raw tab in a string":     {data: goodUser + "\n" + strings.Replace(goodCall, `"hello"`, "\"hel\tlo\"", 1) + "\n", warn: warnInvalidJSON},
		"bad escape":              {data: goodUser + "\n" + strings.Replace(goodCall, `"hello"`, `"hel\qlo"`, 1) + "\n", warn: warnInvalidJSON},
		"bad timestamp":           {data: goodUser + "\n" + strings.Replace(goodCall, "2026-02-10T21:00:02.000Z", "yesterday", 1) + "\n", bill: want, warn: warnCallBadTime, first: `s1.jsonl:2 (timestamp "yesterday")`},
		"no timestamp":            {data: goodUser + "\n" + strings.Replace(goodCall, `"timestamp":"2026-02-10T21:00:02.000Z",`, "", 1) + "\n", bill: want, warn: warnCallNoTime},
	} {
		if c.first == "" {
			c.first = "s1.jsonl:2"
		}
		var iw traces.Warnings
		ss, err := readSession(strings.NewReader(c.data), "f.jsonl", &iw)
		require.NoError(t, err, name)
		var iu traces.Usage
		for _, s := range ss {
			u, _ := billed(s)
			iu = iu.Add(u)
		}
		su, sw := scan(t, c.data)
		accounted(t, su, sw)
		if su.Total() != c.bill || iu != c.bill {
			t.Errorf("%s: scan billed %+v, import %+v, want %+v", name, su.Total(), iu, c.bill)
		}
		if got := sw.List(); c.warn == "" && len(got) != 0 || c.warn != "" && (len(got) != 1 || got[0].Reason != c.warn || got[0].First != c.first) {
			t.Errorf("%s: scan warnings %v, want %q at %s", name, got, c.warn, c.first)
		}
		if c.warn == warnInvalidJSON && (iw.Len() != 1 || iw.List()[0].Reason != warnInvalidJSON) {
			t.Errorf("%s: import warnings %v, want the scan's", name, iw.List())
		}
	}
}

// A cancelled context stops the scan and the import with its error
// instead of reading every file of the tree.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ScanUsage(ctx, "../../testdata/claude-code"); !errors.Is(err, context.Canceled) {
		t.Errorf("ScanUsage: %v, want context.Canceled", err)
	}
	if _, _, err := Import(ctx, "../../testdata/claude-code"); !errors.Is(err, context.Canceled) {
		t.Errorf("Import: %v, want context.Canceled", err)
	}
}

// TestUnreadFileFails pins issue 27's empty result that looked clean:
// cost of a file whose every line was skipped printed $0.00 and exited 0
// (compare and whatif went on with the other files, exit 0). Both readers
// now fail the file (traces.WarnUnreadFile, naming it), so commands exit
// 1; a file of blank lines, or with one record among the junk, does not.
func TestUnreadFileFails(t *testing.T) {
	good := goodUser + "\n" + goodCall + "\n"
	for name, c := range map[string]struct {
		data string
		fail bool
	}{
		"junk":                       {data: "garbage\n{\"bad\": \nnot json\n", fail: true},
		"junk and blank lines":       {data: "\n  \ngarbage\n\n", fail: true},
		"JSON but no record":         {data: `{"foo":1}` + "\n" + `[1,2]` + "\n", fail: true},
		"a truncated line only":      {data: `{"type":"user","sessionId":"s1"`, fail: true},
		"utf-16 junk":                {data: utf16("garbage\n", false), fail: true},
		"blank lines only":           {data: "\n\n  \n"},
		"empty":                      {data: ""},
		"one record among the junk":  {data: "garbage\n" + goodUser + "\nnot json\n"},
		"a log":                      {data: good},
		"a log with a truncated end": {data: good + `{"type":"user"`},
	} {
		_, sw := scan(t, c.data)
		var iw traces.Warnings
		_, err := readSession(strings.NewReader(c.data), "s1.jsonl", &iw)
		require.NoError(t, err, name)
		for who, w := range map[string]*traces.Warnings{"scan": sw, "import": &iw} {
			failed := w.Failed() == 1 && slices.ContainsFunc(w.List(), func(x traces.Warning) bool {
				return x.Reason == traces.WarnUnreadFile && x.First == "s1.jsonl"
			})
			if failed != c.fail || !c.fail && w.Failed() != 0 {
				t.Errorf("%s: %s failed %d, warnings %v; want failed %v", name, who, w.Failed(), w.List(), c.fail)
			}
		}
	}
}

// TestScanBadTimes pins issue 27's zero time: a call timestamped
// 0001-01-01T00:00:00Z (Go's zero time) was shown under "(no time)", as if
// the log had given none, and one a nanosecond later, or at the Unix
// epoch, as a call of that day, without a word. A timestamp no call has
// (before 2000, from 2100 on) is a bad timestamp, one rule: the scan bills
// the call, marks it BadTime and warns naming file:line and the value;
// the importer takes the previous event's time, warned alike.
func TestScanBadTimes(t *testing.T) {
	want := traces.Usage{Input: 3, CacheWrite5m: 10, CacheRead: 100, Output: 5}
	for _, c := range []struct {
		ts  string
		bad bool
	}{
		{"0001-01-01T00:00:00Z", true},
		{"0001-01-01T00:00:00.000000001Z", true},
		{"1970-01-01T00:00:00Z", true},
		{"1999-12-31T23:59:59.999Z", true},
		{"2100-01-01T00:00:00Z", true},
		{"9999-12-31T23:59:59Z", true},
		{"2000-01-01T00:00:00Z", false},
		{"2099-12-31T23:59:59Z", false},
	} {
		data := goodUser + "\n" + strings.Replace(goodCall, "2026-02-10T21:00:02.000Z", c.ts, 1) + "\n"
		su, sw := scan(t, data)
		accounted(t, su, sw)
		place := fmt.Sprintf("s1.jsonl:2 (timestamp %q)", c.ts)
		if len(su.Calls) != 1 || su.Total() != want {
			t.Fatalf("%s: scan billed %+v, want %+v once", c.ts, su.Calls, want)
		}
		call := su.Calls[0]
		got := sw.List()
		switch {
		case c.bad && (!call.BadTime || !call.Time.IsZero() || len(got) != 1 || got[0].Reason != warnCallBadTime || got[0].First != place):
			t.Errorf("%s: scan call %+v, warnings %v; want a bad time, warned at %s", c.ts, call, got, place)
		case !c.bad && (call.BadTime || call.Time.Format(time.RFC3339) != c.ts || len(got) != 0):
			t.Errorf("%s: scan call %+v, warnings %v; want the time kept, no warning", c.ts, call, got)
		}
		var iw traces.Warnings
		ss, err := readSession(strings.NewReader(data), "s1.jsonl", &iw)
		require.NoError(t, err)
		var at time.Time
		for _, e := range ss[0].Events {
			if e.Kind == traces.Assistant {
				at = e.Time
			}
		}
		ig := iw.List()
		userAt := time.Date(2026, 2, 10, 21, 0, 0, 0, time.UTC) // goodUser's
		switch {
		case c.bad && (!at.Equal(userAt) || len(ig) != 1 || ig[0].Reason != warnBadTime || ig[0].First != place):
			t.Errorf("%s: import timed the call %v, warnings %v; want the previous event's time, warned at %s", c.ts, at, ig, place)
		case !c.bad && slices.ContainsFunc(ig, func(x traces.Warning) bool { return x.Reason == warnBadTime }):
			t.Errorf("%s: import warnings %v: a good time taken for a bad one", c.ts, ig)
		}
	}
}

// TestBorrowedTimeNoCopy pins a bad timestamp's second loss: the importer
// times such a call as the previous line, and when that line was a call,
// the two calls looked like a resume's copy burst (under 50 ms apart) and
// were both kept as history, not replayed (compare replayed 0 requests of
// a log with a call timestamped 0001-01-01T00:00:00Z). A call whose time
// was borrowed (bad, missing or backwards) is no evidence of a burst.
func TestBorrowedTimeNoCopy(t *testing.T) {
	call := func(n int, ts string) string {
		return strings.NewReplacer("2026-02-10T21:00:02.000Z", ts, `"r1"`, fmt.Sprintf(`"r%d"`, n), `"m1"`, fmt.Sprintf(`"m%d"`, n)).Replace(goodCall) + "\n"
	}
	for _, ts := range []string{"0001-01-01T00:00:00Z", "yesterday", "2026-02-10T20:00:00Z"} {
		data := goodUser + "\n" + call(1, "2026-02-10T21:00:02.000Z") + call(2, ts)
		var w traces.Warnings
		ss, err := readSession(strings.NewReader(data), "s1.jsonl", &w)
		require.NoError(t, err)
		calls := 0
		for _, e := range ss[0].Events {
			if e.Kind == traces.Assistant && e.Meta[traces.MetaCopied] != "true" {
				calls++
			}
		}
		if calls != 2 || slices.ContainsFunc(w.List(), func(x traces.Warning) bool { return x.Reason == warnResumeCopy }) {
			t.Errorf("%s: %d calls replayed, warnings %v; want both, no copy", ts, calls, w.List())
		}
	}
	// A real burst still is one: two calls 1 ms apart.
	var w traces.Warnings
	ss, err := readSession(strings.NewReader(goodUser+"\n"+call(1, "2026-02-10T21:00:02.000Z")+call(2, "2026-02-10T21:00:02.001Z")), "s1.jsonl", &w)
	require.NoError(t, err)
	if ss[0].Events[1].Meta[traces.MetaCopied] != "true" || ss[0].Events[2].Meta[traces.MetaCopied] != "true" {
		t.Errorf("a burst's calls not copies: %+v", ss[0].Events)
	}
}
