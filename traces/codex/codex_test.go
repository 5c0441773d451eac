package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

const fixture = "testdata/sessions/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl"

func TestRollout(t *testing.T) {
	ss, w, err := Import("testdata/sessions") // directory: searched recursively
	require.NoError(t, err)
	require.Len(t, ss, 1)
	s := ss[0]
	if s.ID != "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5" || s.Model != "gpt-5-codex" || s.Source != traces.SourceCLI || s.Window != 272000 {
		t.Errorf("session %q model %q source %q window %d", s.ID, s.Model, s.Source, s.Window)
	}
	want := "user user user assistant tool_result assistant tool_result assistant model_switch user assistant tool_result compaction user user assistant"
	if got := tracetest.Kinds(s); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if len(s.Floor) != 1 || s.Floor[0].Kind != traces.System || !strings.HasPrefix(s.Floor[0].Text, "You are Codex") {
		t.Errorf("floor = %+v", s.Floor)
	}
	var sum traces.Usage
	calls := 0
	for _, e := range s.Events {
		if e.Usage != nil {
			sum = sum.Add(*e.Usage)
			calls++
		}
	}
	// input_tokens include cached: 22100 total input, 10496 cached.
	if wantU := (traces.Usage{Input: 11604, CacheRead: 10496, Output: 550}); sum != wantU || calls != 4 {
		t.Errorf("usage %+v over %d calls, want %+v over 4 (the repeated token_count is not a call)", sum, calls, wantU)
	}
	// The reasoning item: its summary, and its encrypted content sized
	// from the call's 64 reasoning tokens.
	first := s.Events[3]
	if len(first.Blocks) != 3 || first.Blocks[0].Kind != traces.Thinking || first.Blocks[1].Kind != traces.Thinking ||
		first.Blocks[1].Tokens != 64 || first.Blocks[2].ID != "call_A" ||
		first.Blocks[2].Input != `{"command":["bash","-lc","go test ./..."],"workdir":"/tmp/proj"}` {
		t.Errorf("first call blocks = %+v", first.Blocks)
	}
	if first.LatencyMS != 1379 || first.Model != "gpt-5-codex" {
		t.Errorf("first call latency %d model %q", first.LatencyMS, first.Model)
	}
	if got := s.Events[5].Blocks[0]; got.Name != "apply_patch" || !strings.HasPrefix(got.Input, `"*** Begin Patch\n`) {
		t.Errorf("custom tool call = %+v", got)
	}
	if got := s.Events[4].Blocks[0]; got.ID != "call_A" || !strings.Contains(got.Text, "FAIL: TestAdd") {
		t.Errorf("tool output = %+v", got)
	}
	if sw := s.Events[8]; sw.Model != "gpt-5" || sw.Meta["effort"] != "medium" {
		t.Errorf("model switch = %+v", sw)
	}
	if s.Events[10].Model != "gpt-5" || s.Events[10].Blocks[0].Name != "web_search" {
		t.Errorf("web search call = %+v", s.Events[10])
	}
	// A local compaction without replacement history keeps the initial
	// context, the user messages and the summary (compact.rs).
	summ := s.Events[13]
	if !summ.Summary || len(summ.Blocks) != 5 || !strings.HasPrefix(summ.Blocks[0].Text, "<permissions") ||
		summ.Blocks[2].Text != "Run the tests and fix what fails." || !strings.HasPrefix(summ.Blocks[4].Text, "Summary:") {
		t.Errorf("summary event = %+v", summ)
	}
	if last := s.Events[15]; last.Usage != nil || last.Meta["aborted"] != "interrupted" {
		t.Errorf("aborted call = %+v", last)
	}
	if s.Events[0].Meta["role"] != "developer" {
		t.Errorf("developer message meta = %v", s.Events[0].Meta)
	}
	for i := 1; i < len(s.Events); i++ {
		if s.Events[i].Time.Before(s.Events[i-1].Time) {
			t.Errorf("event %d goes back in time", i)
		}
	}
	wantW := "warning: kept call without token_count usage: 1 line (first at " + filepath.Join("testdata", fixture[len("testdata/"):]) + ":33)\n"
	got := w.String()
	for _, r := range []string{
		"warning: kept event whose timestamp goes backwards (clamped to the previous one): 1 line (first at %s:30)",
		"warning: kept tool call with no result: 1 line (first at %s:33)",
		"warning: kept tool result with no matching tool call: 1 line (first at %s:30)",
		"warning: skipped event_msg of unknown type: 1 line (first at %s:29)",
		"warning: skipped line of unknown type: 1 line (first at %s:27)",
		"warning: skipped line with invalid JSON: 1 line (first at %s:26)",
		"warning: skipped response_item of unknown type: 1 line (first at %s:28)",
	} {
		wantW += strings.Replace(r, "%s", fixture, 1) + "\n"
	}
	if got != sortLines(wantW) {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, sortLines(wantW))
	}
}

func sortLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

func TestOlderRolloutWithoutMeta(t *testing.T) {
	// Older CLIs: no base_instructions, output as {content, success}; a
	// rollout cut before its session_meta still imports.
	in := `{"timestamp":"2025-08-01T10:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"2025-08-01T10:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}
{"timestamp":"2025-08-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5,"total_tokens":105},"total_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5,"total_tokens":105}}}}
{"timestamp":"2025-08-01T10:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":{"content":"ok","success":true}}}
{"timestamp":"2025-08-01T10:00:04Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":120,"cached_input_tokens":100,"output_tokens":3,"total_tokens":123},"total_token_usage":{"input_tokens":220,"cached_input_tokens":100,"output_tokens":8,"total_tokens":228}}}}
`
	var w traces.Warnings
	s, err := Read(strings.NewReader(in), "rollout-x.jsonl", &w)
	require.NoError(t, err)
	if got := tracetest.Kinds(s); got != "user assistant tool_result assistant" {
		t.Errorf("events %s", got)
	}
	if s.ID != "rollout-x" || len(s.Floor) != 0 {
		t.Errorf("id %q floor %+v", s.ID, s.Floor)
	}
	if got := s.Events[2].Blocks[0].Text; got != "ok" {
		t.Errorf("output text %q", got)
	}
	if u := s.Events[3].Usage; u == nil || *u != (traces.Usage{Input: 20, CacheRead: 100, Output: 3}) {
		t.Errorf("usage of the empty call = %+v", u)
	}
	want := "warning: kept lines before session_meta: 1 line (first at rollout-x.jsonl:1)\n" +
		"warning: kept token_count with no model output before it as an empty call: 1 line (first at rollout-x.jsonl:5)\n"
	if got := w.String(); got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}

func TestTotalsMismatch(t *testing.T) {
	in := `{"timestamp":"2025-08-01T10:00:00Z","type":"session_meta","payload":{"id":"s"}}
{"timestamp":"2025-08-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}}
{"timestamp":"2025-08-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":100,"output_tokens":5},"total_token_usage":{"input_tokens":300,"output_tokens":9}}}}
`
	var w traces.Warnings
	_, err := Read(strings.NewReader(in), "r.jsonl", &w)
	require.NoError(t, err)
	if got := w.String(); got != "warning: kept session whose per-call usage does not add up to total_token_usage: 1 line (first at r.jsonl:3)\n" {
		t.Errorf("warnings: %s", got)
	}
}

func TestRoundTripNative(t *testing.T) {
	ss, _, err := Import(fixture)
	require.NoError(t, err)
	for _, s := range ss {
		tracetest.RoundTrip(t, s)
	}
}

