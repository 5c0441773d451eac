package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

func init() {
	register(&command{
		name:    "run",
		summary: "replay one trace under one policy and print its summary",
		usage:   "--trace PATH --policy NAME [flags]",
		help: `Run replays one trace (a session and its subagents; or every session of a
recorded directory, as one tenant) under one policy and prints what it cost:
tokens and dollars by class, cache hit rate, occupancy, compactions and
latency. When the trace carries recorded usage (Claude Code, Codex logs) the
recorded figures and the simulation's error stand beside the simulated ones.

Examples:
  ctxsim run --trace testdata/claude-code/short.jsonl --policy recorded
  ctxsim run --trace testdata/claude-code --policy claude-code --json
  ctxsim run --trace trace.jsonl --policy hermes-micro --set compression.micro_compact_every_n_turns=5
  ctxsim run --trace trace.jsonl --policy my-policy.yaml --out out/`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var wf workloadFlags
			var sf simFlags
			var of outFlags
			fs.StringArrayVar(&wf.traces, "trace", nil, "trace file or directory: native, Claude Code, Codex or hermes state.db told apart by content (else --from)")
			fs.StringVar(&wf.from, "from", "", "force the format of --trace (native, claude-code, codex, hermes, chatlog)")
			sf.add(fs, "recorded for recorded traces, else hermes-default")
			of.add(fs)
			plots := fs.String("plots", "", "directory to write the figures to (SVG and PNG)")
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if len(wf.traces) != 1 {
					return usagef("want exactly one --trace")
				}
				if len(sf.policies) > 1 {
					return usagef("want one --policy (use compare for several)")
				}
				return runRun(e, &wf, &sf, &of, *plots)
			}
		},
	})
}

func runRun(e *env, wf *workloadFlags, sf *simFlags, of *outFlags, plots string) error {
	format, err := of.parse()
	if err != nil {
		return err
	}
	st, err := sf.setup(e)
	if err != nil {
		return err
	}
	sessions, warn, err := loadTraces(e, wf.traces, wf.from)
	if err != nil {
		return err
	}
	if warn.Len() > 0 {
		printWarnings(e, warn)
	}
	if len(sessions) == 0 {
		return fmt.Errorf("%s: no sessions", wf.traces[0])
	}
	for _, s := range sessions {
		s.Tenant = "run"
	}
	g := experiment.Tenants(sessions)[0]
	names := sf.policies
	if len(names) == 0 {
		names = []string{"hermes-default"}
		if g.HasRecorded() {
			names = []string{sim.RecordedName}
		}
	}
	specs, err := resolvePolicies(names, sf.sets)
	if err != nil {
		return err
	}
	st.Memo.Warm(sessions)
	cells, err := st.Cells([]experiment.Tenant{g}, specs)
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		return usagef("policy %s needs a trace with recorded usage", specs[0].Name)
	}
	var runs []report.RunSummary
	var recs []sim.Record
	if err := runCells(e, st, cells, 1, nil, func(c *experiment.Cell) {
		runs, recs = c.Result.Runs, c.Result.Records
	}); err != nil {
		return err
	}
	if err := writeOutputs(of.out, plots, runs, recs, st, "ctxsim run"); err != nil {
		return err
	}
	if format == report.JSON {
		return report.WriteResults(e.stdout, report.Results{Runs: runs})
	}
	for _, r := range runs {
		if err := runTable(r).Write(e.stdout, format); err != nil {
			return err
		}
		if format == report.Text || format == report.Markdown {
			writeRunFacts(e.stdout, r)
		}
	}
	return nil
}

