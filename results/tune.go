package results

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// A TuneMetric is a metric a tune constraint (--keep) may bound, with how
// a set of sessions (a fold) is summed up into one value of it.
type TuneMetric struct {
	// Name is the metric's summary.json name (docs/metrics.md); Aliases
	// are the names ctxsim check gives it.
	Name    string
	Aliases []string
	// Fraction metrics are shown in percent.
	Fraction bool
	// Agg says in words how a fold's sessions are summed up (docs/tune.md).
	Agg string
	// Of sums up runs; ok is false when no run carries the metric.
	Of func(runs []RunSummary) (v float64, ok bool)
}

// perSession is a TuneMetric.Of: the mean of v over the runs.
func perSession(v func(RunSummary) float64) func([]RunSummary) (float64, bool) {
	return func(runs []RunSummary) (float64, bool) {
		if len(runs) == 0 {
			return 0, false
		}
		s := 0.0
		for _, r := range runs {
			s += v(r)
		}
		return s / float64(len(runs)), true
	}
}

// worst is a TuneMetric.Of: the largest v over the runs.
func worst(v func(RunSummary) float64) func([]RunSummary) (float64, bool) {
	return func(runs []RunSummary) (float64, bool) {
		if len(runs) == 0 {
			return 0, false
		}
		m := math.Inf(-1)
		for _, r := range runs {
			m = max(m, v(r))
		}
		return m, true
	}
}

// TuneMetrics are the metrics tune constraints may bound, in display order.
var TuneMetrics = []TuneMetric{
	{Name: "user_messages_verbatim", Fraction: true, Agg: "mean over the sessions that report it",
		Of: func(runs []RunSummary) (float64, bool) {
			s, n := 0.0, 0
			for _, r := range runs {
				if r.UserMessagesVerbatim != nil {
					s += *r.UserMessagesVerbatim
					n++
				}
			}
			if n == 0 {
				return 0, false
			}
			return s / float64(n), true
		}},
	{Name: "tokens_shed", Agg: "mean per session", Of: perSession(func(r RunSummary) float64 { return float64(r.TokensShed) })},
	{Name: "compactions", Agg: "mean per session (all kinds)", Of: perSession(func(r RunSummary) float64 { return float64(r.Compactions.Total()) })},
	{Name: "occupancy.max", Aliases: []string{"occupancy_max"}, Fraction: true, Agg: "largest over the sessions", Of: worst(func(r RunSummary) float64 { return r.Occupancy.Max })},
	{Name: "latency_ms.p95", Aliases: []string{"latency_p95"}, Agg: "largest session p95", Of: worst(func(r RunSummary) float64 { return float64(r.LatencyMS.P95) })},
	{Name: "stall_ms", Agg: "mean per session", Of: perSession(func(r RunSummary) float64 { return float64(r.StallMS) })},
	{Name: "breaker_trips", Agg: "mean per session", Of: perSession(func(r RunSummary) float64 { return float64(r.BreakerTrips) })},
	{Name: "cache_hit_rate", Fraction: true, Agg: "token-weighted over the sessions",
		Of: func(runs []RunSummary) (float64, bool) {
			var read, prompt int64
			for _, r := range runs {
				read += r.Tokens.CacheRead
				prompt += r.Tokens.Prompt()
			}
			if prompt == 0 {
				return 0, false
			}
			return float64(read) / float64(prompt), true
		}},
}

// FindTuneMetric is the tune metric named name (or an alias), nil if none.
func FindTuneMetric(name string) *TuneMetric {
	for i := range TuneMetrics {
		if TuneMetrics[i].Name == name || slices.Contains(TuneMetrics[i].Aliases, name) {
			return &TuneMetrics[i]
		}
	}
	return nil
}

// A Constraint bounds a tune metric: Metric >= Value (AtLeast) or
// Metric <= Value.
type Constraint struct {
	Metric  string  `json:"metric"`
	AtLeast bool    `json:"at_least"`
	Value   float64 `json:"value"`
}

