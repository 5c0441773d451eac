package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/traces"
)

func init() {
	register(&command{
		name:    "run",
		summary: "replay one trace under one policy and print its summary",
		usage:   "PATH [--policy NAME] [flags]",
		help: `Run replays one trace (a session and its subagents; or every session of a
recorded directory, as one tenant) under one policy and prints what it cost:
tokens and dollars by class, cache hit rate, occupancy, compactions and
latency. When the trace carries recorded usage (Claude Code, Codex logs) the
recorded figures and the simulation's error stand beside the simulated ones.

Examples:
  ctxsim run testdata/claude-code/short.jsonl --policy recorded
  ctxsim run testdata/claude-code --policy claude-code --json
  ctxsim run trace.jsonl --policy hermes-micro --set compression.micro_compact_every_n_turns=5
  ctxsim run --trace trace.jsonl --policy my-policy.yaml --out out/
  ctxsim run testdata/claude-code/tool_heavy.jsonl --hindsight`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var wf workloadFlags
			var sf simFlags
			var of outFlags
			fs.StringArrayVar(&wf.traces, "trace", nil, "trace file or directory: native, Claude Code, Codex or hermes state.db told apart by content (else --from)")
			fs.StringVar(&wf.from, "from", "", "force the format of --trace (native, claude-code, codex, hermes, chatlog)")
			sf.add(fs, "recorded for recorded traces, else hermes-default")
			fs.Lookup("policy").Usage = "the policy: a preset (see ctxsim policies), \"recorded\", or a .yaml/.json config; one (compare takes several)"
			of.add(fs)
			plots := fs.String("plots", "", "directory to write the figures to (SVG and PNG)")
			hs := fs.Bool("hindsight", false, "print, call by call, the breakpoints and TTLs of the cheapest cache schedule of the run's requests beside the policy's, marking where they differ")
			return func(e *env, args []string) error {
				wf.traces = append(wf.traces, args...) // PATH and --trace PATH are one list
				if len(wf.traces) != 1 {
					return usagef("want exactly one trace (PATH or --trace PATH)")
				}
				if len(sf.policies) > 1 {
					return usagef("want one --policy (use compare for several)")
				}
				if *hs && sf.noHindsight {
					return usagef("--hindsight needs the hindsight optimum: drop --no-hindsight")
				}
				return runRun(e, &wf, &sf, &of, *plots, *hs)
			}
		},
	})
}

func runRun(e *env, wf *workloadFlags, sf *simFlags, of *outFlags, plots string, showHS bool) error {
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
		return noSessions(e, "%s: no sessions", wf.traces[0])
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
	var res *experiment.Result
	if err := runCells(e, st, cells, 1, nil, func(c *experiment.Cell) {
		runs, recs, res = c.Result.Runs, c.Result.Records, c.Result
	}); err != nil {
		return err
	}
	out := &results{title: "ctxsim run", seed: st.Seed, runs: runs, recs: recs, labels: labels(cells), price: firstPrice(st, recs), warnings: e.warn.List()}
	if err := out.write(of.out, plots); err != nil {
		return err
	}
	var sched []scheduleCall
	if showHS {
		if res.Hindsight == nil {
			return fmt.Errorf("--hindsight: the provider (%s) is not Anthropic's, or --clear-tool-uses is on: the caller chooses no cache schedule", st.ProviderFor(g))
		}
		sched = schedule(res.Tape, res.Hindsight)
	}
	if format == report.JSON {
		res := report.Results{Runs: runs, Warnings: e.warn.List()}
		if showHS {
			return writeJSON(e.stdout, struct {
				report.Results
				Hindsight []scheduleCall `json:"hindsight_schedule"`
			}{res, sched})
		}
		return report.WriteResults(e.stdout, res)
	}
	for _, r := range runs {
		if err := report.RunBill(r).Write(e.stdout, format); err != nil {
			return err
		}
		if format == report.Text || format == report.Markdown {
			report.WriteRunFacts(e.stdout, r)
		}
	}
	if showHS {
		if format == report.Text || format == report.Markdown {
			fmt.Fprintln(e.stdout)
		}
		return scheduleTable(sched, res.Hindsight).Write(e.stdout, format)
	}
	return nil
}

