package chatlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

func sumUsage(s *traces.Session) (traces.Usage, int) {
	var u traces.Usage
	n := 0
	for _, e := range s.Events {
		if e.Usage != nil {
			u = u.Add(*e.Usage)
			n++
		}
	}
	return u, n
}

func TestRequestLog(t *testing.T) {
	ss, w, err := Import("testdata/requests.jsonl", Options{})
	require.NoError(t, err)
	require.Len(t, ss, 2)
	a, b := ss[0], ss[1]
	if a.ID != "requests-1" || b.ID != "requests-2" {
		t.Errorf("ids %q %q", a.ID, b.ID)
	}
	if got, want := tracetest.Kinds(a), "user assistant tool_result assistant user assistant user assistant"; got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if len(a.Floor) != 1 || a.Floor[0].Kind != traces.System {
		t.Errorf("floor = %+v, want one system block", a.Floor)
	}
	// Call 3's response was not logged; it is filled from call 4's history.
	if got := a.Events[5].Blocks; len(got) != 1 || got[0].Text != "It prints hello." {
		t.Errorf("call 3 blocks = %+v", got)
	}
	if a.Events[5].Usage != nil {
		t.Errorf("call 3 has usage %+v, want none", a.Events[5].Usage)
	}
	u, n := sumUsage(a)
	// prompt_tokens include cached: 1200+1260+1400 prompt, 0+1152+1280 cached.
	want := traces.Usage{Input: 1200 + 108 + 120, CacheRead: 1152 + 1280, Output: 20 + 15 + 4}
	if u != want || n != 3 {
		t.Errorf("usage = %+v over %d calls, want %+v over 3", u, n, want)
	}
	if got := a.Events[1].Blocks[0]; got.Kind != traces.ToolUse || got.ID != "call_1" || got.Name != "shell" || got.Input != `{"cmd":"ls"}` {
		t.Errorf("tool use = %+v", got)
	}
	if got := a.Events[2].Blocks[0]; got.ID != "call_1" || got.Text != "README.md\nmain.go\n" {
		t.Errorf("tool result = %+v", got)
	}
	if got, want := a.Events[0].Time, time.Unix(1735689600, 0).UTC(); !got.Equal(want) {
		t.Errorf("first time %v, want %v", got, want)
	}
	if a.Events[1].Model != "gpt-4o-2024-08-06" || a.Events[1].RequestID != "chatcmpl-1" {
		t.Errorf("call 1 model %q id %q", a.Events[1].Model, a.Events[1].RequestID)
	}
	if len(a.Notes) != 0 {
		t.Errorf("timed session has notes %q", a.Notes)
	}
	if got := tracetest.Kinds(b); got != "user assistant" || b.Model != "gpt-4o-mini" {
		t.Errorf("second session %s model %s", got, b.Model)
	}
	wantW := "warning: kept call without usage (no prompt_tokens): 1 line (first at testdata/requests.jsonl:4)\n" +
		"warning: skipped line with invalid JSON: 1 line (first at testdata/requests.jsonl:6)\n" +
		"warning: skipped record with neither messages nor trajectory: 1 line (first at testdata/requests.jsonl:7)\n" +
		"warning: skipped truncated last line: 1 line (first at testdata/requests.jsonl:8)\n"
	if got := w.String(); got != wantW {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, wantW)
	}
}

func TestSWEAgentTrajectory(t *testing.T) {
	ss, w, err := Import("testdata/swe-agent.jsonl", Options{})
	require.NoError(t, err)
	require.Len(t, ss, 2)
	s := ss[0]
	if s.ID != "astropy__astropy-12907" || ss[1].ID != "astropy__astropy-12907#2" {
		t.Errorf("ids %q %q", s.ID, ss[1].ID)
	}
	if got, want := tracetest.Kinds(s), "user assistant user assistant user assistant"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if s.Model != "swe-agent-llama-70b" || s.Source != traces.SourceBatch {
		t.Errorf("model %q source %q", s.Model, s.Source)
	}
	if len(s.Floor) != 1 || !strings.HasPrefix(s.Floor[0].Text, "SETTING:") {
		t.Errorf("floor %+v", s.Floor)
	}
	if len(s.Notes) == 0 || !strings.HasPrefix(s.Notes[0], "timing is synthetic: ") {
		t.Errorf("notes %q", s.Notes)
	}
	// Times strictly increase, 5–15 s apart, and repeat for the same seed.
	for i := 1; i < len(s.Events); i++ {
		d := s.Events[i].Time.Sub(s.Events[i-1].Time)
		if d < 5*time.Second || d > 15*time.Second {
			t.Errorf("gap %d = %v, want 5s..15s", i, d)
		}
	}
	if !s.Events[0].Time.Equal(DefaultPacing.Start) {
		t.Errorf("start %v", s.Events[0].Time)
	}
	again, _, _ := Import("testdata/swe-agent.jsonl", Options{})
	if !again[0].Events[5].Time.Equal(s.Events[5].Time) {
		t.Errorf("synthetic times differ between runs")
	}
	if w.Total() != 0 {
		t.Errorf("warnings: %s", w)
	}
}

