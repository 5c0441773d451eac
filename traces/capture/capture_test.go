package capture

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

func readFile(t *testing.T, name string) ([]*Call, []*traces.Session, *traces.Warnings) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &traces.Warnings{}
	calls, err := Read(f, name, w)
	if err != nil {
		t.Fatal(err)
	}
	// Sessions changes the calls (previous_response_id); group copies.
	return calls, Sessions(calls, name, w), w
}

func calls(s *traces.Session) []*traces.Event {
	var out []*traces.Event
	for i := range s.Events {
		if e := &s.Events[i]; e.Kind == traces.Assistant && e.Meta[traces.MetaCopied] == "" {
			out = append(out, e)
		}
	}
	return out
}

// A claude-tap trace of Claude Code 2.1: a title request and a session of
// three calls whose requests each extend the last; every marker, its TTL
// and the request settings are kept on the call.
func TestClaudeTap(t *testing.T) {
	cs, ss, w := readFile(t, "testdata/claude-tap-claude.json")
	if len(cs) != 4 || w.Total() != 0 {
		t.Fatalf("%d calls, warnings %v", len(cs), w)
	}
	if len(ss) != 2 {
		t.Fatalf("%d sessions, want the title request and the conversation", len(ss))
	}
	title, main := ss[0], ss[1]
	if n := len(calls(title)); n != 1 || title.Events[0].Kind != traces.User {
		t.Fatalf("title session: %d calls, first %s", n, title.Events[0].Kind)
	}
	got := calls(main)
	if len(got) != 3 {
		t.Fatalf("main session: %d calls, want 3", len(got))
	}
	if u := *got[1].Usage; u != (traces.Usage{Input: 2, CacheWrite1h: 5528, CacheRead: 32720, Output: 6108}) {
		t.Errorf("call 2 usage %+v", u)
	}
	m := got[0].Meta
	if m[MetaMarks] != "system.0:1h,system.1:1h,messages.0.1:1h" || m[MetaThinking] != `{"type":"adaptive"}` ||
		!strings.Contains(m[MetaContextManagement], "clear_thinking_20251015") || m[MetaAPI] != Anthropic {
		t.Errorf("call 1 meta %v", m)
	}
	if marks, err := ParseMarks(got[2].Meta[MetaMarks]); err != nil || len(marks) != 3 || marks[2] != (Mark{Section: SecMessages, Index: 5, Block: 0, TTL: "1h"}) {
		t.Errorf("call 3 marks %+v %v", marks, err)
	}
	// The tools changed between calls 1 and 2 (Claude Code loaded its MCP
	// tools): a floor change with the new floor. Only one: the billing
	// header, which changes every call, is not floor (billingHeader).
	changes := 0
	for _, e := range main.Events {
		if e.Kind == traces.FloorChange {
			changes++
			if len(e.Blocks) != 3+2 || e.Blocks[2].Name != "mcp__claude_ai_Google_Drive__complete_authentication" {
				t.Errorf("floor change blocks %d, last tool %q", len(e.Blocks), e.Blocks[2].Name)
			}
		}
	}
	if changes != 1 {
		t.Errorf("%d floor changes, want 1", changes)
	}
	// The assistant message is the one the next request sent back.
	if ps := traces.Validate(main); len(ps) > 0 {
		t.Errorf("validate: %v", ps)
	}
	for _, s := range ss {
		if s.Format != FormatName || s.Floor == nil && s != title {
			t.Errorf("session %s: format %q floor %d", s.ID, s.Format, len(s.Floor))
		}
	}
}

// Codex over the Responses API WebSocket: each call sends only what
// follows its previous_response_id, so the conversation is the previous
// call's input and output plus the call's own; usage is cached_tokens.
func TestCodexPrevious(t *testing.T) {
	_, ss, w := readFile(t, "testdata/claude-tap-codex.json")
	if w.Total() != 0 || len(ss) != 1 {
		t.Fatalf("%d sessions, warnings %v", len(ss), w)
	}
	got := calls(ss[0])
	if len(got) != 3 {
		t.Fatalf("%d calls", len(got))
	}
	want := []traces.Usage{{Input: 10032}, {Input: 16598 - 4992, CacheRead: 4992, Output: 102}, {Input: 18686 - 16256, CacheRead: 16256, Output: 64}}
	for i, e := range got {
		if *e.Usage != want[i] {
			t.Errorf("call %d usage %+v, want %+v", i+1, *e.Usage, want[i])
		}
		if e.Meta[MetaAPI] != OpenAIResponses || e.Time.IsZero() {
			t.Errorf("call %d: api %q time %v", i+1, e.Meta[MetaAPI], e.Time)
		}
	}
	if ps := traces.Validate(ss[0]); len(ps) > 0 {
		t.Errorf("validate: %v", ps)
	}
	if got[1].Time.Before(got[0].Time) {
		t.Errorf("times go back: %v %v", got[0].Time, got[1].Time)
	}
}

