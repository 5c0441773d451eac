package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
)

// whatifVariants are the default counterfactuals: the recorded session with
// one thing changed. Each is a config applied on top of the recorded policy.
var whatifVariants = []struct {
	name, help string
	ttl        string
	apply      func(c *policies.Config)
}{
	{"ttl-5m", "the recorded session with every breakpoint on the 5m tier", "5m", nil},
	{"ttl-1h", "the recorded session with every breakpoint on the 1h tier", "1h", nil},
	{"ttl-auto", "hermes' auto tier: 1h for human-paced sessions, 5m for subagents and jobs", "auto", nil},
	{"prune-on-resume", "plus a deterministic prune of old tool output on a resume whose cache expired anyway", "", func(c *policies.Config) {
		c.Compact.IdleCompactAfterSeconds = 300
		c.Compact.IdleAction = compact.IdlePrune
	}},
	{"micro-1", "plus hermes micro-compaction after every turn", "", func(c *policies.Config) {
		c.Compact.MicroCompact = true
		c.Compact.MicroCompactEveryNTurns = 1
	}},
	{"micro-5", "plus hermes micro-compaction every 5 turns", "", func(c *policies.Config) {
		c.Compact.MicroCompact = true
		c.Compact.MicroCompactEveryNTurns = 5
	}},
	{"masking", "plus observation masking: the last 10 tool outputs verbatim, older ones a placeholder (batched, ≥4096 tokens a pass)", "", func(c *policies.Config) {
		c.Compact.Masking.Mode = compact.MaskBatched
	}},
}

func whatifNames() []string {
	out := make([]string, len(whatifVariants))
	for i, v := range whatifVariants {
		out[i] = v.name
	}
	return out
}

// whatifSpecs resolves --policies: whatif variants by name, else presets and
// config files as compare takes them.
func whatifSpecs(names []string, sets []string) ([]policySpec, error) {
	var out []policySpec
	for _, n := range names {
		found := false
		for _, v := range whatifVariants {
			if v.name != n {
				continue
			}
			c := policies.Default()
			c.Name = n
			c.Compact.Enabled = false // the recorded compactions stay
			if v.apply != nil {
				v.apply(&c)
			}
			if err := applySets(&c, sets); err != nil {
				return nil, err
			}
			out = append(out, policySpec{name: n, config: &c, onRecorded: true, ttl: v.ttl})
			found = true
		}
		if found {
			continue
		}
		if _, err := policies.Preset(n); err != nil && n != sim.RecordedName && !isPolicyFile(n) {
			return nil, usagef("--policies %q: not a whatif variant (%s), a preset or a policy file", n, strings.Join(whatifNames(), ", "))
		}
		sp, err := resolvePolicies([]string{n}, sets)
		if err != nil {
			return nil, err
		}
		out = append(out, sp...)
	}
	return out, nil
}