func TestOpenHandsTrajectory(t *testing.T) {
	ss, w, err := Import("testdata/openhands.jsonl", Options{Pacing: Pacing{Start: DefaultPacing.Start, Step: time.Second, Seed: 7}})
	require.NoError(t, err)
	require.Len(t, ss, 2)
	s := ss[0]
	if got, want := tracetest.Kinds(s), "user assistant tool_result assistant tool_result tool_result tool_result assistant"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if len(s.Floor) != 3 || s.Floor[0].Kind != traces.ToolSchema || s.Floor[0].Name != "execute_bash" || s.Floor[2].Kind != traces.System {
		t.Errorf("floor = %+v", s.Floor)
	}
	if got := s.Events[3].Blocks; len(got) != 2 || got[1].ID != "toolu_03" || got[1].Input != `{"command":"pytest -x"}` {
		t.Errorf("parallel calls = %+v", got)
	}
	// Jitter 0: exactly one step apart.
	if d := s.Events[1].Time.Sub(s.Events[0].Time); d != time.Second {
		t.Errorf("step = %v", d)
	}
	if got := ss[1].Events[0].Blocks[0].Text; got != "caf\uFFFD \uFFFD" {
		t.Errorf("repaired text = %q", got)
	}
	wantW := "warning: kept line with invalid UTF-8 (bad bytes replaced): 1 line (first at testdata/openhands.jsonl:2)\n" +
		"warning: kept tool call with no result: 1 line (first at testdata/openhands.jsonl:1)\n" +
		"warning: kept tool result with no matching tool call: 1 line (first at testdata/openhands.jsonl:1)\n"
	if got := w.String(); got != wantW {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, wantW)
	}
}

func TestJSONDocument(t *testing.T) {
	dir := t.TempDir()
	doc := `[
 {"model":"gpt-4.1","created":1735689600,"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}],
  "choices":[{"message":{"role":"assistant","content":"hello"}}],
  "usage":{"prompt_tokens":900,"completion_tokens":3,"cache_read_input_tokens":512}}
]`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "log.json"), []byte(doc), 0o644))
	ss, w, err := Import(dir, Options{})
	require.NoError(t, err)
	require.Len(t, ss, 1)
	ev := ss[0].Events
	if len(ev) != 2 || len(ev[0].Blocks) != 2 || ev[0].Blocks[1].Kind != traces.Image || ev[0].Blocks[1].Tokens != ImageTokens {
		t.Fatalf("events = %+v", ev)
	}
	if got, want := *ev[1].Usage, (traces.Usage{Input: 388, CacheRead: 512, Output: 3}); got != want {
		t.Errorf("usage %+v, want %+v", got, want)
	}
	if w.Total() != 0 {
		t.Errorf("warnings: %s", w)
	}

	bad := "[\n {\"messages\": [}\n]"
	_, err = Read(strings.NewReader(bad), "bad.json", Options{}, &traces.Warnings{})
	if err == nil || !strings.HasPrefix(err.Error(), "bad.json:2: ") {
		t.Errorf("error = %v, want bad.json:2: ...", err)
	}
}

func TestRoundTripNative(t *testing.T) {
	ss, _, err := Import("testdata", Options{})
	require.NoError(t, err)
	for _, s := range ss {
		tracetest.RoundTrip(t, s)
	}
}

func FuzzChatlog(f *testing.F) {
	for _, name := range []string{"requests.jsonl", "swe-agent.jsonl", "openhands.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`[{"messages":[{"role":"tool","tool_call_id":"x"}]}]`))
	f.Add([]byte(`{"trajectory":"[{\"role\":\"ai\",\"text\":\"x\"}]"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &traces.Warnings{}
		ss, err := Read(bytes.NewReader(data), "fuzz", Options{}, w)
		if err != nil {
			return
		}
		for _, s := range ss {
			var b bytes.Buffer
			if err := traces.WriteSession(&b, s); err != nil {
				t.Fatalf("write: %v", err)
			}
			tracetest.Bounded(t, s)
		}
	})
}

// A created time no call has (0, the Unix epoch) is warned at its line,
// naming the value, and the record is timed as the previous one.
func TestCreatedEpoch(t *testing.T) {
	rec := func(created, msgs string) string {
		return `{"model":"gpt-4.1","created":` + created + `,"messages":[` + msgs + `],"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":900,"completion_tokens":3}}`
	}
	first := `{"role":"user","content":"a"}`
	second := first + `,{"role":"assistant","content":"ok"},{"role":"user","content":"b"}`
	w := &traces.Warnings{}
	ss, err := Read(strings.NewReader(rec("1735689600", first)+"\n"+rec("0", second)+"\n"), "log.jsonl", Options{}, w)
	require.NoError(t, err)
	require.Len(t, ss, 1, "the second request continues the first")
	ev := ss[0].Events
	if last := ev[len(ev)-1].Time; !last.Equal(ev[0].Time) {
		t.Errorf("record at the epoch timed %v, want the previous record's %v", last, ev[0].Time)
	}
	if want := "warning: " + WarnBadCreated + `: 1 line (first at log.jsonl:2 (timestamp "0"))` + "\n"; w.String() != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", w, want)
	}
}