func (c Constraint) String() string {
	op := "<="
	if c.AtLeast {
		op = ">="
	}
	return c.Metric + op + strconv.FormatFloat(c.Value, 'g', -1, 64)
}

// Holds reports whether v meets c.
func (c Constraint) Holds(v float64) bool {
	if c.AtLeast {
		return v >= c.Value
	}
	return v <= c.Value
}

// ParseConstraint reads METRIC>=X or METRIC<=X, METRIC a TuneMetrics name
// or alias (kept as its Name). A fraction metric's bound is a fraction
// (0.9) or a percentage (90%).
func ParseConstraint(s string) (Constraint, error) {
	var c Constraint
	name, val, ok := strings.Cut(s, ">=")
	c.AtLeast = ok
	if !ok {
		if name, val, ok = strings.Cut(s, "<="); !ok {
			return c, fmt.Errorf("%q: want METRIC>=X or METRIC<=X, e.g. user_messages_verbatim>=0.9", s)
		}
	}
	name = strings.TrimSpace(name)
	m := FindTuneMetric(name)
	if m == nil {
		names := make([]string, len(TuneMetrics))
		for i, t := range TuneMetrics {
			names[i] = t.Name
		}
		return c, fmt.Errorf("%q: unknown metric %q (want one of %s)", s, name, strings.Join(names, ", "))
	}
	val = strings.TrimSpace(val)
	pct := m.Fraction && strings.HasSuffix(val, "%")
	v, err := nonNegative.Parse(strings.TrimSuffix(val, "%"))
	if err != nil {
		return c, fmt.Errorf("%q: %v", s, err)
	}
	if pct {
		v /= 100
	}
	c.Metric, c.Value = m.Name, v
	return c, nil
}

// TuneSetup is what a tune is asked: the candidate settings (the current
// one first, then the grid's points), how to split the sessions into
// folds, and the constraints. Its JSON is what merge needs to finish a
// sharded tune.
type TuneSetup struct {
	Base       string       `json:"base"`
	Current    string       `json:"current"`
	Axes       []Axis       `json:"axes"`
	Candidates []string     `json:"candidates"`
	Folds      int          `json:"folds"`
	Seed       uint64       `json:"seed"`
	Keep       []Constraint `json:"keep"`
}

// A Tune is a tune's result: the setting recommended, the saving it is
// expected to bring on sessions it was not chosen on, and the trade-offs.
type Tune struct {
	TuneSetup
	Sessions int `json:"sessions"`
	// Excluded are the session groups every candidate had calls rejected
	// in: no bill of theirs is whole, so they are in no fold.
	Excluded []string `json:"excluded,omitempty"`
	// Recommended is the setting recommended; "" when no setting met the
	// constraints on every fold.
	Recommended string `json:"recommended"`
	// HeldOut is the saving of the setting each fold's training sessions
	// chose, on that fold's sessions: what tuning is expected to save on
	// sessions it has not seen. InSample is the saving of the setting
	// chosen on all sessions, measured on the same sessions.
	HeldOut  HeldOut  `json:"held_out"`
	InSample InSample `json:"in_sample"`
	// OptimismPP is InSample.SavingPct − HeldOut.SavingPct: how much
	// choosing and measuring on the same sessions overstates the saving.
	OptimismPP float64         `json:"optimism_pp"`
	FoldList   []TuneFold      `json:"fold_results"`
	Settings   []TuneCandidate `json:"settings"`
	Fronts     []Front         `json:"fronts"`
	Notes      []string        `json:"notes,omitempty"`
}

// HeldOut is the cross-validated saving: pooled over the folds (each
// fold's chosen setting against the current one on its sessions, in
// dollars), and the spread of the folds' own savings.
type HeldOut struct {
	SavingPct float64 `json:"saving_pct"`
	MeanPct   float64 `json:"fold_mean_pct"`
	MinPct    float64 `json:"fold_min_pct"`
	MaxPct    float64 `json:"fold_max_pct"`
	// SDPct is the sample standard deviation of the folds' savings.
	SDPct float64 `json:"fold_sd_pct"`
}

