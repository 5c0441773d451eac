package sim

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// flat is a provider that caches nothing and answers instantly after a fixed
// latency, so engine tests see only the engine.
type flat struct {
	latency time.Duration
	sent    []time.Time
	totals  []int
}

func (f *flat) Name() string { return "flat" }

func (f *flat) Send(now time.Time, req *prompt.Request) (provider.Response, error) {
	f.sent = append(f.sent, now)
	f.totals = append(f.totals, req.Total)
	return provider.Response{Usage: traces.Usage{Input: int64(req.Total), Output: int64(req.Output)}, TTFT: f.latency}, nil
}

func lenCount(b *traces.Block, h uint64) int {
	if h != b.Hash() {
		panic("lenCount given a wrong hash")
	}
	if b.Opaque() {
		return b.Tokens
	}
	return len(b.Text) + len(b.Input)
}

var t0 = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func txt(s string) []traces.Block { return []traces.Block{{Kind: traces.Text, Text: s}} }

func testOpts() Options {
	return Options{Prices: pricing.Default(), Count: lenCount}
}

// A slow call pushes the machine-paced events after it later, by the same
// amount, while the next human message keeps its recorded time.
func TestTimeModel(t *testing.T) {
	s := &traces.Session{ID: "s", Model: "claude-opus-4-6", Floor: []traces.Block{{Kind: traces.System, Text: "sys"}}, Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt("hello")},
		{Time: at(2), Kind: traces.Assistant, Blocks: []traces.Block{{Kind: traces.ToolUse, ID: "t1", Name: "Bash", Input: `{}`}}},
		{Time: at(5), Kind: traces.ToolResult, Blocks: []traces.Block{{Kind: traces.ToolResultBlock, ID: "t1", Text: "ok"}}},
		{Time: at(7), Kind: traces.Assistant, Blocks: txt("done")},
		{Time: at(600), Kind: traces.User, Blocks: txt("next")},
		{Time: at(601), Kind: traces.Assistant, Blocks: txt("fine")},
	}}
	p := &flat{latency: 10 * time.Second}
	res, err := Run(context.Background(), s, &Policy{Name: "none"}, p, testOpts())
	if err != nil {
		t.Fatal(err)
	}
	// call 1 at 0; returns at 10; the tool ran 3 s (2→5 recorded) so the
	// result lands at 13 and call 2 goes then; the user message at 600 keeps
	// its time.
	want := []time.Time{at(0), at(13), at(600)}
	if len(p.sent) != len(want) {
		t.Fatalf("sent %d calls, want %d", len(p.sent), len(want))
	}
	for i := range want {
		if !p.sent[i].Equal(want[i]) {
			t.Errorf("call %d sent at %v, want %v", i, p.sent[i].Sub(t0), want[i].Sub(t0))
		}
	}
	// prompts (tokens = bytes of text and input): sys+hello; + tool_use
	// input + result; + done + next
	wantTotals := []int{3 + 5, 3 + 5 + 2 + 2, 3 + 5 + 2 + 2 + 4 + 4}
	for i, w := range wantTotals {
		if p.totals[i] != w {
			t.Errorf("call %d prompt %d, want %d", i, p.totals[i], w)
		}
	}
	if len(res.Records) != 3 || res.Records[2].Turn != 2 {
		t.Errorf("records %+v", res.Records)
	}
	if res.VerbatimUsers != 1 {
		t.Errorf("verbatim users %v, want 1", res.VerbatimUsers)
	}
}

// A recorded session with no floor gets one from its first billed call, split
// into the part an earlier session had cached and the rest.
func TestInferFloor(t *testing.T) {
	s := &traces.Session{ID: "rec", Model: "claude-opus-4-6", Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt("0123456789")},
		{Time: at(1), Kind: traces.Assistant, Blocks: txt("x"), Usage: &traces.Usage{Input: 3, CacheWrite5m: 1007, CacheRead: 1000, Output: 1}},
	}}
	fl := inferFloor(s, testOpts(), prompt.NewBuilder(lenCount, prompt.Wire{}))
	if len(fl) != 2 || fl[0].Tokens != 1000 || fl[1].Tokens != 1000 {
		t.Fatalf("floor %+v, want shared 1000 + own 1000", fl)
	}
	p := &flat{}
	if _, err := Run(context.Background(), s, &Policy{Name: "none"}, p, testOpts()); err != nil {
		t.Fatal(err)
	}
	if p.totals[0] != 2010 {
		t.Errorf("first prompt %d, want the recorded 2010", p.totals[0])
	}
}