func init() {
	var variants strings.Builder
	for _, v := range whatifVariants {
		fmt.Fprintf(&variants, "  %-16s %s\n", v.name, v.help)
	}
	register(&command{
		name:    "whatif",
		summary: "what recorded sessions cost, and what they would have cost under other policies",
		usage:   "PATH... [--policies a,b,c] [flags]",
		help: `Whatif replays recorded sessions (Claude Code logs, Codex rollouts, native
traces with usage) as they happened, calibrated on their own billed calls,
then under each policy, and prints per session the recorded cost, each
policy's simulated cost and its savings, and the best policy.

Each counterfactual uses the recorded replay's calibration: its prompt is the
recorded prompt plus the calibrated size of what the policy changed. The
"recorded" column is what the provider billed; "replay" is the simulation of
the recorded behaviour, whose difference from it is the simulation's error
(see ctxsim run --policy recorded for the fidelity report).

Default policies (variants of the recorded behaviour):
` + variants.String() + `
Any preset (ctxsim policies) or .yaml/.json policy can be named too; those
replace the recorded behaviour entirely (their own cache layout and
compaction).

Examples:
  ctxsim whatif ~/.claude/projects
  ctxsim whatif ~/.claude/projects/-home-me-proj --policies ttl-1h,prune-on-resume
  ctxsim whatif session.jsonl --policies hermes-default,masking-batched --json
  ctxsim whatif --from codex ~/.codex/sessions`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var sf simFlags
			var of outFlags
			from := fs.String("from", "", "force the log format (native, claude-code, codex, hermes, chatlog)")
			names := fs.StringSlice("policies", whatifNames(), "policies to compare, comma-separated")
			fs.StringArrayVar(&sf.sets, "set", nil, "override a setting of every policy, key=value; repeatable")
			fs.StringVar(&sf.provider, "provider", "auto", "fake provider: anthropic, openai, deepseek, vllm, or auto (the provider of each trace's model)")
			fs.StringVar(&sf.prices, "prices", "", "LiteLLM price file to override or extend the rate card")
			fs.Uint64Var(&sf.seed, "seed", 1, "seed of every random choice")
			fs.IntVarP(&sf.jobs, "jobs", "j", 0, "parallel replays (0: all cores); output is identical for any value")
			of.add(fs)
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH (a log file or directory)")
				}
				return runWhatif(e, args, *from, *names, &sf, &of)
			}
		},
	})
}

type whatifPolicy struct {
	Policy     string  `json:"policy"`
	CostUSD    float64 `json:"cost_usd"`
	SavingsUSD float64 `json:"savings_usd"`
	SavingsPct float64 `json:"savings_pct"`
}

type whatifSession struct {
	ID string `json:"id"`
	// RecordedUSD is what was billed; ReplayUSD the simulation of it, the
	// base savings are measured from.
	RecordedUSD *float64       `json:"recorded_usd"`
	ReplayUSD   float64        `json:"replay_usd"`
	Policies    []whatifPolicy `json:"policies"`
	Best        string         `json:"best"`
}

type whatifReport struct {
	Sessions []whatifSession `json:"sessions"`
	Totals   whatifSession   `json:"totals"`
}

func runWhatif(e *env, paths []string, from string, names []string, sf *simFlags, of *outFlags) error {
	format, err := of.parse()
	if err != nil {
		return err
	}
	st, err := sf.setup()
	if err != nil {
		return err
	}
	specs, err := whatifSpecs(names, sf.sets)
	if err != nil {
		return err
	}
	specs = append([]policySpec{{name: sim.RecordedName}}, specs...)
	sessions, warn, err := loadTraces(paths, from)
	if err != nil {
		return err
	}
	if warn.Len() > 0 {
		printWarnings(e, warn)
	}
	if len(sessions) == 0 {
		return fmt.Errorf("no sessions found under %s", strings.Join(paths, ", "))
	}
	// One account: every session loaded shares the provider cache.
	for _, s := range sessions {
		s.Tenant = "whatif"
	}
	st.memo.Warm(sessions)
	groups := groupSessions(sessions)
	if !groups[0].hasRecorded() {
		return fmt.Errorf("the sessions carry no recorded usage: nothing to compare with (try ctxsim compare)")
	}
	cells, err := buildCells(st, groups, specs)
	if err != nil {
		return err
	}
	var runs []report.RunSummary
	var recs []sim.Record
	cellErr := runCells(st, cells, sf.jobs, e.stderr, func(c *cell) error {
		runs = append(runs, c.result.runs...)
		if of.out != "" {
			recs = append(recs, c.result.records...)
		}
		return nil
	})
	if err := writeOutputs(of.out, "", runs, recs, st, "ctxsim whatif"); err != nil {
		return err
	}
	rep := buildWhatif(runs, specs)
	if format == report.JSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
		return cellErr
	}
	if err := whatifTable(rep, specs[1:]).Write(e.stdout, format); err != nil {
		return err
	}
	return cellErr
}