// InSample is the setting the whole sample chooses and its saving there.
type InSample struct {
	Chosen    string  `json:"chosen"`
	SavingPct float64 `json:"saving_pct"`
}

// A TuneFold is one fold: its sessions, the setting chosen on the other
// folds and what it saved on this one, and what choosing on this fold
// itself would have claimed (SameSavingPct).
type TuneFold struct {
	Fold          int      `json:"fold"`
	Sessions      []string `json:"sessions"`
	Chosen        string   `json:"chosen"`
	TrainPct      float64  `json:"train_saving_pct"`
	HeldOutPct    float64  `json:"held_out_saving_pct"`
	SameSavingPct float64  `json:"same_sessions_saving_pct"`
	// Broken are the constraints the chosen setting broke on this fold,
	// though it met them on the training folds.
	Broken []string `json:"broken,omitempty"`
}

// A TuneCandidate is one setting over all sessions: cost, saving against
// the current setting, the metrics, how many folds chose it, and why it
// may never be recommended (Broken: a constraint on a fold, or calls
// rejected).
type TuneCandidate struct {
	Name      string  `json:"name"`
	CostUSD   float64 `json:"cost_usd"`
	SavingPct float64 `json:"saving_pct"`
	// Metrics are every tune metric (TuneMetrics) over all sessions.
	Metrics  []MetricValue `json:"metrics"`
	ChosenBy int           `json:"chosen_by_folds"`
	// HeldOutPct is its saving on the folds whose training folds chose
	// it, pooled; nil when none did.
	HeldOutPct *float64 `json:"held_out_saving_pct"`
	Eligible   bool     `json:"eligible"`
	Broken     []string `json:"broken,omitempty"`
}

// A MetricValue is a metric over all sessions; Value is nil when no run
// carries it.
type MetricValue struct {
	Name  string   `json:"name"`
	Value *float64 `json:"value"`
}

// A Front is the trade-off between cost and one metric: every setting's
// point, OnFront marking those no other setting beats on both.
type Front struct {
	Metric         string       `json:"metric"`
	HigherIsBetter bool         `json:"higher_is_better"`
	Points         []FrontPoint `json:"points"`
}

// A FrontPoint is one setting's cost and metric over all sessions.
type FrontPoint struct {
	Name    string  `json:"name"`
	CostUSD float64 `json:"cost_usd"`
	Value   float64 `json:"value"`
	OnFront bool    `json:"on_front"`
}

// DefaultFront is the metric a tune without constraints shows its
// trade-off against: cost alone favours shedding what the agent may need.
var DefaultFront = Constraint{Metric: "user_messages_verbatim", AtLeast: true}

// Folds deals the session groups ids into k folds, deterministic from
// seed: the ids sorted, shuffled by a stream of seed alone, and dealt in
// turn, so fold sizes differ by at most one. It returns each id's fold.
func Folds(ids []string, k int, seed uint64) map[string]int {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	h := fnv.New64a()
	h.Write([]byte("ctxsim tune folds"))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	out := make(map[string]int, len(ids))
	for i, id := range ids {
		out[id] = i % k
	}
	return out
}