// A log that shows only part of its floor (Codex logs its instructions,
// never its tool schemas) gets the rest from its first billed call, before
// the part it shows; a complete floor is left alone.
func TestPartialFloor(t *testing.T) {
	mk := func(partial bool) *traces.Session {
		return &traces.Session{ID: "cx", Model: "claude-opus-4-6", FloorPartial: partial,
			Floor: []traces.Block{{Kind: traces.System, Text: strings.Repeat("i", 500)}},
			Events: []traces.Event{
				{Time: at(0), Kind: traces.User, Blocks: txt("0123456789")},
				{Time: at(1), Kind: traces.Assistant, Blocks: txt("x"), Usage: &traces.Usage{Input: 10, CacheWrite5m: 1500, CacheRead: 1000, Output: 1}},
			}}
	}
	p := &flat{}
	if _, err := Run(context.Background(), mk(true), &Policy{Name: "none"}, p, testOpts()); err != nil {
		t.Fatal(err)
	}
	if p.totals[0] != 2510 {
		t.Errorf("partial floor: first prompt %d, want the recorded 2510", p.totals[0])
	}
	q := &flat{}
	if _, err := Run(context.Background(), mk(false), &Policy{Name: "none"}, q, testOpts()); err != nil {
		t.Fatal(err)
	}
	if q.totals[0] != 510 {
		t.Errorf("complete floor: first prompt %d, want the 500 logged + 10 sent", q.totals[0])
	}
}

func TestFloorTooLarge(t *testing.T) {
	s := &traces.Session{ID: "big", Model: "claude-opus-4-6", Window: 100, Floor: []traces.Block{{Kind: traces.System, Name: "f", Tokens: 200}},
		Events: []traces.Event{{Time: at(0), Kind: traces.User, Blocks: txt("hi")}}}
	_, err := Run(context.Background(), s, &Policy{Name: "none"}, &flat{}, testOpts())
	if err == nil || !errorsIs(err, compact.ErrDoesNotFit) {
		t.Fatalf("err %v, want compact.ErrDoesNotFit", err)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// script fails the calls whose index is in fail with err, and bills the
// rest like flat.
type script struct {
	flat
	n    int
	fail map[int]error
}

func (s *script) Send(now time.Time, req *prompt.Request) (provider.Response, error) {
	i := s.n
	s.n++
	if err, ok := s.fail[i]; ok {
		return provider.Response{}, err
	}
	return s.flat.Send(now, req)
}

func transient() error {
	return &provider.APIError{Status: 529, Kind: provider.ErrTransient, Msg: "overloaded"}
}

// A transient error is retried after a backoff that doubles; the failed
// attempts are records with the error, the recorded usage goes with the call
// that went through.
func TestTransientRetry(t *testing.T) {
	s := &traces.Session{ID: "s", Model: "claude-opus-4-6", Floor: []traces.Block{{Kind: traces.System, Text: "sys"}}, Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt("hello")},
		{Time: at(1), Kind: traces.Assistant, Blocks: txt("hi"), Usage: &traces.Usage{Input: 10, Output: 2}},
	}}
	p := &script{fail: map[int]error{0: transient(), 1: transient()}}
	res, err := Run(context.Background(), s, &Policy{Name: "none"}, p, testOpts())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 3 {
		t.Fatalf("%d records, want 2 failed attempts and 1 call", len(res.Records))
	}
	for i, r := range res.Records[:2] {
		if r.Error == "" || r.Recorded != nil {
			t.Errorf("attempt %d: error %q, recorded %v; want an error and no recorded usage", i, r.Error, r.Recorded)
		}
	}
	if last := res.Records[2]; last.Error != "" || last.Recorded == nil {
		t.Errorf("the retry: error %q, recorded %v", last.Error, last.Recorded)
	}
	// backoffs 2 s then 4 s
	if got := p.sent[0].Sub(t0); got != 6*time.Second {
		t.Errorf("the call went through at +%v, want +6s", got)
	}
	// Four failures in a row give up after three retries.
	p = &script{fail: map[int]error{0: transient(), 1: transient(), 2: transient(), 3: transient()}}
	res, _ = Run(context.Background(), s, &Policy{Name: "none"}, p, testOpts())
	if len(res.Records) != 4 || res.Records[3].Error == "" {
		t.Errorf("after 4 failures: %d records, last error %q", len(res.Records), res.Records[len(res.Records)-1].Error)
	}
}

