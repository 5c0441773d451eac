package results

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// A FidelitySession is one recorded session's replay against its bill,
// under the default recorded replay (which never reads the billed usage of
// the call it predicts) and under recorded-observed (which also honours
// the re-sends and reads past the TTL the log shows). Both sides are
// summed over the calls the log billed (see billedCost).
type FidelitySession struct {
	Trace       string  `json:"trace"`
	Calls       int     `json:"calls"`
	RecordedUSD float64 `json:"recorded_usd"`
	ReplayUSD   float64 `json:"replay_usd"`
	ErrorPct    float64 `json:"error_pct"`
	// ObservedUSD and ObservedErrorPct are the recorded-observed replay's.
	ObservedUSD      float64 `json:"observed_usd"`
	ObservedErrorPct float64 `json:"observed_error_pct"`
	ReadMatchPct     float64 `json:"read_match_pct"`
	// OpenLoopMdAPE is the open-loop prompt error's median (NaN-free: 0
	// with no open-loop calls; see OpenLoopCalls).
	OpenLoopMdAPE float64 `json:"open_loop_prompt_mdape_pct"`
	OpenLoopCalls int     `json:"open_loop_calls"`
	// Unbilled counts the calls the recorded replay could not send
	// (overflowed the window or failed): in the bill, not in the replay.
	Unbilled int `json:"unbilled_calls,omitempty"`
	// Cause is what the error is attributed to (see FidelityCause).
	Cause string `json:"cause"`
	// ObservedEvents is how many of the session's calls the observed
	// replay followed the bill on (re-sends and reads past the TTL).
	ObservedEvents int `json:"observed_events"`
	// Format is the log format the session came from (traces.Session's),
	// Harness the program and version that wrote it, Model its main model.
	Format  string `json:"format,omitempty"`
	Harness string `json:"harness,omitempty"`
	Model   string `json:"model,omitempty"`
	// Thinking is what the session's bills chose of the hypotheses its
	// harness version leaves open (Fidelity.Thinking).
	Thinking string `json:"thinking,omitempty"`
	// SharedFloor is what its bills chose of the account keeping its
	// shared floor warm (Fidelity.SharedFloor).
	SharedFloor string `json:"shared_floor,omitempty"`
	// ThinkingMissUSD is what the replay paid for prefixes broken where
	// the API dropped earlier thinking (the "thinking" misses).
	ThinkingMissUSD float64 `json:"thinking_miss_usd,omitempty"`
}

// A FidelityGroup is the error distribution of the sessions of one log
// format, one harness version range or one model: where the replay is
// weaker. The rules differ by format (Claude Code's and Codex's caches and
// logs) and by version (what a harness sends changed between releases).
type FidelityGroup struct {
	// By is what the sessions share: "format", "version" or "model".
	By       string        `json:"by"`
	Name     string        `json:"name"`
	Sessions int           `json:"sessions"`
	Recorded FidelityStats `json:"recorded"`
	Observed FidelityStats `json:"observed"`
}

// A FidelityStats is the distribution of one replay's errors over sessions.
type FidelityStats struct {
	RecordedUSD float64 `json:"recorded_usd"`
	ReplayUSD   float64 `json:"replay_usd"`
	// TotalErrorPct is the error of the summed bill.
	TotalErrorPct float64 `json:"total_error_pct"`
	MedianAbsPct  float64 `json:"median_abs_error_pct"`
	P90AbsPct     float64 `json:"p90_abs_error_pct"`
	// DollarWeightedPct is Σ|replay − recorded| ÷ Σ recorded.
	DollarWeightedPct float64 `json:"dollar_weighted_abs_error_pct"`
	Within2Pct        float64 `json:"within_2pct_share"`
	Within5Pct        float64 `json:"within_5pct_share"`
}

