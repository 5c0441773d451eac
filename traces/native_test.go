package traces_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

// TestImportedRoundTrip: an imported session written, read and written
// again gives the same bytes.
func TestImportedRoundTrip(t *testing.T) {
	ss, _, err := claudecode.Import(context.Background(), "../testdata/claude-code")
	require.NoError(t, err)
	for _, s := range ss {
		tracetest.RoundTrip(t, s)
	}
}

func TestReaderErrors(t *testing.T) {
	hdr := `{"format":"ctxsim-trace","version":1,"session":{"id":"s"}}`
	ev := `{"t":"2026-01-01T00:00:00Z","kind":"user","blocks":[{"type":"text","text":"hi"}]}`
	cases := []struct{ in, want string }{
		{"", "f:1: empty file"},
		{`{"format":"other","version":1,"session":{"id":"s"}}`, `f:1: header: format "other"`},
		{`{"format":"ctxsim-trace","version":9,"session":{"id":"s"}}`, "f:1: header: version 9 not supported"},
		{hdr + "\n" + ev + "\n{bad", "f:3: event:"},
		{hdr + "\n" + `{"t":"2026-01-01T00:00:00Z","kind":"dance"}`, `f:2: event: unknown kind "dance"`},
		{hdr + "\n" + `{"kind":"user"}`, "f:2: event: missing time"},
		// Found by FuzzNativeReader: year 0 at +01:00 is year -1 in UTC,
		// which no RFC 3339 writer can write back.
		{hdr + "\n" + `{"t":"0000-01-01T00:00:00+01:00","kind":"user"}`, "f:2: event: time 0000-01-01T00:00:00+01:00 is outside the years 0001–9999"},
		{hdr + "\n" + `{"t":"2026-01-01T00:00:00Z","kind":"user","extra":1}`, `f:2: event: json: unknown field "extra"`},
		{hdr + "\n\xff", "f:2: event: invalid UTF-8"},
		// Issue 10: counts that wrapped totals negative.
		{hdr + "\n" + `{"t":"2026-01-01T00:00:00Z","kind":"assistant","usage":{"input":999999999999999999}}`, "f:2: event: usage input 999999999999999999 is over 10^9"},
		{hdr + "\n" + `{"t":"2026-01-01T00:00:00Z","kind":"assistant","usage":{"output":1e30}}`, "f:2: event: json: cannot unmarshal"},
		{hdr + "\n" + `{"t":"2026-01-01T00:00:00Z","kind":"assistant","latency_ms":9000000000000000000}`, "f:2: event: latency_ms 9000000000000000000 is over a day"},
	}
	for _, c := range cases {
		_, err := traces.ReadSession(strings.NewReader(c.in), "f")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ReadSession(%.40q) error = %v, want prefix %q", c.in, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	in := `{"format":"ctxsim-trace","version":1,"session":{"id":"s","children":["s"]}}
{"t":"2026-01-01T00:00:05Z","kind":"user","blocks":[{"type":"text","text":"hi"}]}
{"t":"2026-01-01T00:00:01Z","kind":"assistant","blocks":[{"type":"tool_use","id":"a","name":"Read"}],"usage":{"input":0,"cache_write_5m":0,"cache_write_1h":0,"cache_read":0,"output":3}}
{"t":"2026-01-01T00:00:06Z","kind":"tool_result","blocks":[{"type":"tool_result","id":"b"}],"usage":{"input":1,"cache_write_5m":0,"cache_write_1h":0,"cache_read":0,"output":0}}
`
	s, err := traces.ReadSession(strings.NewReader(in), "f")
	require.NoError(t, err)
	var got []string
	for _, p := range traces.Validate(s) {
		got = append(got, p.Msg+" @"+string(rune('0'+p.Line())))
	}
	want := []string{
		`child "s" is empty or the session itself @1`,
		"time 2026-01-01T00:00:01.000Z is before the previous event's 2026-01-01T00:00:05.000Z @3",
		"usage has an empty prompt (input, writes and reads all 0) @3",
		"tool_result event carries usage (only assistant calls are billed) @4",
		"block 0: tool_result for b has no earlier tool_use @4",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Validate =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