// shrinker is a context manager that drops the oldest message when the last
// call overflowed, counting how often it was asked.
type shrinker struct {
	overflowed bool
	before     int
}

func (c *shrinker) BeforeCall(_ context.Context, _ time.Time, v *prompt.View) (*prompt.View, []compact.Pass, error) {
	c.before++
	if !c.overflowed {
		return v, nil, nil
	}
	c.overflowed = false
	n := *v
	n.Messages = v.Messages[1:]
	return &n, []compact.Pass{{Kind: compact.KindBatch, Trigger: "overflow", Outcome: compact.OutcomeCompacted}}, nil
}
func (c *shrinker) AfterResponse(_ time.Time, _ *prompt.View, _ int, ok bool) []compact.Pass {
	c.overflowed = !ok
	return nil
}

// A context overflow gives the context manager one chance to compact, then
// the call is retried once.
func TestOverflowRetry(t *testing.T) {
	s := &traces.Session{ID: "s", Model: "claude-opus-4-6", Floor: []traces.Block{{Kind: traces.System, Text: "sys"}}, Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt("hello")},
		{Time: at(1), Kind: traces.Assistant, Blocks: txt("hi")},
	}}
	overflow := &provider.APIError{Status: 400, Kind: provider.ErrContextOverflow, Msg: "prompt is too long"}
	ctx := &shrinker{}
	pol := &Policy{Name: "shrink", NewCompactor: func(*traces.Session, compact.Model, compact.Summarizer) (Compactor, error) { return ctx, nil }}
	p := &script{fail: map[int]error{0: overflow}}
	res, err := Run(context.Background(), s, pol, p, testOpts())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range res.Records {
		kinds = append(kinds, string(r.Kind)+":"+r.Error)
	}
	want := []string{"call:" + overflow.Error(), "batch:", "call:"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("records %v, want %v", kinds, want)
	}
	if p.totals[0] != 3 {
		t.Errorf("the retry sent %d tokens, want the floor alone (3) after the compaction", p.totals[0])
	}
	// A second overflow is not retried again.
	ctx = &shrinker{}
	p = &script{fail: map[int]error{0: overflow, 1: overflow}}
	res, _ = Run(context.Background(), s, pol, p, testOpts())
	if n := len(res.Records); n != 3 || res.Records[n-1].Error == "" {
		t.Errorf("two overflows: %d records, want call, batch, call (failed)", n)
	}
}

// A credential rotation (a model_switch to another account) starts cold:
// the next call reads nothing the first account cached.
func TestAccountSwitchStartsCold(t *testing.T) {
	s := &traces.Session{ID: "s", Model: "claude-opus-4-6", Floor: []traces.Block{{Kind: traces.System, Name: "floor", Tokens: 5000}}, Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt("hello")},
		{Time: at(1), Kind: traces.Assistant, Blocks: txt("hi")},
		{Time: at(10), Kind: traces.User, Blocks: txt("again")},
		{Time: at(11), Kind: traces.Assistant, Blocks: txt("sure")},
		{Time: at(20), Kind: traces.ModelSwitch, Meta: map[string]string{"account": "b"}},
		{Time: at(21), Kind: traces.User, Blocks: txt("and again")},
		{Time: at(22), Kind: traces.Assistant, Blocks: txt("ok")},
	}}
	pol := &Policy{Name: "cc", Planner: markLastPlanner{}, TTL: func(*traces.Session) prompt.TTL { return prompt.TTL5m }}
	accounts := map[string]provider.Provider{}
	opts := testOpts()
	opts.Account = func(a string) provider.Provider {
		if accounts[a] == nil {
			accounts[a] = provider.NewAnthropic(provider.AnthropicOptions{})
		}
		return accounts[a]
	}
	res, err := Run(context.Background(), s, pol, provider.NewAnthropic(provider.AnthropicOptions{}), opts)
	require.NoError(t, err)
	reads := []int64{}
	for _, r := range res.Records {
		reads = append(reads, r.Usage.CacheRead)
	}
	if len(reads) != 3 || reads[1] == 0 || reads[2] != 0 {
		t.Errorf("cache reads %v: want the second call to read and the call after the switch to read nothing", reads)
	}
}

// markLastPlanner marks the last block.
type markLastPlanner struct{}

func (markLastPlanner) Name() string                             { return "mark-last" }
func (markLastPlanner) Plan(req *prompt.Request, ttl prompt.TTL) { req.Mark(len(req.Blocks)-1, ttl) }