// A scheduleCall is one request of a run: the policy's breakpoints and
// the hindsight optimum's, and what each billed.
type scheduleCall struct {
	Call      int     `json:"call"`
	Time      string  `json:"t"`
	Session   string  `json:"session"`
	Prompt    int     `json:"prompt"`
	Policy    string  `json:"policy_breakpoints"`
	Hindsight string  `json:"hindsight_breakpoints"`
	Differs   bool    `json:"differs"`
	PolicyUSD float64 `json:"policy_usd"`
	BestUSD   float64 `json:"hindsight_usd"`
	Fixed     bool    `json:"fixed,omitempty"`
}

func schedule(calls []hindsight.Call, h *hindsight.Result) []scheduleCall {
	out := make([]scheduleCall, len(calls))
	for i := range calls {
		c := &calls[i]
		pol, best := marks(c, c.Policy, h.PolicyUsage[i]), marks(c, h.Schedule[i], h.Usage[i])
		out[i] = scheduleCall{Call: i + 1, Time: c.Time.UTC().Format("15:04:05.000"), Session: c.Key, Prompt: c.Total,
			Policy: pol, Hindsight: best, Differs: pol != best, PolicyUSD: report.Round6(h.PolicyCost[i]), BestUSD: report.Round6(h.Cost[i]), Fixed: c.Fixed}
	}
	return out
}

// marks renders breakpoints as "block@tokens ttl", block-ordered; a
// breakpoint within what the call read shows "read" (its TTL wrote
// nothing).
func marks(c *hindsight.Call, bps []prompt.Breakpoint, u traces.Usage) string {
	if len(bps) == 0 {
		return "-"
	}
	parts := make([]string, len(bps))
	for i, bp := range bps {
		end := c.Blocks[bp.Block].End
		what := bp.TTL.String()
		if int64(end) <= u.CacheRead {
			what = "read"
		}
		parts[i] = fmt.Sprintf("%d@%s %s", bp.Block, report.Thousands(int64(end)), what)
	}
	return strings.Join(parts, ", ")
}

func scheduleTable(sched []scheduleCall, h *hindsight.Result) *report.Table {
	t := &report.Table{
		Title:   fmt.Sprintf("Cache schedule, call by call: the policy's ($%s) and the hindsight optimum's ($%s)", report.FormatUSD(h.PolicyUSD, 4), report.FormatUSD(h.CostUSD, 4)),
		Columns: []string{"call", "time", "session", "prompt", "policy breakpoints", "hindsight breakpoints", "", "policy $", "hindsight $"},
		Right:   []bool{true, false, false, true, false, false, false, true, true},
	}
	differ := 0
	for _, c := range sched {
		mark := ""
		if c.Differs {
			mark = "≠"
			differ++
		}
		if c.Fixed {
			mark = "fixed"
		}
		t.AddRow(strconv.Itoa(c.Call), c.Time, c.Session, report.Thousands(int64(c.Prompt)), c.Policy, c.Hindsight, mark, report.FormatUSD(c.PolicyUSD, 4), report.FormatUSD(c.BestUSD, 4))
	}
	t.Notes = append(t.Notes, fmt.Sprintf("≠: %d of %d calls where the optimum marks differently. A mark is block@tokens through it and the TTL it wrote with, or \"read\" when the call read through it; fixed: a prewarm, as sent and not billed to the run.", differ, len(sched)))
	if h.Exact {
		t.Notes = append(t.Notes, "The optimum is proven: it meets the lower bound (docs/metrics.md).")
	} else {
		t.Notes = append(t.Notes, fmt.Sprintf("Not proven optimal: the lower bound is $%s (gap $%s).", report.FormatUSD(h.BoundUSD, 4), report.FormatUSD(h.GapUSD(), 4)))
	}
	return t
}