// NewTune chooses among the setup's candidates on runs, one per (session
// group, candidate) (their Trace the group's root session, their Policy
// the candidate): the sessions the current setting ran are split into
// folds (Folds); each fold's setting is the cheapest on the other folds
// among those that meet every constraint on each of them with no call
// rejected (ties go to the current setting, then to candidate order); its
// saving is measured on the fold. The recommendation is the setting the
// folds chose most often among those that meet the constraints on every
// fold (ties: the larger saving on the folds that chose it, then the
// cheaper over all sessions), unless it saved nothing on those folds: then
// the current setting, if it meets them. When no fold's choice does, it is
// the cheapest such setting over all sessions, with a note that it has no
// held-out evidence.
func NewTune(s TuneSetup, runs []RunSummary) (*Tune, error) {
	cur := slices.Index(s.Candidates, s.Current)
	switch {
	case s.Folds < 2:
		return nil, fmt.Errorf("%d folds: want at least 2", s.Folds)
	case cur < 0:
		return nil, fmt.Errorf("the current setting %s is not a candidate", s.Current)
	}
	for _, c := range s.Keep {
		if FindTuneMetric(c.Metric) == nil {
			return nil, fmt.Errorf("constraint %s: unknown metric", c)
		}
	}
	t := &Tune{TuneSetup: s}
	byCand := map[string]map[string]RunSummary{}
	for _, r := range runs {
		m := byCand[r.Policy]
		if m == nil {
			m = map[string]RunSummary{}
			byCand[r.Policy] = m
		}
		m[r.Trace] = r
	}
	var ids []string
	for id := range byCand[s.Current] {
		if rejectedByAll(byCand, s.Candidates, id) {
			t.Excluded = append(t.Excluded, id)
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	slices.Sort(t.Excluded)
	if len(t.Excluded) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d session group(s) had calls rejected under every setting, so no setting's bill is whole there: left out of the folds (excluded)", len(t.Excluded)))
	}
	t.Sessions = len(ids)
	if len(ids) < s.Folds {
		return nil, fmt.Errorf("%d session group(s) under %s: too few for %d folds (a session and its subagents stay in one fold)", len(ids), s.Current, s.Folds)
	}
	fold := Folds(ids, s.Folds, s.Seed)
	folds := make([][]string, s.Folds)
	for _, id := range ids {
		folds[fold[id]] = append(folds[fold[id]], id)
	}
	// cost[c][f] and broken[c][f]: each candidate's cost on each fold and
	// the constraints it breaks there ("" if none).
	nc := len(s.Candidates)
	cost := make([][]float64, nc)
	broken := make([][][]string, nc)
	for ci, name := range s.Candidates {
		cost[ci] = make([]float64, s.Folds)
		broken[ci] = make([][]string, s.Folds)
		for f, group := range folds {
			rs, missing, rejected := foldRuns(byCand[name], group)
			for _, r := range rs {
				cost[ci][f] += r.CostUSD
			}
			if missing > 0 {
				broken[ci][f] = append(broken[ci][f], fmt.Sprintf("%d session(s) did not run", missing))
			}
			if rejected > 0 {
				broken[ci][f] = append(broken[ci][f], fmt.Sprintf("calls rejected in %d session(s)", rejected))
			}
			for _, c := range s.Keep {
				v, ok := FindTuneMetric(c.Metric).Of(rs)
				if !ok {
					broken[ci][f] = append(broken[ci][f], c.String()+" (not reported)")
				} else if !c.Holds(v) {
					broken[ci][f] = append(broken[ci][f], fmt.Sprintf("%s (%s)", c, MetricText(c.Metric, v)))
				}
			}
		}
	}
	saving := func(ci int, fs []int) float64 {
		var c, b float64
		for _, f := range fs {
			c += cost[cur][f]
			b += cost[ci][f]
		}
		return pct(c-b, c)
	}
	// choose is the cheapest candidate on folds fs meeting every
	// constraint on each of them; -1 if none does.
	choose := func(fs []int) int {
		best, bestCost := -1, 0.0
		for ci := range nc {
			ok, c := true, 0.0
			for _, f := range fs {
				ok = ok && len(broken[ci][f]) == 0
				c += cost[ci][f]
			}
			if ok && (best < 0 || c < bestCost || c == bestCost && ci == cur) {
				best, bestCost = ci, c
			}
		}
		return best
	}
	all := make([]int, s.Folds)
	for f := range all {
		all[f] = f
	}
	chosenBy := make([]int, nc)
	heldBy := make([][2]float64, nc) // per candidate: current's and its cost on the folds that chose it
	var foldPcts []float64
	var heldCur, heldCost float64
	for f := range s.Folds {
		train := slices.DeleteFunc(slices.Clone(all), func(g int) bool { return g == f })
		tf := TuneFold{Fold: f + 1, Sessions: folds[f]}
		ci := choose(train)
		if ci < 0 {
			ci = cur // nothing meets the constraints: the fold keeps its setting
			tf.Broken = []string{"no setting met the constraints on the training folds: kept " + s.Current}
		} else {
			chosenBy[ci]++
			heldBy[ci][0] += cost[cur][f]
			heldBy[ci][1] += cost[ci][f]
			tf.Broken = broken[ci][f]
		}
		tf.Chosen = s.Candidates[ci]
		tf.TrainPct = saving(ci, train)
		tf.HeldOutPct = saving(ci, []int{f})
		if same := choose([]int{f}); same >= 0 {
			tf.SameSavingPct = saving(same, []int{f})
		}
		heldCur += cost[cur][f]
		heldCost += cost[ci][f]
		foldPcts = append(foldPcts, tf.HeldOutPct)
		t.FoldList = append(t.FoldList, tf)
	}
	t.HeldOut = spread(foldPcts)
	t.HeldOut.SavingPct = pct(heldCur-heldCost, heldCur)
	if in := choose(all); in >= 0 {
		t.InSample = InSample{Chosen: s.Candidates[in], SavingPct: saving(in, all)}
	} else {
		t.Notes = append(t.Notes, "no setting meets the constraints, with every call billed, on every fold")
	}
	t.OptimismPP = t.InSample.SavingPct - t.HeldOut.SavingPct
	total := func(ci int) float64 {
		c := 0.0
		for f := range s.Folds {
			c += cost[ci][f]
		}
		return c
	}
	rec := -1
	for ci := range nc {
		eligible := true
		for f := range s.Folds {
			eligible = eligible && len(broken[ci][f]) == 0
		}
		tc := TuneCandidate{Name: s.Candidates[ci], CostUSD: total(ci), SavingPct: saving(ci, all), ChosenBy: chosenBy[ci], Eligible: eligible}
		if chosenBy[ci] > 0 {
			h := pct(heldBy[ci][0]-heldBy[ci][1], heldBy[ci][0])
			tc.HeldOutPct = &h
		}
		for f := range s.Folds {
			for _, b := range broken[ci][f] {
				tc.Broken = append(tc.Broken, fmt.Sprintf("fold %d: %s", f+1, b))
			}
		}
		var rs []RunSummary
		for _, id := range ids {
			if r, ok := byCand[s.Candidates[ci]][id]; ok {
				rs = append(rs, r)
			}
		}
		for _, m := range TuneMetrics {
			mv := MetricValue{Name: m.Name}
			if v, ok := m.Of(rs); ok {
				mv.Value = &v
			}
			tc.Metrics = append(tc.Metrics, mv)
		}
		t.Settings = append(t.Settings, tc)
		if eligible && chosenBy[ci] > 0 && (rec < 0 || better(tc, t.Settings[rec])) {
			rec = ci
		}
	}
	curOK := t.Settings[cur].Eligible
	switch {
	case rec >= 0 && rec != cur && *t.Settings[rec].HeldOutPct <= 0 && curOK:
		t.Recommended = s.Current
		t.Notes = append(t.Notes, fmt.Sprintf("%s, the folds' most frequent choice, saved %.1f%% on the sessions it was not chosen on: keep %s",
			s.Candidates[rec], *t.Settings[rec].HeldOutPct, s.Current))
	case rec >= 0:
		t.Recommended = s.Candidates[rec]
	case t.InSample.Chosen != "":
		t.Recommended = t.InSample.Chosen
		t.Notes = append(t.Notes, "no fold's choice met the constraints on every fold: the recommendation is the cheapest setting that does over all sessions, with no held-out evidence")
	}
	t.Fronts = t.fronts()
	return t, nil
}

// better ranks a candidate the folds chose above another: chosen by more
// folds, then the larger saving on those folds' own sessions, then the
// cheaper over all sessions.
func better(a, b TuneCandidate) bool {
	switch {
	case a.ChosenBy != b.ChosenBy:
		return a.ChosenBy > b.ChosenBy
	case *a.HeldOutPct != *b.HeldOutPct:
		return *a.HeldOutPct > *b.HeldOutPct
	}
	return a.CostUSD < b.CostUSD
}

// rejectedByAll reports whether every candidate's run of session id had
// calls rejected (a session too large for any of them).
func rejectedByAll(byCand map[string]map[string]RunSummary, cands []string, id string) bool {
	for _, c := range cands {
		if r, ok := byCand[c][id]; !ok || r.OverflowErrors == 0 && r.FailedRequests == 0 {
			return false
		}
	}
	return true
}

// foldRuns are the runs of the sessions in group, with how many sessions
// have no run and how many runs had calls rejected.
func foldRuns(runs map[string]RunSummary, group []string) (rs []RunSummary, missing, rejected int) {
	for _, id := range group {
		r, ok := runs[id]
		if !ok {
			missing++
			continue
		}
		if r.OverflowErrors > 0 || r.FailedRequests > 0 {
			rejected++
		}
		rs = append(rs, r)
	}
	return rs, missing, rejected
}

// Metric is the candidate's value of the tune metric name, nil when no
// run carries it.
func (c *TuneCandidate) Metric(name string) *float64 {
	for _, m := range c.Metrics {
		if m.Name == name {
			return m.Value
		}
	}
	return nil
}

// FrontMetrics are the metrics the trade-offs are shown against: each
// constrained one once, or DefaultFront.
func (t *Tune) FrontMetrics() []Constraint {
	var out []Constraint
	for _, c := range t.Keep {
		if !slices.ContainsFunc(out, func(o Constraint) bool { return o.Metric == c.Metric }) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = []Constraint{DefaultFront}
	}
	return out
}

// fronts are the Pareto fronts of cost against each front metric.
func (t *Tune) fronts() []Front {
	var out []Front
	for _, c := range t.FrontMetrics() {
		f := Front{Metric: c.Metric, HigherIsBetter: c.AtLeast}
		for _, s := range t.Settings {
			if v := s.Metric(c.Metric); v != nil {
				f.Points = append(f.Points, FrontPoint{Name: s.Name, CostUSD: s.CostUSD, Value: *v})
			}
		}
		better := func(a, b float64) bool { // a at least as good as b
			if c.AtLeast {
				return a >= b
			}
			return a <= b
		}
		for i, p := range f.Points {
			p.OnFront = true
			for j, q := range f.Points {
				if i != j && q.CostUSD <= p.CostUSD && better(q.Value, p.Value) && (q.CostUSD < p.CostUSD || q.Value != p.Value) {
					p.OnFront = false
					break
				}
			}
			f.Points[i] = p
		}
		out = append(out, f)
	}
	return out
}

// spread is the mean, range and sample standard deviation of xs.
func spread(xs []float64) HeldOut {
	h := HeldOut{MinPct: math.Inf(1), MaxPct: math.Inf(-1)}
	for _, x := range xs {
		h.MeanPct += x / float64(len(xs))
		h.MinPct, h.MaxPct = min(h.MinPct, x), max(h.MaxPct, x)
	}
	if len(xs) > 1 {
		ss := 0.0
		for _, x := range xs {
			ss += (x - h.MeanPct) * (x - h.MeanPct)
		}
		h.SDPct = math.Sqrt(ss / float64(len(xs)-1))
	}
	return h
}

// pct is part ÷ whole × 100, 0 for a zero whole.
func pct(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return part / whole * 100
}

// MetricText is v as metric name shows it: a fraction in percent.
func MetricText(name string, v float64) string {
	if m := FindTuneMetric(name); m != nil && m.Fraction {
		return strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