// A FidelityReport is what `ctxsim fidelity` prints: the distribution a
// user needs before trusting a what-if on their own logs.
type FidelityReport struct {
	Sessions []FidelitySession `json:"sessions"`
	// Recorded is the default replay's distribution, Observed the
	// recorded-observed replay's.
	Recorded FidelityStats `json:"recorded"`
	Observed FidelityStats `json:"observed"`
	// ReadMatchPct is the call-weighted share of calls whose simulated
	// cache read matched the bill (default replay).
	ReadMatchPct float64 `json:"read_match_pct"`
	// OpenLoopMdAPE is the median over sessions of the open-loop prompt
	// error's per-session median.
	OpenLoopMdAPE float64 `json:"open_loop_prompt_mdape_pct"`
	// Skipped names the sessions that could not be replayed, and why.
	Skipped []string `json:"skipped"`
	// Warnings are the input's, as stderr lists them (a file none of whose
	// lines could be read among them); omitted when there are none.
	Warnings []traces.Warning `json:"warnings,omitempty"`
	// ObservedResends and ObservedKept are the calls, over all sessions,
	// whose bill the observed replay followed (a re-send, a read past the
	// TTL), of ObservedCalls billed calls.
	ObservedResends int `json:"observed_resends"`
	ObservedKept    int `json:"observed_kept"`
	ObservedCalls   int `json:"observed_calls"`
	// Groups are the distributions per log format, per harness version
	// range and per model (each kind only when the sessions span more than
	// one), in that order, each kind by name.
	Groups []FidelityGroup `json:"groups,omitempty"`
	// AsSent is the as-sent replay of the captured sessions (format
	// capture), per API: their own line, since a capture's requests are
	// known, not reconstructed.
	AsSent []AsSentGroup `json:"as_sent,omitempty"`
}

// Group kinds of FidelityGroup.By.
const (
	ByFormat  = "format"
	ByVersion = "version"
	ByModel   = "model"
)

// setGroups gives each log format, version range and model its own
// distribution, for every kind the sessions span more than one of.
func (rep *FidelityReport) setGroups() {
	for _, kind := range []struct {
		by  string
		key func(FidelitySession) string
	}{
		{ByFormat, func(s FidelitySession) string { return s.Format }},
		{ByVersion, func(s FidelitySession) string { return VersionRange(s.Harness) }},
		{ByModel, func(s FidelitySession) string { return s.Model }},
	} {
		by := map[string][]FidelitySession{}
		for _, s := range rep.Sessions {
			by[kind.key(s)] = append(by[kind.key(s)], s)
		}
		if len(by) < 2 {
			continue
		}
		var gs []FidelityGroup
		for name, ss := range by {
			if name == "" {
				name = "unknown"
			}
			gs = append(gs, FidelityGroup{By: kind.by, Name: name, Sessions: len(ss),
				Recorded: fidelityStats(ss, func(s FidelitySession) float64 { return s.ReplayUSD }),
				Observed: fidelityStats(ss, func(s FidelitySession) float64 { return s.ObservedUSD })})
		}
		slices.SortFunc(gs, func(a, b FidelityGroup) int { return compareNames(a.Name, b.Name) })
		rep.Groups = append(rep.Groups, gs...)
	}
}

// VersionRange is the release series of a harness version ("claude-code
// 1.0.89" is "claude-code 1.0.x"): the rows a fidelity report groups
// sessions by. A harness without a version is itself.
func VersionRange(harness string) string {
	name, v, ok := strings.Cut(harness, " ")
	if !ok {
		return harness
	}
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return harness
	}
	return name + " " + parts[0] + "." + parts[1] + ".x"
}