func FuzzCodex(f *testing.F) {
	b, err := os.ReadFile(fixture)
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{}}}}`))
	f.Add([]byte(`{"type":"session_meta","payload":{"source":{"subagent":{}}}}` + "\n" + `{"type":"turn_aborted"}`))
	// Issue 10: wrapped, negative, fractional and cached-over-prompt counts.
	for _, u := range []string{`"input_tokens":100,"cached_input_tokens":999999999999999999`, `"input_tokens":-100`, `"input_tokens":1.5`, `"input_tokens":10,"cached_input_tokens":50`} {
		f.Add([]byte(`{"timestamp":"2025-08-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}}` + "\n" +
			`{"timestamp":"2025-08-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{` + u + `}}}}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data), "fuzz", &traces.Warnings{})
		if err != nil {
			return
		}
		if err := traces.WriteSession(&bytes.Buffer{}, s); err != nil {
			t.Fatalf("write: %v", err)
		}
		tracetest.Bounded(t, s)
	})
}

// TestBadCounts pins issue 10's wrapped and impossible Codex counts: near
// 1e18 (which wrapped totals negative), negative, fractional, and cached
// over the prompt, each resolved with a warning at its line.
func TestBadCounts(t *testing.T) {
	cases := []struct {
		name, last string
		want       traces.Usage
		warn       string
	}{
		{"near 1e18", `"input_tokens":100,"cached_input_tokens":999999999999999999,"output_tokens":5`, traces.Usage{Input: 100, Output: 5}, traces.WarnHugeTokens},
		{"negative", `"input_tokens":-100,"output_tokens":5`, traces.Usage{Output: 5}, traces.WarnNegativeTokens},
		{"fraction", `"input_tokens":100.5,"output_tokens":5`, traces.Usage{Input: 100, Output: 5}, traces.WarnFractionTokens},
		{"cached over prompt", `"input_tokens":100,"cached_input_tokens":150,"output_tokens":5`, traces.Usage{CacheRead: 100, Output: 5}, traces.WarnCachedOverPrompt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"timestamp":"2025-08-01T10:00:00Z","type":"session_meta","payload":{"id":"s"}}
{"timestamp":"2025-08-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}}
{"timestamp":"2025-08-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{` + tc.last + `}}}}
`
			var w traces.Warnings
			s, err := Read(strings.NewReader(in), "r.jsonl", &w)
			require.NoError(t, err)
			var got traces.Usage
			for _, e := range s.Events {
				if e.Usage != nil {
					got = got.Add(*e.Usage)
				}
			}
			if got != tc.want {
				t.Errorf("usage %+v, want %+v", got, tc.want)
			}
			if ws := w.List(); len(ws) != 1 || ws[0].Reason != tc.warn || ws[0].First != "r.jsonl:3" {
				t.Errorf("warnings %+v, want %q at r.jsonl:3", ws, tc.warn)
			}
		})
	}
}

// TestBadTimes pins issue 27's zero time in Codex rollouts: a line
// timestamped 0001-01-01T00:00:00Z (Go's zero time) was read as no time in
// silence, one at the Unix epoch as a time 56 years before the next line.
// A timestamp no call has (traces.PlausibleTime) is timed as the previous
// line, warned at file:line naming the value.
func TestBadTimes(t *testing.T) {
	for _, ts := range []string{"0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "2100-01-01T00:00:00Z"} {
		in := `{"timestamp":"2025-08-01T10:00:00Z","type":"session_meta","payload":{"id":"s"}}
{"timestamp":"` + ts + `","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}}
{"timestamp":"2025-08-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":100,"output_tokens":5}}}}
`
		var w traces.Warnings
		s, err := Read(strings.NewReader(in), "r.jsonl", &w)
		require.NoError(t, err)
		prev := time.Date(2025, 8, 1, 10, 0, 0, 0, time.UTC)
		place := `r.jsonl:2 (timestamp "` + ts + `")`
		if ws := w.List(); len(s.Events) != 1 || !s.Events[0].Time.Equal(prev) || len(ws) != 1 || ws[0].Reason != WarnNoTimestamp || ws[0].First != place {
			t.Errorf("%s: events %+v, warnings %+v; want the call at %v, warned at %s", ts, s.Events, ws, prev, place)
		}
	}
}