func buildWhatif(runs []report.RunSummary, specs []policySpec) whatifReport {
	var order []string
	by := map[string]map[string]report.RunSummary{}
	for _, r := range runs {
		if by[r.Trace] == nil {
			by[r.Trace] = map[string]report.RunSummary{}
			order = append(order, r.Trace)
		}
		by[r.Trace][r.Policy] = r
	}
	var rep whatifReport
	tot := whatifSession{ID: "total"}
	var totRec float64
	haveRec := false
	totPol := map[string]float64{}
	for _, id := range order {
		m := by[id]
		base, ok := m[sim.RecordedName]
		if !ok {
			continue
		}
		ws := whatifSession{ID: id, ReplayUSD: base.CostUSD}
		if base.Recorded != nil {
			v := base.Recorded.CostUSD
			ws.RecordedUSD = &v
			totRec += v
			haveRec = true
		}
		tot.ReplayUSD += base.CostUSD
		best, bestCost := sim.RecordedName, base.CostUSD
		for _, sp := range specs[1:] {
			r, ok := m[sp.name]
			if !ok {
				continue
			}
			ws.Policies = append(ws.Policies, savings(sp.name, r.CostUSD, base.CostUSD))
			totPol[sp.name] += r.CostUSD
			if r.CostUSD < bestCost {
				best, bestCost = sp.name, r.CostUSD
			}
		}
		ws.Best = best
		rep.Sessions = append(rep.Sessions, ws)
	}
	if haveRec {
		tot.RecordedUSD = &totRec
	}
	best, bestCost := sim.RecordedName, tot.ReplayUSD
	for _, sp := range specs[1:] {
		c := totPol[sp.name]
		tot.Policies = append(tot.Policies, savings(sp.name, c, tot.ReplayUSD))
		if c < bestCost {
			best, bestCost = sp.name, c
		}
	}
	tot.Best = best
	rep.Totals = tot
	return rep
}

func savings(name string, cost, base float64) whatifPolicy {
	p := whatifPolicy{Policy: name, CostUSD: round6(cost), SavingsUSD: round6(base - cost)}
	if base > 0 {
		p.SavingsPct = 100 * (base - cost) / base
	}
	return p
}

// change renders a percentage change, "0%" when it rounds to nothing.
func change(pct float64) string {
	if math.Abs(pct) < 0.5 {
		return "0%"
	}
	return fmt.Sprintf("%+.0f%%", pct)
}

func whatifTable(rep whatifReport, specs []policySpec) *report.Table {
	t := &report.Table{
		Title:   "What recorded sessions cost, and would have cost ($; savings vs the replay of what happened)",
		Columns: []string{"session", "recorded", "replay"},
		Right:   []bool{false, true, true},
	}
	for _, sp := range specs {
		t.Columns = append(t.Columns, sp.name)
		t.Right = append(t.Right, true)
	}
	t.Columns = append(t.Columns, "best")
	t.Right = append(t.Right, false)
	row := func(ws whatifSession) {
		rec := "n/a"
		if ws.RecordedUSD != nil {
			rec = usd2(*ws.RecordedUSD)
		}
		cells := []string{ws.ID, rec, usd2(ws.ReplayUSD)}
		byName := map[string]whatifPolicy{}
		for _, p := range ws.Policies {
			byName[p.Policy] = p
		}
		for _, sp := range specs {
			p, ok := byName[sp.name]
			if !ok {
				cells = append(cells, "")
				continue
			}
			cells = append(cells, fmt.Sprintf("%s (%s)", usd2(p.CostUSD), change(-p.SavingsPct)))
		}
		t.AddRow(append(cells, ws.Best)...)
	}
	for _, ws := range rep.Sessions {
		row(ws)
	}
	row(rep.Totals)
	t.Notes = append(t.Notes, "(+N%) is the change against the replay; recorded − replay is the simulation's own error.")
	return t
}
