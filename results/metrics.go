package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// Fidelity is how closely a replay of a recorded session reproduces what
// was billed: present on the recorded policy's runs. See docs/metrics.md.
type Fidelity struct {
	// Calls is the number of calls with recorded usage.
	Calls int `json:"calls"`
	// CostPct is anchored simulated minus recorded total cost, in % of
	// recorded.
	CostPct float64 `json:"cost_pct"`
	// ReadMatchPct is the % of calls whose simulated cache read is within
	// 5% of the recorded one.
	ReadMatchPct float64 `json:"read_match_pct"`
	// OpenLoopMdAPE and OpenLoopP90 are the median and 90th percentile of
	// the absolute % error of the open-loop prompt size, over the calls
	// after the fit prefix (OpenLoopCalls of them).
	OpenLoopMdAPE float64 `json:"open_loop_prompt_mdape_pct"`
	OpenLoopP90   float64 `json:"open_loop_prompt_p90_ape_pct"`
	OpenLoopCalls int     `json:"open_loop_calls"`
	// ObservedResends and ObservedKept count the calls whose bill the
	// replay followed (sim.DetailObservedResend, sim.DetailObservedKept):
	// nonzero only for the replays that honour observed events.
	ObservedResends int `json:"observed_resends"`
	ObservedKept    int `json:"observed_kept"`
	// Thinking is what the bills chose for a Claude Code log whose version
	// keeps earlier thinking only behind a server-side flag
	// (claudecode.ThinkingFlagged): "kept" or "stripped", with the bills
	// that decided ("kept: 5 of 6 bills"). Empty when no bill could tell.
	Thinking string `json:"thinking,omitempty"`
	// SharedFloor is what the bills chose for a recorded session whose
	// first call read a floor another session had cached: whether the
	// account kept that floor warm while the session idled past its TTL
	// ("kept warm: 3 of 3 bills", or "expired: ..."; sim.DetailFloorKept).
	// Empty when no bill could tell.
	SharedFloor string `json:"shared_floor,omitempty"`
	// Format is the format of the log the run replays (traces.Session's),
	// Harness the program and version that wrote it and Model its main
	// model: the fidelity report's distributions per format, version and
	// model.
	Format  string `json:"format,omitempty"`
	Harness string `json:"harness,omitempty"`
	Model   string `json:"model,omitempty"`
}

// Options tune Summarize. The zero value is ready to use.
type Options struct {
	// Prices prices records by model for the per-class split; nil means
	// pricing.Default().
	Prices *pricing.Card
	// DamageLookback is how many calls before a compaction set the write
	// baseline of its cache damage (default 5).
	DamageLookback int
	// DamageHorizon caps the calls after a compaction charged to it
	// (default 10).
	DamageHorizon int
	// UserVerbatim, when set, overrides the verbatim user-message fraction
	// read from record details.
	UserVerbatim *float64
	// Bill, when set, is what the provider billed for the trace's calls,
	// from the log: the run's recorded side (Recorded, and the error and
	// fidelity against it) is this, every call of it, rather than the sum
	// of the records that carry one, which leaves out the calls the replay
	// could not send (overflowed or failed): with a window smaller than a
	// recorded prompt the recorded column showed $0.10 where cost says
	// $0.23, "within 2 %".
	Bill *Bill
}

// A Bill is what the provider billed for a trace's calls, as its log
// records them.
type Bill struct {
	Calls   int
	Tokens  traces.Usage
	CostUSD float64
}

func (o Options) lookback() int {
	if o.DamageLookback > 0 {
		return o.DamageLookback
	}
	return 5
}

func (o Options) horizon() int {
	if o.DamageHorizon > 0 {
		return o.DamageHorizon
	}
	return 10
}