// summarizing is a context manager whose every pass before a call makes a
// summarizer call of 1,000 input and 200 output tokens.
type summarizing struct{ shrinker }

func (c *summarizing) BeforeCall(_ context.Context, _ time.Time, v *prompt.View) (*prompt.View, []compact.Pass, error) {
	return v, []compact.Pass{{Kind: compact.KindBatch, Outcome: compact.OutcomeCompacted,
		Summary: &compact.SummaryOutput{Usage: traces.Usage{Input: 1000, Output: 200}, Latency: 3 * time.Second}}}, nil
}

// A summarizer call is billed: at the auxiliary model's price when one is
// set, else at the main model's (hermes' default), and it stalls the call.
func TestSummarizerIsBilled(t *testing.T) {
	s := &traces.Session{ID: "s", Model: "claude-opus-4-6", Floor: []traces.Block{{Kind: traces.System, Text: "sys"}}, Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt("hello")},
		{Time: at(1), Kind: traces.Assistant, Blocks: txt("hi")},
	}}
	pol := &Policy{Name: "sum", NewCompactor: func(*traces.Session, compact.Model, compact.Summarizer) (Compactor, error) {
		return &summarizing{}, nil
	}}
	for _, tc := range []struct {
		aux  string
		want float64 // $ for 1,000 in + 200 out
	}{
		{"", (1000*5 + 200*25) / 1e6},                // opus 4.6, the main model
		{"claude-haiku-4-5", (1000*1 + 200*5) / 1e6}, // haiku 4.5
	} {
		opts := testOpts()
		opts.SummarizerModel = tc.aux
		p := &flat{}
		res, err := Run(context.Background(), s, pol, p, opts)
		require.NoError(t, err)
		pass := res.Records[0]
		if pass.Kind != KindBatch || math.Abs(pass.CostUSD-tc.want) > 1e-9 {
			t.Errorf("aux %q: pass %s cost $%v, want $%v", tc.aux, pass.Kind, pass.CostUSD, tc.want)
		}
		if got := p.sent[0].Sub(t0); got != 3*time.Second {
			t.Errorf("aux %q: the call went at +%v, want after the 3 s summary", tc.aux, got)
		}
	}
	opts := testOpts()
	opts.SummarizerModel = "no-such-model"
	if _, err := Run(context.Background(), s, pol, &flat{}, opts); err == nil {
		t.Error("an unpriced summarizer model ran")
	}
}

// A forked summary (Claude Code's compaction) reads the conversation from
// the session's cache and pays only for the instruction and the output; a
// fresh one (hermes' auxiliary call) pays for the whole transcript.
func TestForkedSummaryReadsTheCache(t *testing.T) {
	big := strings.Repeat("x", 20000)
	s := &traces.Session{ID: "s", Model: "claude-opus-4-6", Floor: []traces.Block{{Kind: traces.System, Text: "sys"}}, Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt(big)},
		{Time: at(1), Kind: traces.Assistant, Blocks: txt("read it")},
		{Time: at(10), Kind: traces.User, Blocks: txt("now summarize")},
		{Time: at(11), Kind: traces.Assistant, Blocks: txt("ok")},
	}}
	passUsage := func(fork bool) traces.Usage {
		ctx := &summarizeOnce{}
		pol := &Policy{Name: "p", Planner: markLastPlanner{}, TTL: func(*traces.Session) prompt.TTL { return prompt.TTL5m }, ForkSummary: fork,
			// The engine hands the context its summarizer, forked or not.
			NewCompactor: func(_ *traces.Session, _ compact.Model, sum compact.Summarizer) (Compactor, error) {
				ctx.sum = sum
				return ctx, nil
			}}
		opts := testOpts()
		opts.Summarizer = func(*traces.Session) compact.Summarizer { return fixedSummary{} }
		prov := provider.NewAnthropic(provider.AnthropicOptions{})
		res, err := Run(context.Background(), s, pol, prov, opts)
		require.NoError(t, err)
		for _, r := range res.Records {
			if r.Kind == KindBatch {
				return r.Usage
			}
		}
		t.Fatal("no summary pass")
		return traces.Usage{}
	}
	fresh, forked := passUsage(false), passUsage(true)
	if fresh.CacheRead != 0 || fresh.Input < 20000 {
		t.Errorf("fresh summary usage %+v: want the whole transcript uncached", fresh)
	}
	if forked.CacheRead < 20000 || forked.Input+forked.Writes() > 3000 {
		t.Errorf("forked summary usage %+v: want the 20K-token conversation read, little else", forked)
	}
	if forked.Output != fresh.Output {
		t.Errorf("outputs differ: %d vs %d", forked.Output, fresh.Output)
	}
}

