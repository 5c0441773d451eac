package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
)

func whatifNames() []string {
	var out []string
	for _, v := range experiment.Variants() {
		out = append(out, v.Name)
	}
	return out
}

// whatifSpecs resolves --policies: whatif variants by name, else presets and
// config files as compare takes them.
func whatifSpecs(names []string, sets []string) ([]experiment.Spec, error) {
	var out []experiment.Spec
	for _, n := range names {
		if v, ok := experiment.LookupVariant(n); ok {
			sp := v.Spec()
			if err := applySets(sp.Config, sets); err != nil {
				return nil, err
			}
			out = append(out, sp)
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
	for _, v := range experiment.Variants() {
		fmt.Fprintf(&variants, "  %-16s %s\n", v.Name, v.Help)
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
			fs.StringVar(&sf.provider, "provider", "auto", "fake provider: anthropic, openai, deepseek, gemini, vllm, or auto (the provider of each trace's model)")
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
	// WithinError is true when the replay's own error could explain the
	// savings: |savings_pct| ≤ |replay_error_pct|.
	WithinError bool `json:"within_error"`
}

type whatifSession struct {
	ID string `json:"id"`
	// RecordedUSD is what was billed; ReplayUSD the simulation of it, the
	// base savings are measured from.
	RecordedUSD *float64 `json:"recorded_usd"`
	ReplayUSD   float64  `json:"replay_usd"`
	// ReplayErrorPct is the replay's own error: (replay − recorded) in %
	// of recorded; null without a recorded bill.
	ReplayErrorPct *float64       `json:"replay_error_pct"`
	Policies       []whatifPolicy `json:"policies"`
	Best           string         `json:"best"`
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
	// The baseline is the recorded replay that honours observed re-sends:
	// such a break happened whatever the policy, and every variant replays
	// it too, so savings compare like with like.
	specs = append([]experiment.Spec{experiment.RecordedObserved()}, specs...)
	sessions, warn, err := loadTraces(e, paths, from)
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
	st.Memo.Warm(sessions)
	tenants := experiment.Tenants(sessions)
	if !tenants[0].HasRecorded() {
		return fmt.Errorf("the sessions carry no recorded usage: nothing to compare with (try ctxsim compare)")
	}
	cells, err := st.Cells(tenants, specs)
	if err != nil {
		return err
	}
	var runs []report.RunSummary
	var recs []sim.Record
	cellErr := runCells(e, st, cells, sf.jobs, nil, func(c *experiment.Cell) {
		runs = append(runs, c.Result.Runs...)
		if of.out != "" {
			recs = append(recs, c.Result.Records...)
		}
	})
	var failed *cellsFailed
	if cellErr != nil && !errors.As(cellErr, &failed) {
		return cellErr
	}
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

// buildWhatif prices each session with a recorded replay under every
// policy, against that replay, and names the best: the cheapest policy
// whose calls all fit and were billed (the experiment.Pivot rule), the
// replay of what happened included.
func buildWhatif(runs []report.RunSummary, specs []experiment.Spec) whatifReport {
	var kept []report.RunSummary
	hasBase := map[string]bool{}
	for _, r := range runs {
		if r.Policy == sim.RecordedObservedName {
			hasBase[r.Trace] = true
		}
	}
	for _, r := range runs {
		if hasBase[r.Trace] {
			kept = append(kept, r)
		}
	}
	policy := func(r report.RunSummary) string { return r.Policy }
	bySession := experiment.NewPivot(kept, policy, func(r report.RunSummary) string { return r.Trace })
	total := experiment.NewPivot(kept, policy, func(report.RunSummary) string { return "total" })
	rows := make([]string, len(specs))
	for i, sp := range specs {
		rows[i] = sp.Name
	}
	var rep whatifReport
	tot := whatifSession{ID: "total"}
	var totRec float64
	haveRec := false
	recorded := map[string]*float64{}
	for _, r := range kept {
		if r.Policy == sim.RecordedObservedName && r.Recorded != nil {
			v := r.Recorded.CostUSD
			recorded[r.Trace] = &v
			totRec += v
			haveRec = true
		}
	}
	row := func(p *experiment.Pivot, col string, ws *whatifSession) {
		base := p.At(sim.RecordedObservedName, col)
		ws.ReplayUSD = base.CostUSD
		if ws.RecordedUSD != nil && *ws.RecordedUSD > 0 {
			e := 100 * (ws.ReplayUSD - *ws.RecordedUSD) / *ws.RecordedUSD
			ws.ReplayErrorPct = &e
		}
		for _, sp := range specs[1:] {
			var w whatifPolicy
			if t := p.At(sp.Name, col); t != nil {
				w = savings(sp.Name, t.CostUSD, base.CostUSD)
			} else if col == "total" {
				w = savings(sp.Name, 0, base.CostUSD)
			} else {
				continue
			}
			w.WithinError = ws.ReplayErrorPct != nil && math.Abs(w.SavingsPct) <= math.Abs(*ws.ReplayErrorPct)
			ws.Policies = append(ws.Policies, w)
		}
		ws.Best = p.BestIn(col, rows)
	}
	for _, id := range bySession.Cols {
		ws := whatifSession{ID: id, RecordedUSD: recorded[id]}
		row(bySession, id, &ws)
		rep.Sessions = append(rep.Sessions, ws)
	}
	if haveRec {
		tot.RecordedUSD = &totRec
	}
	if len(kept) > 0 {
		row(total, "total", &tot)
	} else {
		tot.Best = sim.RecordedObservedName
	}
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

func whatifTable(rep whatifReport, specs []experiment.Spec) *report.Table {
	t := &report.Table{
		Title:   "What recorded sessions cost, and would have cost ($; savings vs the replay of what happened)",
		Columns: []string{"session", "recorded", "replay", "error"},
		Right:   []bool{false, true, true, true},
	}
	for _, sp := range specs {
		t.Columns = append(t.Columns, sp.Name)
		t.Right = append(t.Right, true)
	}
	t.Columns = append(t.Columns, "best")
	t.Right = append(t.Right, false)
	row := func(ws whatifSession) {
		rec := "n/a"
		if ws.RecordedUSD != nil {
			rec = usd2(*ws.RecordedUSD)
		}
		errCell := "n/a"
		if ws.ReplayErrorPct != nil {
			errCell = fmt.Sprintf("%+.1f%%", *ws.ReplayErrorPct)
		}
		cells := []string{ws.ID, rec, usd2(ws.ReplayUSD), errCell}
		byName := map[string]whatifPolicy{}
		for _, p := range ws.Policies {
			byName[p.Policy] = p
		}
		for _, sp := range specs {
			p, ok := byName[sp.Name]
			if !ok {
				cells = append(cells, "")
				continue
			}
			mark := ""
			if p.WithinError {
				mark = "~"
			}
			cells = append(cells, fmt.Sprintf("%s (%s%s)", usd2(p.CostUSD), mark, change(-p.SavingsPct)))
		}
		t.AddRow(append(cells, ws.Best)...)
	}
	for _, ws := range rep.Sessions {
		row(ws)
	}
	row(rep.Totals)
	t.Notes = append(t.Notes, "(+N%) is the change against the replay of what happened (recorded-observed: the re-sends the log shows included);",
		"error is that replay's own error against the bill; (~N%) marks a change the error could explain.")
	return t
}