// claude-trace's RawPair JSONL, the second response streamed: the SSE
// events reassemble into the same content and usage as the JSON body.
func TestClaudeTrace(t *testing.T) {
	cs, ss, w := readFile(t, "testdata/claude-trace.jsonl")
	if len(cs) != 2 || w.Total() != 0 {
		t.Fatalf("%d calls, warnings %v", len(cs), w)
	}
	tap, _, _ := readFile(t, "testdata/claude-tap-claude.json")
	streamed, plain := cs[1], tap[2]
	if *streamed.Usage != *plain.Usage {
		t.Errorf("streamed usage %+v, JSON %+v", *streamed.Usage, *plain.Usage)
	}
	if len(streamed.Output) != len(plain.Output) {
		t.Fatalf("streamed output %d blocks, JSON %d", len(streamed.Output), len(plain.Output))
	}
	for i := range plain.Output {
		a, b := streamed.Output[i], plain.Output[i]
		if a.Kind != b.Kind || a.Text != b.Text || a.Input != b.Input || a.ID != b.ID {
			t.Errorf("block %d: streamed %+v, JSON %+v", i, a, b)
		}
	}
	if !streamed.Stream || streamed.Time != time.UnixMilli(1782578460000).UTC() {
		t.Errorf("stream %v time %v", streamed.Stream, streamed.Time)
	}
	if len(ss) != 1 || len(calls(ss[0])) != 2 {
		t.Fatalf("%d sessions", len(ss))
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"cut document", "{\"session\":\"x\",\"packets\":[{\"index\":1,\n\"method\":\"POST\"", "in.json:2: "},
		{"not a capture", `{"a":1}`, "in.json:1: not a capture"},
		{"packets not a list", "{\"packets\":\n{}}", "in.json:2: packets is not an array"},
	} {
		_, err := Read(strings.NewReader(tc.in), "in.json", &traces.Warnings{})
		var se *traces.SyntaxError
		var nc *NotCaptureError
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !(errors.As(err, &se) || errors.As(err, &nc)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// JSONL: a bad line and a line that is not a model call are skipped
	// and counted, at their lines.
	in := `{"request":{"timestamp":1,"method":"GET","url":"https://api.openai.com/v1/models","headers":{}},"response":{"status_code":200,"body":{}}}
{"request":{"method":"POST","url":
{"request":{"timestamp":"2026-06-27T10:00:00Z","method":"POST","url":"https://api.openai.com/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}},"response":{"status_code":429,"body":{"error":{"message":"rate limited"}}}}
`
	w := &traces.Warnings{}
	cs, err := Read(strings.NewReader(in), "in.jsonl", w)
	if err != nil || len(cs) != 1 || cs[0].Error != "rate limited" || cs[0].Status != 429 {
		t.Fatalf("calls %d err %v", len(cs), err)
	}
	ss := Sessions(cs, "in.jsonl", w)
	got := w.String()
	for _, want := range []string{"in.jsonl:1", "in.jsonl:2", "in.jsonl:3", WarnNotACall, WarnFailedCall} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if len(ss) != 0 {
		t.Errorf("%d sessions from a failed call", len(ss))
	}
}

func TestSniff(t *testing.T) {
	for _, f := range []string{"testdata/claude-tap-claude.json", "testdata/claude-tap-codex.json", "testdata/claude-trace.jsonl"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !Sniff(b[:min(len(b), traces.HeadSize)]) {
			t.Errorf("%s: not sniffed", f)
		}
	}
	for _, h := range []string{`{"type":"session_meta"}`, `{"request":{"messages":[]}}`, `[{"turn":1}]`} {
		if Sniff([]byte(h)) {
			t.Errorf("sniffed %s", h)
		}
	}
}

func TestMarksRoundTrip(t *testing.T) {
	in := []Mark{{Section: SecTools, Index: 3, TTL: "1h"}, {Section: SecSystem, Index: 1, TTL: "5m", Scope: "global"}, {Section: SecMessages, Index: 7, Block: 2, TTL: "5m"}}
	s := FormatMarks(in)
	out, err := ParseMarks(s)
	if err != nil || len(out) != 3 || out[0] != in[0] || out[1] != in[1] || out[2] != in[2] {
		t.Fatalf("%s -> %+v %v", s, out, err)
	}
	for _, bad := range []string{"tools.1", "system.x:5m", "messages.1:5m", "floor.1:5m", "tools.1:2h"} {
		if _, err := ParseMarks(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A HAR 1.2 archive (pretty-printed: no first line to sniff, read by its
// name) holds the same two calls as the claude-trace file, the streamed
// one reassembled from its event-stream content.
func TestHAR(t *testing.T) {
	cs, ss, w := readFile(t, "testdata/capture.har")
	want, _, _ := readFile(t, "testdata/claude-trace.jsonl")
	if len(cs) != 2 || w.Total() != 0 || len(ss) != 1 {
		t.Fatalf("%d calls, %d sessions, warnings %v", len(cs), len(ss), w)
	}
	for i := range cs {
		a, b := cs[i], want[i]
		if *a.Usage != *b.Usage || !a.Time.Equal(b.Time) || len(a.Output) != len(b.Output) || FormatMarks(a.Marks) != FormatMarks(b.Marks) {
			t.Errorf("call %d: HAR %+v at %v, claude-trace %+v at %v", i+1, *a.Usage, a.Time, *b.Usage, b.Time)
		}
	}
	if cs[1].Line <= cs[0].Line || cs[0].Line < 5 {
		t.Errorf("entries at lines %d and %d", cs[0].Line, cs[1].Line)
	}
	if !IsHARName("x/capture.HAR") || IsHARName("capture.json") {
		t.Error("IsHARName")
	}
}

// OpenTelemetry GenAI spans in OTLP JSON: the chat spans are calls (the
// agent span, without usage, is not), input_tokens counting the cached
// ones as the conventions say; the messages group into one session.
func TestOTLP(t *testing.T) {
	cs, ss, w := readFile(t, "testdata/otlp-genai.json")
	tap, _, _ := readFile(t, "testdata/claude-tap-claude.json")
	if len(cs) != 3 || w.Total() != 0 || len(ss) != 1 {
		t.Fatalf("%d calls, %d sessions, warnings %v", len(cs), len(ss), w)
	}
	for i, c := range cs {
		want := *tap[i+1].Usage
		// The conventions have one cache-creation count: no TTL split.
		want.CacheWrite5m, want.CacheWrite1h = want.Writes(), 0
		if *c.Usage != want || c.API != Anthropic || c.Model != "claude-opus-4-8" || c.Time.IsZero() {
			t.Errorf("call %d: %+v (%s, %s, %v), want %+v", i+1, *c.Usage, c.API, c.Model, c.Time, want)
		}
	}
	if got := len(calls(ss[0])); got != 3 || cs[0].Line < 10 {
		t.Errorf("%d calls in the session; first span at line %d", got, cs[0].Line)
	}
	if !Sniff([]byte(`{"resourceSpans":[`)) {
		t.Error("OTLP not sniffed")
	}
	// One request per line, as a collector's file exporter writes.
	b, _ := os.ReadFile("testdata/otlp-genai.json")
	var doc any
	json.Unmarshal(b, &doc)
	line, _ := json.Marshal(doc)
	w2 := &traces.Warnings{}
	cs2, err := Read(strings.NewReader(string(line)+"\n"+string(line)+"\n"), "spans.jsonl", w2)
	if err != nil || len(cs2) != 6 || cs2[3].Line != 2 {
		t.Errorf("JSONL: %d calls, %v", len(cs2), err)
	}
}

// A request claude-tap shortened ("…〔已截断,原长 N 字符〕" ending a string)
// is kept with a counted warning, once per call; the word in a text
// ("输出已截断", "output cut") is not its mark; the mark is found written
// out or as JSON escapes.
func TestCutRequest(t *testing.T) {
	raw, err := os.ReadFile("testdata/claude-tap-claude.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	packets := doc["packets"].([]any)
	appendSystem := func(i int, s string) {
		body := packets[i].(map[string]any)["request"].(map[string]any)["body"].(map[string]any)
		sys := body["system"].([]any)
		b := sys[len(sys)-1].(map[string]any)
		b["text"] = b["text"].(string) + s
	}
	appendSystem(1, "…〔已截断,原长 1729 字符〕")
	appendSystem(1, "") // one call, one warning however many marks
	appendSystem(2, "; 输出已截断")
	appendSystem(3, "…[已截断, 原 1,973,608 字符(多为 base64/大块)]")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	w := &traces.Warnings{}
	cs, err := Read(strings.NewReader(string(b)), "cut.json", w)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 {
		t.Fatalf("%d calls, want all 4 kept", len(cs))
	}
	n := 0
	for _, x := range w.List() {
		if x.Reason == WarnCut {
			n = x.Count
		}
	}
	if n != 2 {
		t.Errorf("%d cut warnings, want 2 (packets 2 and 4): %v", n, w)
	}
	for i, want := range []bool{false, true, false, true} {
		if cs[i].Cut != want {
			t.Errorf("call %d: Cut %v, want %v", i, cs[i].Cut, want)
		}
	}
	// The mark reaches the session's call event (MetaCut), for the
	// as-sent replay's report.
	cutEvents := 0
	for _, s := range Sessions(cs, "cut.json", w) {
		for _, e := range calls(s) {
			if e.Meta[MetaCut] != "" {
				cutEvents++
			}
		}
	}
	if cutEvents != 2 {
		t.Errorf("%d call events marked cut, want 2", cutEvents)
	}
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"a":"x…〔已截断,原长 12 字符〕"}`, true},
		{`{"a":"x\u2026\u3014\u5df2\u622a\u65ad,\u539f\u957f 12 \u5b57\u7b26\u3015"}`, true},
		{`{"a":"x\u2026[\u5DF2\u622A\u65AD, \u539f 12"}`, true},
		{`{"a":"内容过长已截断"}`, false},
		{`{"a":"plain"}`, false},
	} {
		if got := cut([]byte(c.body)); got != c.want {
			t.Errorf("cut(%s) = %v, want %v", c.body, got, c.want)
		}
	}
}