// A RunSummary is the metrics of one (trace, policy) run. Field names are
// the summary.json schema; docs/metrics.md defines every one.
type RunSummary struct {
	Trace  string `json:"trace"`
	Policy string `json:"policy"`
	// Requests is the number of billed agent calls.
	Requests int `json:"requests"`
	// Tokens is what the agent calls were billed, summarizer calls excluded.
	Tokens       traces.Usage `json:"tokens"`
	CostUSD      float64      `json:"cost_usd"`
	CacheHitRate float64      `json:"cache_hit_rate"`
	// Recorded and Error are present only when records carry recorded usage.
	Recorded *RecordedSummary `json:"recorded,omitempty"`
	Error    *ErrorSummary    `json:"error,omitempty"`

	RequestHitRate    float64      `json:"request_hit_rate"`
	CostByClass       CostByClass  `json:"cost_by_class"`
	MissCostUSD       float64      `json:"miss_cost_usd"`
	SummarizerCostUSD float64      `json:"summarizer_cost_usd"`
	SummarizerTokens  traces.Usage `json:"summarizer_tokens"`

	LatencyMS Latency   `json:"latency_ms"`
	StallMS   int64     `json:"stall_ms"`
	Occupancy Occupancy `json:"occupancy"`

	Compactions    Compactions `json:"compactions"`
	BreakerTrips   int         `json:"breaker_trips"`
	OverflowErrors int         `json:"overflow_errors"`
	// FailedRequests counts rejected calls other than overflows.
	FailedRequests int `json:"failed_requests"`
	// UserMessagesVerbatim is null when the engine did not report it.
	UserMessagesVerbatim *float64 `json:"user_messages_verbatim"`
	TokensShed           int64    `json:"tokens_shed"`
	CacheDamage          []Damage `json:"cache_damage"`
	// Misses attributes the cached prefix calls did not read, by cause.
	Misses []MissStat `json:"misses"`

	// Fidelity is set on runs of the recorded policy.
	Fidelity *Fidelity `json:"fidelity,omitempty"`

	// Hindsight is the run's bill under the cheapest cache schedule of its
	// own requests (docs/metrics.md), when it was computed.
	Hindsight *Hindsight `json:"hindsight,omitempty"`

	Warnings []string `json:"warnings,omitempty"`
}

// Hindsight is a run's hindsight optimum and its regret against it: the
// run's bill with the provider calls it made priced under the cheapest
// cache schedule of the same requests, everything else as billed.
type Hindsight struct {
	// CostUSD (hindsight_usd) is the run's cost_usd with its provider
	// calls under that schedule; BoundUSD a proven lower bound on it (the
	// same with the calls at their bound), present when the bound can be
	// split per run (one root session per tenant).
	CostUSD  float64  `json:"hindsight_usd"`
	BoundUSD *float64 `json:"bound_usd,omitempty"`
	// GapToBoundPct is how far above its bound the schedule may be, in %
	// of hindsight_usd (0: proven optimal), when BoundUSD is present.
	GapToBoundPct *float64 `json:"gap_to_bound_pct,omitempty"`
	// Exact reports that the schedule is proven optimal for its tenant.
	Exact bool `json:"exact"`
	// RegretUSD is cost_usd − hindsight_usd; RegretPct that in % of
	// cost_usd.
	RegretUSD float64 `json:"regret_usd"`
	RegretPct float64 `json:"regret_pct"`
}

// NewHindsight is the hindsight summary of a run that cost cost, whose
// provider calls billed policy and would have billed best under the
// hindsight schedule.
func NewHindsight(cost, policy, best float64, exact bool) *Hindsight {
	h := &Hindsight{CostUSD: cost - policy + best, Exact: exact, RegretUSD: policy - best}
	if cost > 0 {
		h.RegretPct = 100 * h.RegretUSD / cost
	}
	return h
}