// compareNames orders names with their numbers compared as numbers
// ("claude-code 2.0.x" before "claude-code 10.0.x").
func compareNames(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return cmp.Compare(na, nb)
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Fidelity causes, from the two replays of a session.
const (
	CauseNone     = "within 2%"
	CauseResends  = "re-sends or reads past the TTL the log does not explain"
	CauseSizing   = "prompt sizing (open-loop error over 5%)"
	CauseThinking = "earlier thinking dropped in the replay, kept in the bill (the harness keeps it behind a flag)"
	CauseCacheHit = "cache reads differ (timing, breakpoints or unseen context)"
	CauseUnbilled = "calls the replay could not send (overflowed the window or failed): in the bill, not the replay"
)

// FidelityCause attributes a session's error: to the observed events
// (re-sends, reads past the TTL) when honouring them halves it; to earlier
// thinking the replay dropped when its misses there make half the
// over-prediction; to sizing when the open-loop prompt error is large;
// else to the cache reads.
func FidelityCause(s FidelitySession) string {
	switch {
	case s.Unbilled > 0:
		return CauseUnbilled
	case math.Abs(s.ErrorPct) <= 2:
		return CauseNone
	case math.Abs(s.ObservedErrorPct) <= math.Abs(s.ErrorPct)/2:
		return CauseResends
	case s.ErrorPct > 0 && s.ThinkingMissUSD >= (s.ReplayUSD-s.RecordedUSD)/2:
		return CauseThinking
	case s.OpenLoopMdAPE > 5:
		return CauseSizing
	}
	return CauseCacheHit
}

// NewFidelityReport pairs the default and the observed recorded replays'
// runs by trace (runs without a recorded bill are left out) and computes
// the distributions. Sessions come back worst first.
func NewFidelityReport(recorded, observed []RunSummary) FidelityReport {
	obs := map[string]RunSummary{}
	for _, r := range observed {
		obs[r.Trace] = r
	}
	var rep FidelityReport
	var calls int
	var matched, opens []float64
	for _, r := range recorded {
		if r.Recorded == nil || r.Recorded.CostUSD <= 0 {
			continue
		}
		s := FidelitySession{Trace: r.Trace, RecordedUSD: r.Recorded.CostUSD, ReplayUSD: billedCost(r),
			ErrorPct: pctErr(billedCost(r), r.Recorded.CostUSD), Unbilled: r.OverflowErrors + r.FailedRequests}
		for _, m := range r.Misses {
			if m.Reason == provider.MissThinking {
				s.ThinkingMissUSD = m.CostUSD
			}
		}
		if f := r.Fidelity; f != nil {
			s.Calls, s.ReadMatchPct, s.OpenLoopMdAPE, s.OpenLoopCalls = f.Calls, f.ReadMatchPct, f.OpenLoopMdAPE, f.OpenLoopCalls
			s.Format, s.Harness, s.Model, s.Thinking, s.SharedFloor = f.Format, f.Harness, f.Model, f.Thinking, f.SharedFloor
			calls += f.Calls
			matched = append(matched, f.ReadMatchPct*float64(f.Calls))
			if f.OpenLoopCalls > 0 {
				opens = append(opens, f.OpenLoopMdAPE)
			}
		}
		s.ObservedUSD, s.ObservedErrorPct = s.ReplayUSD, s.ErrorPct
		if o, ok := obs[r.Trace]; ok {
			s.ObservedUSD, s.ObservedErrorPct = billedCost(o), pctErr(billedCost(o), r.Recorded.CostUSD)
			if f := o.Fidelity; f != nil {
				s.ObservedEvents = f.ObservedResends + f.ObservedKept
				rep.ObservedResends += f.ObservedResends
				rep.ObservedKept += f.ObservedKept
				rep.ObservedCalls += f.Calls
			}
		}
		s.Cause = FidelityCause(s)
		rep.Sessions = append(rep.Sessions, s)
	}
	slices.SortStableFunc(rep.Sessions, func(a, b FidelitySession) int {
		return cmp.Or(cmp.Compare(math.Abs(b.ErrorPct), math.Abs(a.ErrorPct)), cmp.Compare(a.Trace, b.Trace))
	})
	rep.Recorded = fidelityStats(rep.Sessions, func(s FidelitySession) float64 { return s.ReplayUSD })
	rep.Observed = fidelityStats(rep.Sessions, func(s FidelitySession) float64 { return s.ObservedUSD })
	rep.setGroups()
	if calls > 0 {
		var sum float64
		for _, m := range matched {
			sum += m
		}
		rep.ReadMatchPct = sum / float64(calls)
	}
	if len(opens) > 0 {
		slices.Sort(opens)
		rep.OpenLoopMdAPE = quantile(opens, 0.5)
	}
	return rep
}

// billedCost is a run's simulated cost over the calls its log billed: a
// call the log shows without usage has no bill to compare with (Codex
// rollouts with a missing token_count), so it is left out of both sides.
func billedCost(r RunSummary) float64 {
	if r.Error != nil {
		return r.Error.ReplayCostUSD
	}
	return r.CostUSD
}

func fidelityStats(ss []FidelitySession, replay func(FidelitySession) float64) FidelityStats {
	var st FidelityStats
	if len(ss) == 0 {
		return st
	}
	abs := make([]float64, len(ss))
	var dev float64
	var in2, in5 int
	for i, s := range ss {
		st.RecordedUSD += s.RecordedUSD
		st.ReplayUSD += replay(s)
		dev += math.Abs(replay(s) - s.RecordedUSD)
		abs[i] = math.Abs(pctErr(replay(s), s.RecordedUSD))
		if abs[i] <= 2 {
			in2++
		}
		if abs[i] <= 5 {
			in5++
		}
	}
	slices.Sort(abs)
	st.TotalErrorPct = pctErr(st.ReplayUSD, st.RecordedUSD)
	st.MedianAbsPct = quantile(abs, 0.5)
	st.P90AbsPct = quantile(abs, 0.9)
	st.DollarWeightedPct = 100 * dev / st.RecordedUSD
	st.Within2Pct = float64(in2) / float64(len(ss))
	st.Within5Pct = float64(in5) / float64(len(ss))
	return st
}
