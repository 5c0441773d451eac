package sim

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// observedSession is a recorded session whose bill shows both observed
// events: call 2 reads its whole prefix after 10 idle minutes on the 5m
// tier (something the log does not show kept it alive), and call 3 reads
// only the 5,000-token floor a minute later (a re-send the transcript does
// not explain). One token per byte (bytesTok).
func observedSession() *traces.Session {
	u := func(read, write int64) *traces.Usage {
		return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
	}
	msg := func(c byte) []traces.Block { return txt(strings.Repeat(string(c), 2000)) }
	// Prompts: call 1 = 5,000 floor + 2,000 + framing; later calls add a
	// 2,000-byte answer and a 2,000-byte message each.
	return &traces.Session{ID: "obs", Model: "claude-opus-4-6", Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: msg('a')},
		{Time: at(5), Kind: traces.Assistant, Blocks: msg('b'), Usage: u(0, 7009)},
		{Time: at(600), Kind: traces.User, Blocks: msg('c')},
		{Time: at(605), Kind: traces.Assistant, Blocks: msg('d'), Usage: u(7009, 4008)},
		{Time: at(660), Kind: traces.User, Blocks: msg('e')},
		{Time: at(665), Kind: traces.Assistant, Blocks: msg('f'), Usage: u(5000, 10025)},
	}}
}

// The observing replay does what the bill shows (reads past the TTL, and
// re-sends to the floor) and a frozen counterfactual of it replays both at
// the same places; the plain recorded replay predicts neither.
func TestObservedReads(t *testing.T) {
	memo := estimate.NewMemo(bytesTok{})
	s := observedSession()
	var details []string
	reads := func(pol *Policy, cal func(*traces.Session) *Calibrator) []int64 {
		t.Helper()
		details = details[:0]
		prov := provider.NewAnthropic(provider.AnthropicOptions{Common: provider.Common{Prices: testOpts().Prices}})
		opts := Options{Prices: testOpts().Prices, Count: memo.CountHash, Calibrate: cal}
		res, err := Run(context.Background(), s, pol, prov, opts)
		require.NoError(t, err)
		var out []int64
		for _, r := range res.Records {
			if r.Kind == KindCall {
				out = append(out, r.Usage.CacheRead)
				d := ""
				for _, kv := range r.Detail {
					if kv.Key == string(DetailObservedResend) || kv.Key == string(DetailObservedKept) {
						d += kv.Key
					}
				}
				details = append(details, d)
			}
		}
		return out
	}
	plain := reads(NewRecorded(), func(s *traces.Session) *Calibrator { return NewCalibrator(s, memo) })
	require.Len(t, plain, 3)
	if plain[1] != 0 {
		t.Errorf("recorded replay, call 2 after 10 idle minutes read %d, want 0 (expired)", plain[1])
	}
	if plain[2] < 10000 {
		t.Errorf("recorded replay, call 3 read %d, want the whole previous prompt (it cannot know of the re-send)", plain[2])
	}
	var anchored *Calibrator
	obs := reads(NewRecordedObserved(), func(s *traces.Session) *Calibrator {
		anchored = NewCalibrator(s, memo).ObserveResends()
		return anchored
	})
	if obs[1] < 6900 || obs[1] > 7100 {
		t.Errorf("observing replay, call 2 read %d, want about the billed 7,009 (kept alive)", obs[1])
	}
	// The floor is the first bill less the transcript as the calibration
	// prior sizes it: within a few percent of the 5,000 the bill reads.
	if obs[2] < 4700 || obs[2] > 5100 {
		t.Errorf("observing replay, call 3 read %d, want about the billed 5,000 (the floor)", obs[2])
	}
	if want := []string{"", string(DetailObservedKept), string(DetailObservedResend)}; !slices.Equal(details, want) {
		t.Errorf("call details %q, want %q: each followed bill is marked", details, want)
	}
	if n := anchored.Resends(); n != 1 {
		t.Errorf("%d re-sends recorded, want 1", n)
	}
	frozen := reads(NewRecordedObserved(), func(*traces.Session) *Calibrator { return anchored.Freeze() })
	for i := range obs {
		if frozen[i] != obs[i] {
			t.Errorf("frozen call %d read %d, anchored %d", i+1, frozen[i], obs[i])
		}
	}
}