// A MissStat is the calls that did not read part of what the previous call
// of their session cached, for one cause (provider.Miss*), the tokens they
// did not read, and what re-sending them cost beyond reading them.
type MissStat struct {
	Reason  string  `json:"reason"`
	Calls   int     `json:"calls"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// RecordedSummary is what the real provider billed for the calls that
// recorded it.
type RecordedSummary struct {
	Tokens       traces.Usage `json:"tokens"`
	CostUSD      float64      `json:"cost_usd"`
	CacheHitRate float64      `json:"cache_hit_rate"`
}

// ErrorSummary is simulated minus recorded, in percent of recorded, over the
// calls that recorded usage.
type ErrorSummary struct {
	// ReplayCostUSD is the simulated cost of the calls that recorded
	// usage: what CostPct compares with the recorded cost.
	ReplayCostUSD float64 `json:"replay_cost_usd"`
	CostPct       float64 `json:"cost_pct"`
	CacheReadPct  float64 `json:"cache_read_pct"`
	CacheWritePct float64 `json:"cache_write_pct"`
}

// CostByClass splits CostUSD. Its fields sum to CostUSD.
type CostByClass struct {
	pricing.ClassCost
	Summarizer float64 `json:"summarizer"`
}

// Latency is per-turn latency in milliseconds.
type Latency struct {
	P50 int64 `json:"p50"`
	P95 int64 `json:"p95"`
	Max int64 `json:"max"`
}

// Occupancy is prompt ÷ compaction threshold over the run's calls, rejected
// ones included (their prompt is what the policy sent). A policy that never
// compacts is measured against the threshold hermes' defaults would use for
// the model (HermesThreshold), so its overflows show above 100% and it
// compares with the policies that compact on one scale.
type Occupancy struct {
	Mean  float64 `json:"mean"`
	Max   float64 `json:"max"`
	Final float64 `json:"final"`
}

// Compactions counts context-management passes by kind.
type Compactions struct {
	Batch   int `json:"batch"`
	Micro   int `json:"micro"`
	Prune   int `json:"prune"`
	Idle    int `json:"idle"`
	Masking int `json:"masking"`
}

// Total is the number of passes of every kind.
func (c Compactions) Total() int { return c.Batch + c.Micro + c.Prune + c.Idle + c.Masking }

// A Damage is the cache damage of one compaction: the cache writes it caused
// in the calls after it, beyond what those calls would have written anyway.
type Damage struct {
	Seq  int    `json:"seq"`
	Kind string `json:"kind"`
	Turn int    `json:"turn"`
	// TokensShed is TokensBefore − TokensAfter of the pass.
	TokensShed int64 `json:"tokens_shed"`
	// Calls is the number of calls charged (the damage window).
	Calls int `json:"calls"`
	// BaselineWrite is the mean write tokens per call before the pass.
	BaselineWrite    float64 `json:"baseline_write"`
	ExtraWriteTokens int64   `json:"extra_write_tokens"`
	ExtraWriteUSD    float64 `json:"extra_write_usd"`
	// ReadSavingUSD is what each later call saves by not reading the shed
	// tokens; PaybackCalls is ExtraWriteUSD ÷ ReadSavingUSD (0 when there is
	// no damage).
	ReadSavingUSD float64 `json:"read_saving_usd"`
	PaybackCalls  float64 `json:"payback_calls"`
}

// Summarize computes the metrics of one run's records. Records of other
// traces or policies than the given ones are ignored; records are taken in
// Seq order. It never fails: a model without a price is a warning and its
// calls are left out of the per-class split.
func Summarize(trace, policy string, recs []sim.Record, opts Options) RunSummary {
	card := opts.Prices
	if card == nil {
		card = pricing.Default()
	}
	rs := recs // read only
	if !inSeqOrder(recs, trace, policy) {
		rs = make([]sim.Record, 0, len(recs))
		for _, r := range recs {
			if r.Trace == trace && r.Policy == policy {
				rs = append(rs, r)
			}
		}
		slices.SortStableFunc(rs, func(a, b sim.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	}

	s := RunSummary{Trace: trace, Policy: policy, CacheDamage: []Damage{}}
	unpriced := map[string]int{}
	type priced struct {
		p  pricing.Price
		ok bool
	}
	memo := map[string]priced{}
	price := func(model string) (pricing.Price, bool) {
		m, seen := memo[model]
		if !seen {
			p, err := card.Lookup(model)
			m = priced{p, err == nil}
			memo[model] = m
		}
		if !m.ok {
			unpriced[model]++
		}
		return m.p, m.ok
	}

	var (
		recTokens, simOnRec traces.Usage
		recCost, simCostRec float64
		nRec                int
		reqHitSum           float64
		occ                 []float64
		turnMS              = map[int]int64{}
		turns               []int
		verbatim            *float64
		readMatch           int
		resends, kept       int
		thinking            [2]int // bills showing earlier thinking stripped, kept
		floor               [2]int // bills showing the shared floor expired, kept warm
		misses              = map[string]*MissStat{}
		apes                []float64
		haveOpenLoop        bool
	)
	for i := range rs {
		r := &rs[i] // a Record is large: read in place
		if r.Kind != sim.KindCall {
			s.countPass(r)
			if r.Usage.Prompt()+r.Usage.Output > 0 || r.CostUSD > 0 {
				s.SummarizerTokens = s.SummarizerTokens.Add(r.Usage)
				s.SummarizerCostUSD += r.CostUSD
			}
			continue
		}
		if _, ok := turnMS[r.Turn]; !ok {
			turns = append(turns, r.Turn)
		}
		turnMS[r.Turn] += r.LatencyMS + r.StallMS
		s.StallMS += r.StallMS
		if d := OccupancyDenominator(*r); d > 0 && r.Prompt > 0 {
			occ = append(occ, float64(r.Prompt)/float64(d))
		}
		if r.Error != "" {
			if isOverflow(r.Error) {
				s.OverflowErrors++
			} else {
				s.FailedRequests++
			}
			continue
		}
		s.Requests++
		s.Tokens = s.Tokens.Add(r.Usage)
		s.CostUSD += r.CostUSD
		reqHitSum += r.Usage.HitRate()
		if n, ok := r.DetailValue(sim.DetailUserMsgs); ok && n > 0 {
			v, _ := r.DetailValue(sim.DetailUserVerbatim)
			f := v / n
			verbatim = &f
		}
		if p, ok := price(r.Model); ok {
			c := p.Classes(r.Usage)
			s.CostByClass.ClassCost = s.CostByClass.Add(c)
			s.MissCostUSD += c.Input + c.CacheWrite5m + c.CacheWrite1h -
				float64(r.Usage.Input+r.Usage.Writes())*p.CacheRead/1e6
			if r.MissReason != "" {
				// The missed tokens were written again at the call's tier.
				rate := p.CacheWrite5m
				if r.Usage.CacheWrite1h > r.Usage.CacheWrite5m {
					rate = p.CacheWrite1h
				}
				m := misses[r.MissReason]
				if m == nil {
					m = &MissStat{Reason: r.MissReason}
					misses[r.MissReason] = m
				}
				m.Calls++
				m.Tokens += int64(r.MissTokens)
				m.CostUSD += float64(r.MissTokens) * (rate - p.CacheRead) / 1e6
			}
		}
		if r.Recorded != nil {
			if d := math.Abs(float64(r.Usage.CacheRead - r.Recorded.CacheRead)); d <= 0.05*float64(r.Recorded.CacheRead) {
				readMatch++
			}
			if v, _ := r.DetailValue(sim.DetailObservedResend); v > 0 {
				resends++
			}
			if v, _ := r.DetailValue(sim.DetailObservedKept); v > 0 {
				kept++
			}
			if v, ok := r.DetailValue(sim.DetailThinkingKept); ok {
				thinking[min(1, int(v))]++
			}
			if v, ok := r.DetailValue(sim.DetailFloorKept); ok {
				floor[min(1, int(v))]++
			}
			for _, e := range r.Estimates {
				if e.Name != sim.EstimateOpenLoop {
					continue
				}
				haveOpenLoop = true
				if fp, _ := r.DetailValue(sim.DetailFitPrefix); fp == 0 && r.Recorded.Prompt() > 0 {
					apes = append(apes, 100*math.Abs(float64(int64(e.Tokens)-r.Recorded.Prompt()))/float64(r.Recorded.Prompt()))
				}
			}
			nRec++
			recTokens = recTokens.Add(*r.Recorded)
			recCost += r.RecordedCostUSD
			simOnRec = simOnRec.Add(r.Usage)
			simCostRec += r.CostUSD
		}
	}
	s.Misses = []MissStat{}
	for _, reason := range sortedKeys(misses) {
		s.Misses = append(s.Misses, *misses[reason])
	}
	s.CostByClass.Summarizer = s.SummarizerCostUSD
	s.CostUSD += s.SummarizerCostUSD
	s.CacheHitRate = s.Tokens.HitRate()
	if s.Requests > 0 {
		s.RequestHitRate = reqHitSum / float64(s.Requests)
	}
	if b := opts.Bill; b != nil && b.Calls > 0 {
		// The provider's bill is the recorded side, always; the replay's
		// side stays what it billed of the calls that recorded usage, so a
		// call it could not send shows as error, never as a smaller bill.
		recTokens, recCost, nRec = b.Tokens, b.CostUSD, b.Calls
	}
	if nRec > 0 {
		s.Recorded = &RecordedSummary{Tokens: recTokens, CostUSD: recCost, CacheHitRate: recTokens.HitRate()}
		s.Error = &ErrorSummary{
			ReplayCostUSD: simCostRec,
			CostPct:       pctErr(simCostRec, recCost),
			CacheReadPct:  pctErr(float64(simOnRec.CacheRead), float64(recTokens.CacheRead)),
			CacheWritePct: pctErr(float64(simOnRec.Writes()), float64(recTokens.Writes())),
		}
		if haveOpenLoop || s.Policy == sim.RecordedObservedName {
			f := &Fidelity{Calls: nRec, CostPct: s.Error.CostPct, ReadMatchPct: 100 * float64(readMatch) / float64(nRec), OpenLoopCalls: len(apes),
				ObservedResends: resends, ObservedKept: kept, Thinking: choice(thinking, "kept", "stripped"),
				SharedFloor: choice(floor, "kept warm", "expired")}
			if len(apes) > 0 {
				slices.Sort(apes)
				f.OpenLoopMdAPE = quantile(apes, 0.5)
				f.OpenLoopP90 = quantile(apes, 0.9)
			}
			s.Fidelity = f
		}
	}
	if len(occ) > 0 {
		var sum float64
		for _, o := range occ {
			sum += o
			s.Occupancy.Max = max(s.Occupancy.Max, o)
		}
		s.Occupancy.Mean = sum / float64(len(occ))
		s.Occupancy.Final = occ[len(occ)-1]
	}
	lat := make([]int64, 0, len(turns))
	for _, t := range turns {
		lat = append(lat, turnMS[t])
	}
	s.LatencyMS = latency(lat)
	s.UserMessagesVerbatim = verbatim
	if opts.UserVerbatim != nil {
		v := *opts.UserVerbatim
		s.UserMessagesVerbatim = &v
	}
	s.CacheDamage = damages(rs, opts, price)
	for _, d := range s.CacheDamage {
		s.TokensShed += d.TokensShed
	}
	for _, m := range sortedKeys(unpriced) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("no price for model %q: %d records left out of cost_by_class and miss_cost_usd", m, unpriced[m]))
	}
	return s
}

func (s *RunSummary) countPass(r *sim.Record) {
	if r.Kind == sim.KindBreaker {
		if r.Outcome == compact.OutcomeTripped {
			s.BreakerTrips++
		}
		return
	}
	if !committed(r) {
		return
	}
	switch r.Kind {
	case sim.KindBatch:
		s.Compactions.Batch++
	case sim.KindMicro:
		s.Compactions.Micro++
	case sim.KindPrune:
		s.Compactions.Prune++
	case sim.KindIdle:
		s.Compactions.Idle++
	case sim.KindMasking:
		s.Compactions.Masking++
	}
}

// committed reports whether a pass record changed the context: its outcome
// is one compact.Pass.Committed accepts, or, for a record without an
// outcome, it shed tokens. The engine records every pass the policy ran,
// including the ones that decided to do nothing (below_min_reclaim,
// cache_warm, deferred, ...) and the ones that failed.
func committed(r *sim.Record) bool {
	if !isCompaction(r.Kind) {
		return false
	}
	if r.Outcome == "" {
		return r.TokensAfter < r.TokensBefore
	}
	p := compact.Pass{Outcome: r.Outcome}
	return p.Committed()
}

func isCompaction(k sim.RecordKind) bool {
	switch k {
	case sim.KindBatch, sim.KindMicro, sim.KindPrune, sim.KindIdle, sim.KindMasking:
		return true
	}
	return false
}

func isOverflow(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "prompt is too long") || strings.Contains(m, "overflow")
}

// OccupancyDenominator is what a record's prompt is divided by for its
// occupancy: the policy's threshold, else hermes' for the window.
func OccupancyDenominator(r sim.Record) int {
	if r.Threshold > 0 {
		return r.Threshold
	}
	return HermesThreshold(r.Window)
}

// HermesThreshold is the compaction threshold hermes-agent's defaults give a
// window (policies.Default: 50% raised to 75% below 512K, no output
// reservation, capped at 256K): 150,000 on a 200K window. 0 for an unknown
// window.
func HermesThreshold(window int) int {
	if window <= 0 {
		return 0
	}
	c := policies.Default().Compact
	return compact.Threshold(window, c.MaxTokens, c.Threshold, c.ThresholdTokens)
}

// pctErr is (sim − rec) ÷ rec in percent; 0 when both are 0, and ±100 per
// unit when rec is 0 would be meaningless, so it is reported as 0 too (the
// recorded figures sit beside it).
func pctErr(sim, rec float64) float64 {
	if rec == 0 {
		return 0
	}
	return (sim - rec) / rec * 100
}

// latency is nearest-rank p50/p95 and the max of xs.
func latency(xs []int64) Latency {
	if len(xs) == 0 {
		return Latency{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := func(p float64) int64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return Latency{P50: rank(0.50), P95: rank(0.95), Max: s[len(s)-1]}
}

// inSeqOrder reports whether recs are all of trace and policy and in Seq
// order already, as one replay's are: Summarize then reads them in place
// instead of copying and sorting them (the same records in the same order).
func inSeqOrder(recs []sim.Record, trace, policy string) bool {
	for i := range recs {
		if recs[i].Trace != trace || recs[i].Policy != policy || i > 0 && recs[i].Seq < recs[i-1].Seq {
			return false
		}
	}
	return true
}

// damages measures the cache damage of each compaction pass in rs (sorted
// by Seq). See docs/metrics.md for the counterfactual.
func damages(rs []sim.Record, opts Options, price func(string) (pricing.Price, bool)) []Damage {
	out := []Damage{}
	firstCall := slices.IndexFunc(rs, func(r sim.Record) bool { return r.Kind == sim.KindCall && r.Error == "" })
	// A Record is large: the passes and calls are looked at in place, and
	// the two lists reused from pass to pass.
	var before, window []*sim.Record
	for i := range rs {
		p := &rs[i]
		if !committed(p) {
			continue
		}
		d := Damage{Seq: p.Seq, Kind: string(p.Kind), Turn: p.Turn, TokensShed: int64(max(p.TokensBefore-p.TokensAfter, 0))}
		// Baseline: mean writes of the last few billed calls before the pass,
		// not counting the run's first call (a cold start writes everything).
		before = before[:0]
		for j := i - 1; j >= 0 && len(before) < opts.lookback(); j-- {
			if rs[j].Kind == sim.KindCall && rs[j].Error == "" && j != firstCall {
				before = append(before, &rs[j])
			}
		}
		for _, c := range before {
			d.BaselineWrite += float64(c.Usage.Writes())
		}
		if len(before) > 0 {
			d.BaselineWrite /= float64(len(before))
		}
		// Window: billed calls after the pass, up to the first cache-stable
		// one (it read back everything the previous call cached), the next
		// compaction, or the horizon.
		window = window[:0]
		for j := i + 1; j < len(rs) && len(window) < opts.horizon(); j++ {
			c := &rs[j]
			if committed(c) {
				break
			}
			if c.Kind != sim.KindCall || c.Error != "" {
				continue
			}
			if n := len(window); n > 0 && c.Usage.CacheRead >= window[n-1].Usage.CacheRead+window[n-1].Usage.Writes() {
				break
			}
			window = append(window, c)
		}
		d.Calls = len(window)
		var writes int64
		var writeUSD float64
		var readRate float64
		for k, c := range window {
			writes += c.Usage.Writes()
			if pr, ok := price(c.Model); ok {
				writeUSD += (float64(c.Usage.CacheWrite5m)*pr.CacheWrite5m + float64(c.Usage.CacheWrite1h)*pr.CacheWrite1h) / 1e6
				if k == 0 {
					readRate = pr.CacheRead
				}
			}
		}
		expected := d.BaselineWrite * float64(len(window))
		if v, _ := p.DetailValue(sim.DetailPrefixCold); v == 1 && len(window) > 0 {
			// The cache had expired: without the pass the first call would
			// have rewritten the whole pre-pass prompt.
			expected += float64(p.TokensBefore) - d.BaselineWrite
		}
		d.ExtraWriteTokens = writes - int64(math.Round(expected))
		if writes > 0 {
			d.ExtraWriteUSD = writeUSD * float64(d.ExtraWriteTokens) / float64(writes)
		}
		d.ReadSavingUSD = float64(d.TokensShed) * readRate / 1e6
		if d.ExtraWriteUSD > 0 && d.ReadSavingUSD > 0 {
			d.PaybackCalls = d.ExtraWriteUSD / d.ReadSavingUSD
		}
		out = append(out, d)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// quantile is the q-quantile of sorted xs by linear interpolation between
// closest ranks.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
}

// choice names the hypothesis the bills chose, from the calls that showed
// it false (n[0]) and true (n[1]): yes when those outnumber these, as the
// engine decides (sim.DetailThinkingKept, sim.DetailFloorKept).
func choice(n [2]int, yes, no string) string {
	switch {
	case n[0]+n[1] == 0:
		return ""
	case n[1] > n[0]:
		return fmt.Sprintf("%s: %d of %d bills", yes, n[1], n[0]+n[1])
	}
	return fmt.Sprintf("%s: %d of %d bills", no, n[0], n[0]+n[1])
}

// SetBound sets h's bound and its gap (GapToBoundPct).
func (h *Hindsight) SetBound(b float64) {
	h.BoundUSD = &b
	g := GapPct(h.CostUSD, b)
	h.GapToBoundPct = &g
}

// GapPct is how far cost is above its lower bound, in % of cost.
func GapPct(cost, bound float64) float64 {
	if cost <= 0 || bound >= cost {
		return 0
	}
	return 100 * (cost - bound) / cost
}
