package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/traces"
)

// A ScheduleCall is one request of a run (ctxsim run --hindsight): the
// policy's breakpoints and the hindsight optimum's, and what each billed.
type ScheduleCall struct {
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

// Schedule sets the hindsight optimum h of calls beside the policy's
// schedule, call by call.
func Schedule(calls []hindsight.Call, h *hindsight.Result) []ScheduleCall {
	out := make([]ScheduleCall, len(calls))
	for i := range calls {
		c := &calls[i]
		pol, best := marks(c, c.Policy, h.PolicyUsage[i]), marks(c, h.Schedule[i], h.Usage[i])
		out[i] = ScheduleCall{Call: i + 1, Time: c.Time.UTC().Format("15:04:05.000"), Session: c.Key, Prompt: c.Total,
			Policy: pol, Hindsight: best, Differs: pol != best, PolicyUSD: results.Round6(h.PolicyCost[i]), BestUSD: results.Round6(h.Cost[i]), Fixed: c.Fixed}
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
		parts[i] = fmt.Sprintf("%d@%s %s", bp.Block, Thousands(int64(end)), what)
	}
	return strings.Join(parts, ", ")
}

// ScheduleTable prints a Schedule, marking where the optimum differs.
func ScheduleTable(sched []ScheduleCall, h *hindsight.Result) *Table {
	t := &Table{
		Title:   fmt.Sprintf("Cache schedule, call by call: the policy's ($%s) and the hindsight optimum's ($%s)", FormatUSD(h.PolicyUSD, 4), FormatUSD(h.CostUSD, 4)),
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
		t.AddRow(strconv.Itoa(c.Call), c.Time, c.Session, Thousands(int64(c.Prompt)), c.Policy, c.Hindsight, mark, FormatUSD(c.PolicyUSD, 4), FormatUSD(c.BestUSD, 4))
	}
	t.Notes = append(t.Notes, fmt.Sprintf("≠: %d of %d calls where the optimum marks differently. A mark is block@tokens through it and the TTL it wrote with, or \"read\" when the call read through it; fixed: a prewarm, as sent and not billed to the run.", differ, len(sched)))
	if h.Exact {
		t.Notes = append(t.Notes, "The optimum is proven: it meets the lower bound (docs/metrics.md).")
	} else {
		t.Notes = append(t.Notes, fmt.Sprintf("Not proven optimal: the lower bound is $%s (gap $%s).", FormatUSD(h.BoundUSD, 4), FormatUSD(h.GapUSD(), 4)))
	}
	return t
}

// WriteRun prints ctxsim run's result in f: each run's bill and facts
// (JSON: the results), and, with h set, the schedule of calls beside the
// hindsight optimum h (Schedule, ScheduleTable).
func WriteRun(w io.Writer, f Format, runs []results.RunSummary, warnings []traces.Warning, calls []hindsight.Call, h *hindsight.Result) error {
	var sched []ScheduleCall
	if h != nil {
		sched = Schedule(calls, h)
	}
	if f == JSON {
		res := results.Summary{Runs: runs, Warnings: warnings}
		if h != nil {
			return WriteJSON(w, struct {
				results.Summary
				Hindsight []ScheduleCall `json:"hindsight_schedule"`
			}{res, sched})
		}
		return WriteSummary(w, res)
	}
	for _, r := range runs {
		if err := RunBill(r).Write(w, f); err != nil {
			return err
		}
		if f == Text || f == Markdown {
			WriteRunFacts(w, r)
		}
	}
	if h != nil {
		if f == Text || f == Markdown {
			fmt.Fprintln(w)
		}
		return ScheduleTable(sched, h).Write(w, f)
	}
	return nil
}
