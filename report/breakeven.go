package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results"
)

// WriteBreakeven renders the report: JSON, or the tiers table and, with sessions,
// the sessions table (CSV holds one table: the sessions when there are any).
func WriteBreakeven(w io.Writer, f Format, rep *results.BreakevenReport) error {
	if f == JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tiers := &Table{
		Title:   fmt.Sprintf("Cache break-even, %s (input $%s/MTok)", rep.Model, strconv.FormatFloat(rep.Price.Input, 'f', -1, 64)),
		Columns: []string{"tier", "write ×", "read ×", "break-even sends", "reuses", "cheaper from"},
		Right:   []bool{false, true, true, true, true, true},
	}
	for _, b := range rep.Tiers {
		if !b.Pays {
			tiers.AddRow(b.TTL, fx(b.WriteMultiple), fx(b.ReadMultiple), "never", "never", "never")
			continue
		}
		tiers.AddRow(b.TTL, fx(b.WriteMultiple), fx(b.ReadMultiple), fx(b.Uses), fx(b.Reuses), strconv.Itoa(b.MinUses)+" sends")
	}
	tiers.Notes = append(tiers.Notes, "A send is one request carrying the prefix; the first one writes it.")
	if g := rep.GapMix; g != nil {
		tiers.Notes = append(tiers.Notes, fmt.Sprintf("5m vs 1h: with %s new tokens per call and %s of gaps over an hour, 1h is cheaper when more than %s of gaps fall in (5 min, 1 h].",
			percent(g.Growth), percent(g.Long), percent(g.MidBreakeven)))
	}
	// CSV holds one table: the sessions when there are any.
	if f != CSV || len(rep.Sessions) == 0 {
		if err := tiers.Write(w, f); err != nil {
			return err
		}
	}
	if len(rep.Sessions) == 0 {
		return nil
	}
	if f != CSV {
		fmt.Fprintln(w)
	}
	st := &Table{
		Title:   "Sessions replayed under an all-5m and an all-1h cache",
		Columns: []string{"session", "model", "calls", "gaps ≤5m", "5m–1h", ">1h", "1h pays above", "5m $", "1h $", "verdict"},
		Right:   []bool{false, false, true, true, true, true, true, true, true, false},
	}
	for _, s := range rep.Sessions {
		short, mid, long, above := percent(s.Mix.Short), percent(s.Mix.Mid), percent(s.Mix.Long), percent(s.MidBreakeven)
		if s.Mix.Gaps == 0 {
			short, mid, long, above = "-", "-", "-", "-"
		}
		st.AddRow(s.ID, s.Model, strconv.Itoa(s.Calls), short, mid, long, above, usd4(s.Cost5m), usd4(s.Cost1h), s.Verdict)
	}
	t := rep.Totals
	st.AddRow("total", "", strconv.Itoa(t.Calls), percent(t.Mix.Short), percent(t.Mix.Mid), percent(t.Mix.Long), "", usd4(t.Cost5m), usd4(t.Cost1h), t.Verdict)
	if rep.Replayed {
		st.Notes = append(st.Notes, "Each session replayed as whatif's ttl-5m and ttl-1h variants (with its subagents, output included): the verdict is whatif's.")
	} else {
		st.Notes = append(st.Notes, "Prompt cost only (output is the same under both tiers). Each call caches its whole prompt; the next call reads it back if it comes within the TTL.")
	}
	if err := st.Write(w, f); err != nil || len(rep.Gaps) == 0 || f == CSV {
		return err
	}
	fmt.Fprintln(w)
	gt := &Table{
		Title:   "Idle gaps over 5 minutes: what the hindsight schedule chose (replay of the recorded policy)",
		Columns: []string{"session", "after the gap", "idle min", "choice", "read", "policy read"},
		Right:   []bool{false, false, true, false, true, true},
	}
	n := map[string]int{}
	for _, g := range rep.Gaps {
		gt.AddRow(g.Session, g.At, strconv.FormatFloat(g.IdleMin, 'f', 1, 64), g.Choice, Thousands(g.Read), Thousands(g.PolicyRead))
		n[g.Choice]++
	}
	gt.Notes = append(gt.Notes, fmt.Sprintf("1h: the optimum kept the prefix across the gap with a 1h entry (%d); none: it let it expire and paid again (%d). read: tokens the call after the gap read, under the optimum and under the recorded schedule.", n["1h"], n["none"]))
	return gt.Write(w, f)
}

func fx(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// BreakevenFigures are the break-even figure of p and, when it has a 1h
// tier, the idle-gap cost figure for growth.
func BreakevenFigures(p pricing.Price, growth float64) ([]Figure, error) {
	be, err := BreakevenFigure(p, 6)
	if err != nil {
		return nil, err
	}
	figs := []Figure{be}
	if p.CacheWrite1h > 0 {
		gap, err := GapCostFigure(p, growth, 90*time.Minute)
		if err != nil {
			return nil, err
		}
		figs = append(figs, gap)
	}
	return figs, nil
}

// WriteBreakevenFigures writes BreakevenFigures to dir (WriteFigures).
func WriteBreakevenFigures(dir string, p pricing.Price, growth float64) error {
	figs, err := BreakevenFigures(p, growth)
	if err != nil {
		return err
	}
	return WriteFigures(dir, figs)
}
