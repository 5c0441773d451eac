package assent

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
)

func open(t *testing.T, path string) []*traces.Session {
	t.Helper()
	ss, _, err := formats.Open(context.Background(), []string{path}, "capture", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func replay(t *testing.T, ss []*traces.Session, o Options) *Report {
	t.Helper()
	rep, err := Replay(context.Background(), ss, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Claude Code's compaction capture, replayed as sent, bills every call
// exactly: the main conversation, its summary requests (5m markers) and
// the sessions after the compaction, which read the system marker's
// entry (37,535 tokens) the first call of the file wrote.
func TestCompactCaptureExact(t *testing.T) {
	rep := replay(t, open(t, "testdata/trace_compact_claude.json"), Options{})
	if len(rep.Calls) != 10 {
		t.Fatalf("%d calls", len(rep.Calls))
	}
	for _, c := range rep.Calls {
		if !c.Exact() {
			t.Errorf("not exact: %s", c.String())
		}
	}
}

// Packet 8 (a summary request, 5m markers) marks the end of a message
// that packet 6's entry holds; the API read only packet 4's breakpoint
// (41,753) and wrote the 359 tokens to the marker again. With the
// prefixes inside a written entry cached (the engine's provider), the
// replay reads the whole message: evidence for BreakpointsOnly.
func TestCompactCaptureNoSubPrefixes(t *testing.T) {
	rep := replay(t, open(t, "testdata/trace_compact_claude.json"), Options{subPrefixes: true})
	bad := 0
	for _, c := range rep.Calls {
		if !c.Exact() {
			bad++
			if c.Recorded.CacheRead >= c.Replayed.CacheRead {
				t.Errorf("sub-prefixes should read more than the bill: %s", c.String())
			}
		}
	}
	if bad != 6 {
		t.Errorf("%d of %d calls not exact with sub-prefixes; docs/captures.md says 6", bad, len(rep.Calls))
	}
}

// Codex over the Responses API on GPT-5.5: the bills read the common
// prefix with the previous request rounded down to GPT-5.5's 512-token
// grid (512·k − 128, provider.CacheGrid), not the guide's 128 steps:
// 9,600 after a 10,032-token warm-up (128 steps: 9,984), 17,792 after a
// 17,952-token prompt (17,920). With the grid every call is exact; with
// the guide's steps 3 of the 6 read one to three steps more than billed.
func TestCodexCaptureGrid(t *testing.T) {
	rep := replay(t, open(t, "testdata/trace_codex.json"), Options{})
	for _, c := range rep.Calls {
		if !c.Exact() {
			t.Errorf("not exact: %s", c.String())
		}
		if r := c.Recorded.CacheRead; r > 0 && (r+128)%512 != 0 {
			t.Errorf("%s: a read off the 512-token grid", c.String())
		}
	}
	if len(rep.Calls) != 6 {
		t.Errorf("%d calls, want 6", len(rep.Calls))
	}
	for _, c := range []struct{ hit, want int }{{10032, 9600}, {17952, 17792}, {19860, 19840}, {1000, 0}, {1300, 0}, {1408, 1408}} {
		if got := onGridForTest(c.hit); got != c.want {
			t.Errorf("GPT-5.5 read of a %d-token prefix: %d, want %d", c.hit, got, c.want)
		}
	}
}

const sharedCaptures = "../../../shared/traces/captures"

// The measurement of issue 26 over every capture of the shared folder:
// Anthropic's calls bill exactly (total within ±0.5 %, call-weighted
// read match ≥ 99 %); OpenAI's on GPT-5.5's grid (TestCodexCaptureGrid) but
// the calls named below. Same numbers as `ctxsim fidelity --from capture
// ../shared/traces/captures` prints.
func TestSharedCaptures(t *testing.T) {
	if _, err := os.Stat(sharedCaptures); err != nil {
		t.Skipf("%s absent: the captures are in the shared folder", sharedCaptures)
	}
	rep := replay(t, open(t, sharedCaptures), Options{})
	an := rep.Summarize(func(c *Call) bool { return c.API == "anthropic" })
	if an.Calls != 28 || an.Exact != an.Calls || an.ErrorPct < -0.5 || an.ErrorPct > 0.5 || an.ReadMatchPct < 99 {
		t.Errorf("anthropic: %+v", an)
	}
	oa := rep.Summarize(func(c *Call) bool { return c.API == "openai-responses" })
	t.Logf("anthropic %+v\nopenai %+v", an, oa)
	// docs/captures.md: 31 of 38 exact, the 7 others named below.
	if oa.Calls != 38 || oa.Exact != 31 {
		t.Errorf("openai: %d of %d calls exact, want 31 of 38", oa.Exact, oa.Calls)
	}
	// The OpenAI calls that read far less than the common prefix, named:
	// no rule of the provider produces them yet.
	named := map[string]string{
		// The session continues a response outside the capture
		// (previous_response_id), then re-sends its items without it and
		// with an image_generation_call: its bills drop from 24,041 to
		// 22,766 tokens with more items, so the sizes the replay takes
		// from them do not hold, and the reads stop at 17,280 and 21,888.
		"trace_image_codex-1 8": "image", "trace_image_codex-1 10": "image", "trace_image_codex-1 12": "image",
		// Mid-session reads that fall back to the shared floor (4,992 or
		// 9,600): a request routed to a machine without the
		// conversation's prefix (DESIGN.md, Codex reads).
		"trace_subagent_codex-1 3": "floor", "trace_subagent_codex-2 3": "floor", "trace_compact_codex-4 3": "floor",
		// A second subagent's warm-up reads nothing where the replay
		// shares 3,456 tokens of the first one's.
		"trace_subagent_codex-2 0": "warm-up",
	}
	for _, c := range rep.Calls {
		if c.API != "openai-responses" || c.Exact() {
			continue
		}
		if _, ok := named[c.Session+" "+strconv.Itoa(c.Event)]; ok {
			t.Logf("named: %s", c.String())
			continue
		}
		t.Errorf("not exact and not named: %s", c.String())
	}
}

// onGridForTest is what the fake OpenAI provider reads of a hit on
// GPT-5.5 (a 1024-token minimum).
func onGridForTest(hit int) int {
	step, offset := provider.CacheGrid("gpt-5.5")
	c := (hit+offset)/step*step - offset
	if hit < 1024 || c < 1024 {
		return 0
	}
	return c
}