// runTable is one run's bill by token class, simulated beside recorded.
func runTable(r report.RunSummary) *report.Table {
	t := &report.Table{
		Title:   fmt.Sprintf("%s under %s: %d requests", r.Trace, r.Policy, r.Requests),
		Columns: []string{"class", "tokens", "cost $"},
		Right:   []bool{false, true, true},
	}
	if r.Recorded != nil {
		t.Columns = append(t.Columns, "recorded tokens", "recorded $", "error %")
		t.Right = append(t.Right, true, true, true)
	}
	c := r.CostByClass
	type row struct {
		name     string
		sim, rec int64
		cost     float64
	}
	var rec traces.Usage
	if r.Recorded != nil {
		rec = r.Recorded.Tokens
	}
	rows := []row{
		{"input", r.Tokens.Input, rec.Input, c.Input},
		{"cache write 5m", r.Tokens.CacheWrite5m, rec.CacheWrite5m, c.CacheWrite5m},
		{"cache write 1h", r.Tokens.CacheWrite1h, rec.CacheWrite1h, c.CacheWrite1h},
		{"cache read", r.Tokens.CacheRead, rec.CacheRead, c.CacheRead},
		{"output", r.Tokens.Output, rec.Output, c.Output},
	}
	for _, x := range rows {
		cells := []string{x.name, thousands(x.sim), usd4(x.cost)}
		if r.Recorded != nil {
			cells = append(cells, thousands(x.rec), "", errPct(float64(x.sim), float64(x.rec)))
		}
		t.AddRow(cells...)
	}
	if c.Summarizer > 0 {
		cells := []string{"summarizer", thousands(r.SummarizerTokens.Prompt() + r.SummarizerTokens.Output), usd4(c.Summarizer)}
		if r.Recorded != nil {
			cells = append(cells, "", "", "")
		}
		t.AddRow(cells...)
	}
	total := []string{"total", thousands(r.Tokens.Prompt() + r.Tokens.Output), usd4(r.CostUSD + r.SummarizerCostUSD)}
	if r.Recorded != nil {
		total = append(total, thousands(rec.Prompt()+rec.Output), usd4(r.Recorded.CostUSD), signedPct(r.Error.CostPct))
	}
	t.AddRow(total...)
	return t
}

func writeRunFacts(w io.Writer, r report.RunSummary) {
	fmt.Fprintf(w, "\ncache hit rate   %s%% of prompt tokens, %s%% of requests", pct1(r.CacheHitRate), pct1(r.RequestHitRate))
	if r.Recorded != nil {
		fmt.Fprintf(w, " (recorded %s%%)", pct1(r.Recorded.CacheHitRate))
	}
	fmt.Fprintf(w, "\nlost to misses   $%s\n", usd4(r.MissCostUSD))
	if len(r.Misses) > 0 {
		var parts []string
		for _, m := range r.Misses {
			parts = append(parts, fmt.Sprintf("%s %d× (%s tokens, $%s)", m.Reason, m.Calls, thousands(m.Tokens), usd4(m.CostUSD)))
		}
		fmt.Fprintf(w, "cache broken by  %s\n", strings.Join(parts, "; "))
	}
	fmt.Fprintf(w, "occupancy        mean %s%%, max %s%%, final %s%% of the threshold\n", pct1(r.Occupancy.Mean), pct1(r.Occupancy.Max), pct1(r.Occupancy.Final))
	cp := r.Compactions
	fmt.Fprintf(w, "compactions      %d batch, %d micro, %d prune, %d idle, %d masking; %d breaker trips, %d overflow errors\n",
		cp.Batch, cp.Micro, cp.Prune, cp.Idle, cp.Masking, r.BreakerTrips, r.OverflowErrors)
	if r.UserMessagesVerbatim != nil {
		fmt.Fprintf(w, "user messages    %s%% still verbatim at the end\n", pct1(*r.UserMessagesVerbatim))
	}
	fmt.Fprintf(w, "turn latency     p50 %s, p95 %s, max %s; stalled %s on compaction\n",
		ms(r.LatencyMS.P50), ms(r.LatencyMS.P95), ms(r.LatencyMS.Max), ms(r.StallMS))
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wmsg)
	}
}

func usd4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func errPct(sim, rec float64) string {
	if rec == 0 {
		if sim == 0 {
			return "0.0"
		}
		return "n/a"
	}
	return signedPct(100 * (sim - rec) / rec)
}

func signedPct(v float64) string { return fmt.Sprintf("%+.1f", v) }

func ms(v int64) string {
	if v >= 10_000 {
		return strconv.FormatFloat(float64(v)/1000, 'f', 1, 64) + " s"
	}
	return strconv.FormatInt(v, 10) + " ms"
}
