package main

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
)

func init() {
	register(&command{
		name:    "fidelity",
		summary: "how closely the replay reproduces real bills: the error distribution over every session found",
		usage:   "PATH... [flags]",
		help: `Fidelity replays every recorded session it finds (Claude Code logs, Codex
rollouts, native traces with usage) with the recorded policy and prints what
a user needs before trusting a what-if on those logs: recorded and replayed
totals, the total error, the median, p90 and dollar-weighted |error|, the
share of sessions within ±2 % and ±5 %, the call-weighted share of calls
whose cache read matches the bill, the open-loop prompt error, and the worst
sessions with the cause each error is attributed to.

Two replays are reported. "recorded" never reads the billed usage of the
call it predicts (the headline). "observed" (the recorded-observed policy)
also honours the re-sends the log shows but cannot explain (a billed read
that collapses to an earlier breakpoint inside the TTL); it is the baseline
ctxsim whatif prices counterfactuals against.

A session that cannot be replayed is reported and skipped; the others go on
(exit 1 when any was skipped).

Examples:
  ctxsim fidelity testdata/claude-code
  ctxsim fidelity ~/.claude/projects --worst 20
  ctxsim fidelity testdata/claude-code --json`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var sf simFlags
			var of formatFlags
			from := fs.String("from", "", "force the log format (native, claude-code, codex, hermes, chatlog)")
			worst := fs.Int("worst", 10, "how many of the worst sessions to list (0: all)")
			fs.StringVar(&sf.prices, "prices", "", "LiteLLM price file to override or extend the rate card")
			fs.IntVarP(&sf.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "parallel replays; output is identical for any value")
			sf.provider, sf.seed = "auto", 1
			of.add(fs, "print the report as JSON")
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH (a log file or directory)")
				}
				if *worst < 0 {
					return usagef("--worst %d: want 0 or more", *worst)
				}
				return runFidelity(e, args, *from, *worst, &sf, &of)
			}
		},
	})
}

func runFidelity(e *env, paths []string, from string, worst int, sf *simFlags, of *formatFlags) error {
	format, err := of.parse()
	if err != nil {
		return err
	}
	st, err := sf.setup(e)
	if err != nil {
		return err
	}
	sessions, warn, err := loadTraces(e, paths, from)
	if err != nil {
		return err
	}
	if warn.Len() > 0 {
		printWarnings(e, warn)
	}
	// Each session (with its subagents) is its own account here: a
	// directory of logs from many people must not share one cache.
	for _, s := range sessions {
		s.Tenant = ""
	}
	st.Memo.Warm(sessions)
	tenants := experiment.Tenants(sessions)
	var recorded []experiment.Tenant
	for _, t := range tenants {
		if t.HasRecorded() {
			recorded = append(recorded, t)
		}
	}
	if len(recorded) == 0 {
		return fmt.Errorf("no session under %s carries recorded usage", strings.Join(paths, ", "))
	}
	cells, err := st.Cells(recorded, []experiment.Spec{experiment.Recorded(), experiment.RecordedObserved()})
	if err != nil {
		return err
	}
	var rec, obs []report.RunSummary
	cellErr := runCells(e, st, cells, sf.jobs, nil, func(c *experiment.Cell) {
		if c.Spec.Name == experiment.RecordedObserved().Name {
			obs = append(obs, c.Result.Runs...)
		} else {
			rec = append(rec, c.Result.Runs...)
		}
	})
	var failed *cellsFailed
	if cellErr != nil && !errors.As(cellErr, &failed) {
		return cellErr
	}
	rep := report.NewFidelityReport(rec, obs)
	for _, c := range cells {
		if c.Err != nil && c.Spec.Name == experiment.Recorded().Name {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", c.Tenant.Key, c.Err))
		}
	}
	if format == report.JSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
		return cellErr
	}
	if err := fidelityTable(rep, worst).Write(e.stdout, format); err != nil {
		return err
	}
	if err := fidelitySummary(rep).Write(e.stdout, format); err != nil {
		return err
	}
	return cellErr
}

func fidelityTable(rep report.FidelityReport, worst int) *report.Table {
	t := &report.Table{
		Title:   "Worst sessions (recorded replay against the bill)",
		Columns: []string{"session", "calls", "recorded $", "replay $", "error", "observed", "read match", "open loop", "cause"},
		Right:   []bool{false, true, true, true, true, true, true, true, false},
	}
	for i, s := range rep.Sessions {
		if worst > 0 && i == worst {
			break
		}
		t.AddRow(s.Trace, fmt.Sprint(s.Calls), report.FormatUSD(s.RecordedUSD, 2), report.FormatUSD(s.ReplayUSD, 2), fmt.Sprintf("%+.2f%%", s.ErrorPct),
			fmt.Sprintf("%+.2f%%", s.ObservedErrorPct), fmt.Sprintf("%.1f%%", s.ReadMatchPct), fmt.Sprintf("%.2f%%", s.OpenLoopMdAPE), s.Cause)
	}
	return t
}

func fidelitySummary(rep report.FidelityReport) *report.Table {
	t := &report.Table{
		Title:   fmt.Sprintf("Fidelity over %d sessions", len(rep.Sessions)),
		Columns: []string{"replay", "recorded $", "replay $", "total error", "median |err|", "p90 |err|", "$-weighted", "within 2%", "within 5%"},
		Right:   []bool{false, true, true, true, true, true, true, true, true},
	}
	row := func(name string, s report.FidelityStats) {
		t.AddRow(name, report.FormatUSD(s.RecordedUSD, 2), report.FormatUSD(s.ReplayUSD, 2), fmt.Sprintf("%+.2f%%", s.TotalErrorPct), fmt.Sprintf("%.2f%%", s.MedianAbsPct),
			fmt.Sprintf("%.2f%%", s.P90AbsPct), fmt.Sprintf("%.2f%%", s.DollarWeightedPct), fmt.Sprintf("%.0f%%", 100*s.Within2Pct), fmt.Sprintf("%.0f%%", 100*s.Within5Pct))
	}
	row("recorded", rep.Recorded)
	row("observed", rep.Observed)
	t.Notes = append(t.Notes, fmt.Sprintf("call-weighted read match %.1f%%; open-loop prompt error, median over sessions %.2f%%.", rep.ReadMatchPct, rep.OpenLoopMdAPE))
	for _, s := range rep.Skipped {
		t.Notes = append(t.Notes, "skipped: "+s)
	}
	return t
}