// A rewind (traces.MetaRewindTo) takes the abandoned message off the
// conversation, and the read after it lands on the boundary before it,
// inside the entry the abandoned call wrote (a sub-prefix no breakpoint
// marked). Fixture: a trimmed real Claude Code 1.0.72 log.
func TestRewindReplay(t *testing.T) {
	ss, _, err := claudecode.Import(context.Background(), "../traces/claudecode/testdata/rewind/aa57d486.jsonl")
	require.NoError(t, err)
	s := ss[0]
	tok, err := tiktoken.Get("o200k_base")
	require.NoError(t, err)
	calls := recordedCalls(t, s, tok, false)
	require.Len(t, calls, 4)
	abandoned, after := calls[2], calls[3]
	require.Equal(t, int64(85196), abandoned.Recorded.CacheWrite5m)
	t.Logf("after the rewind: prompt %d (billed %d), read %d (billed %d)", after.Prompt, after.Recorded.Prompt(), after.Usage.CacheRead, after.Recorded.CacheRead)
	// Carrying the abandoned message (~370 tokens) would put the prompt
	// that much above the abandoned call's, and the read at that call's
	// whole entry.
	if after.Prompt >= abandoned.Prompt+200 || after.Prompt < int(after.Recorded.Prompt())-250 {
		t.Errorf("prompt after the rewind %d (abandoned call %d, billed %d): the abandoned message must be off the path", after.Prompt, abandoned.Prompt, after.Recorded.Prompt())
	}
	if after.Usage.CacheRead >= int64(abandoned.Prompt)-200 || after.Usage.CacheRead < after.Recorded.CacheRead-250 {
		t.Errorf("read after the rewind %d, billed %d: want the prefix before the abandoned message", after.Usage.CacheRead, after.Recorded.CacheRead)
	}
}

// A resumed file's copied history (traces/claudecode testdata/resume: 17
// calls copied before the first own call) is in the first own call's
// prompt: the floor inferred from that call's bill counts it as
// transcript, so the replay's first call is billed at the recorded size
// (it was sized as if nothing came before the copies: 20,506 against 83,157
// on an unseen set, issue 22 item 5).
func TestResumedFloor(t *testing.T) {
	ss, _, err := claudecode.Import(context.Background(), "../traces/claudecode/testdata/resume/77570c3a.jsonl")
	require.NoError(t, err)
	var s *traces.Session
	for _, x := range ss {
		if x.Parent == "" {
			s = x
		}
	}
	tok, err := tiktoken.Get("o200k_base")
	require.NoError(t, err)
	memo := estimate.NewMemo(tok)
	prov := provider.NewAnthropic(provider.AnthropicOptions{Common: provider.Common{Prices: testOpts().Prices}})
	opts := Options{Prices: testOpts().Prices, Count: memo.CountHash, Prewarm: true,
		Calibrate: func(s *traces.Session) *Calibrator { return NewCalibrator(s, memo) }}
	res, err := Run(context.Background(), s, NewRecorded(), prov, opts)
	require.NoError(t, err)
	var first *Record
	for i := range res.Records {
		if r := &res.Records[i]; r.Kind == KindCall && r.Recorded != nil {
			first = r
			break
		}
	}
	require.NotNil(t, first)
	require.InDelta(t, first.Recorded.Prompt(), first.Usage.Prompt(), 0.01*float64(first.Recorded.Prompt()))
	require.Equal(t, first.Recorded.CacheRead, first.Usage.CacheRead, "the shared floor another session wrote")
}
