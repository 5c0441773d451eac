package report

import (
	"fmt"

	"github.com/ctxsim/ctxsim/results"
)

// FidelityWorstTable lists the worst sessions of the report, worst of them (0:
// all), with the cause each error is attributed to.
func FidelityWorstTable(rep results.FidelityReport, worst int) *Table {
	t := &Table{
		Title:   "Worst sessions (recorded replay against the bill)",
		Columns: []string{"session", "calls", "recorded $", "replay $", "error", "observed", "read match", "open loop", "cause"},
		Right:   []bool{false, true, true, true, true, true, true, true, false},
	}
	for i, s := range rep.Sessions {
		if worst > 0 && i == worst {
			break
		}
		t.AddRow(s.Trace, fmt.Sprint(s.Calls), FormatUSD(s.RecordedUSD, 2), FormatUSD(s.ReplayUSD, 2), fmt.Sprintf("%+.2f%%", s.ErrorPct),
			fmt.Sprintf("%+.2f%%", s.ObservedErrorPct), fmt.Sprintf("%.1f%%", s.ReadMatchPct), fmt.Sprintf("%.2f%%", s.OpenLoopMdAPE), s.Cause)
	}
	return t
}

// FidelitySummaryTable is the error distribution of both replays, with the read
// match, the open-loop error and the sessions skipped as notes.
func FidelitySummaryTable(rep results.FidelityReport) *Table {
	t := &Table{
		Title:   fmt.Sprintf("Fidelity over %d sessions", len(rep.Sessions)),
		Columns: []string{"replay", "recorded $", "replay $", "total error", "median |err|", "p90 |err|", "$-weighted", "within 2%", "within 5%"},
		Right:   []bool{false, true, true, true, true, true, true, true, true},
	}
	row := func(name string, s results.FidelityStats) {
		t.AddRow(name, FormatUSD(s.RecordedUSD, 2), FormatUSD(s.ReplayUSD, 2), fmt.Sprintf("%+.2f%%", s.TotalErrorPct), fmt.Sprintf("%.2f%%", s.MedianAbsPct),
			fmt.Sprintf("%.2f%%", s.P90AbsPct), fmt.Sprintf("%.2f%%", s.DollarWeightedPct), fmt.Sprintf("%.0f%%", 100*s.Within2Pct), fmt.Sprintf("%.0f%%", 100*s.Within5Pct))
	}
	row("recorded", rep.Recorded)
	row("observed", rep.Observed)
	for _, g := range rep.AsSent { // captures replayed as sent: exact requests
		t.AddRow(fmt.Sprintf("as-sent, capture %s (%d calls)", g.API, g.Calls), FormatUSD(g.RecordedUSD, 2), FormatUSD(g.ReplayUSD, 2),
			fmt.Sprintf("%+.2f%%", g.ErrorPct), "", "", "", "", "")
		note := fmt.Sprintf("as-sent, capture %s: %d of %d calls billed exactly, read match %.1f%% (%d read an entry written outside the capture",
			g.API, g.Exact, g.Calls, g.ReadMatchPct, g.Outside)
		if g.Cut > 0 {
			// What the capture tool cut is not known: say how much of the
			// figure rests on such requests.
			note += fmt.Sprintf("; %d cut short by the capture tool, %d of them exact", g.Cut, g.CutExact)
		}
		t.Notes = append(t.Notes, note+").")
	}
	t.Notes = append(t.Notes, fmt.Sprintf("call-weighted read match %.1f%%; open-loop prompt error, median over sessions %.2f%%.", rep.ReadMatchPct, rep.OpenLoopMdAPE))
	t.Notes = append(t.Notes, fmt.Sprintf("observed followed the bill on %d of %d calls: %d re-sends, %d reads past the TTL.", rep.ObservedResends+rep.ObservedKept, rep.ObservedCalls, rep.ObservedResends, rep.ObservedKept))
	for _, s := range rep.Skipped {
		t.Notes = append(t.Notes, "skipped: "+s)
	}
	return t
}

// FidelityGroupsTable is the distribution per log format, harness version
// range and model, where the report spans several: where the replay is
// weaker. Nil when there are no groups.
func FidelityGroupsTable(rep results.FidelityReport) *Table {
	if len(rep.Groups) == 0 {
		return nil
	}
	t := &Table{
		Title:   "By log format, version and model",
		Columns: []string{"group", "sessions", "recorded $", "observed error", "obs within 2%", "obs within 5%", "recorded error", "rec within 2%"},
		Right:   []bool{false, true, true, true, true, true, true, true},
	}
	for _, g := range rep.Groups {
		t.AddRow(g.By+": "+g.Name, fmt.Sprint(g.Sessions), FormatUSD(g.Recorded.RecordedUSD, 2),
			fmt.Sprintf("%+.2f%%", g.Observed.TotalErrorPct), fmt.Sprintf("%.0f%%", 100*g.Observed.Within2Pct), fmt.Sprintf("%.0f%%", 100*g.Observed.Within5Pct),
			fmt.Sprintf("%+.2f%%", g.Recorded.TotalErrorPct), fmt.Sprintf("%.0f%%", 100*g.Recorded.Within2Pct))
	}
	t.Notes = append(t.Notes, "observed: the replay that follows what the bill shows; recorded: the one that predicts each call without its bill.")
	return t
}