// summarizeOnce asks its summarizer once, before the second call.
type summarizeOnce struct {
	shrinker
	sum   compact.Summarizer
	calls int
}

func (c *summarizeOnce) BeforeCall(ctx context.Context, now time.Time, v *prompt.View) (*prompt.View, []compact.Pass, error) {
	c.calls++
	if c.calls != 2 {
		return v, nil, nil
	}
	out, err := c.sum.Summarize(ctx, now, compact.SummaryInput{Kind: compact.KindBatch, Transcript: strings.Repeat("x", 20000), TargetTokens: 500})
	if err != nil {
		return v, nil, err
	}
	return v, []compact.Pass{{Kind: compact.KindBatch, Outcome: compact.OutcomeCompacted, Summary: &out}}, nil
}

// fixedSummary bills a fresh summary call: the transcript in, 500 out.
type fixedSummary struct{}

func (fixedSummary) Summarize(_ context.Context, _ time.Time, in compact.SummaryInput) (compact.SummaryOutput, error) {
	return compact.SummaryOutput{Text: "summary", Usage: traces.Usage{Input: int64(len(in.Transcript)), Output: 500}, Latency: time.Second}, nil
}

// forkSpoiler misbehaves on forked summary requests only: it changes the
// frozen request, or rejects it as too long.
type forkSpoiler struct {
	provider.Provider
	mutate bool
}

func (f *forkSpoiler) Send(now time.Time, req *prompt.Request) (provider.Response, error) {
	if strings.HasSuffix(req.Key, "/compaction") {
		if f.mutate {
			resp, err := f.Provider.Send(now, req)
			req.Output++ // a provider must not touch a frozen request
			return resp, err
		}
		return provider.Response{}, &provider.APIError{Status: 400, Kind: provider.ErrContextOverflow, Msg: "prompt is too long"}
	}
	return f.Provider.Send(now, req)
}

// The forked summary is a request the engine sends and checks like any
// call: a request changed after freezing stops the run (it used to be
// swallowed), and a rejected fork bills the summary as a fresh call.
func TestForkedSummaryChecked(t *testing.T) {
	s := &traces.Session{ID: "s", Model: "claude-opus-4-6", Floor: []traces.Block{{Kind: traces.System, Text: "sys"}}, Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: txt(strings.Repeat("x", 20000))},
		{Time: at(1), Kind: traces.Assistant, Blocks: txt("read it")},
		{Time: at(10), Kind: traces.User, Blocks: txt("now summarize")},
		{Time: at(11), Kind: traces.Assistant, Blocks: txt("ok")},
	}}
	run := func(mutate bool) (*Result, error) {
		c := &summarizeOnce{}
		pol := &Policy{Name: "p", Planner: markLastPlanner{}, TTL: func(*traces.Session) prompt.TTL { return prompt.TTL5m }, ForkSummary: true,
			NewCompactor: func(_ *traces.Session, _ compact.Model, sum compact.Summarizer) (Compactor, error) {
				c.sum = sum
				return c, nil
			}}
		opts := testOpts()
		opts.Summarizer = func(*traces.Session) compact.Summarizer { return fixedSummary{} }
		return Run(context.Background(), s, pol, &forkSpoiler{Provider: provider.NewAnthropic(provider.AnthropicOptions{}), mutate: mutate}, opts)
	}
	if _, err := run(true); !errors.Is(err, prompt.ErrChanged) || !strings.Contains(err.Error(), "session s: forked summary") {
		t.Errorf("a fork request changed after freezing: err = %v, want prompt.ErrChanged naming the forked summary", err)
	}
	res, err := run(false)
	require.NoError(t, err)
	var pass *Record
	for i := range res.Records {
		if res.Records[i].Kind == KindBatch {
			pass = &res.Records[i]
		}
	}
	require.NotNil(t, pass)
	if pass.Usage != (traces.Usage{Input: 20000, Output: 500}) || pass.LatencyMS != 1000 {
		t.Errorf("rejected fork billed %+v in %d ms, want the inner summarizer's 20000 in, 500 out, 1000 ms", pass.Usage, pass.LatencyMS)
	}
}
