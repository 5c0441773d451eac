package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
)

func init() {
	register(&command{
		name:    "breakeven",
		summary: "cache break-even figures and curves; would 1h have paid for my sessions?",
		usage:   "[flags] [PATH...]",
		help: `Breakeven answers two questions about prompt caching.

How many sends of a prefix pay for its cache write? Sending a prefix n
times costs n×input uncached, and write + (n−1)×read cached (rates in
multiples of the input rate). They break even at

  n* = (write − read) ÷ (1 − read)

sends, the writing one included: 1.28 for the 5m tier and 2.11 for the 1h
tier at Anthropic's 1.25× / 2× / 0.1×. So one reuse pays for a 5m write and
two pay for a 1h write.

When is the 1h tier cheaper than 5m? A gap of (5 min, 1 h] between calls
costs the 5m tier a rewrite that the 1h tier reads; every write costs the
1h tier its premium. With a share "long" of gaps over an hour and "growth"
new tokens per call (as a share of the prompt), 1h wins when the share of
gaps in (5 min, 1 h] exceeds

  (long + growth) × (w1h − w5m) ÷ (w5m − read)

Given recorded sessions (PATH: Claude Code logs or native traces, a file or
a directory), breakeven replays each one's call times and prompt sizes under
an all-5m and an all-1h cache and says which would have been cheaper and by
how much. The replay caches each whole prompt and reads it back on the next
call within the TTL; see docs/metrics.md for what it leaves out. With
--format csv and sessions, only the sessions table is written.

Examples:
  ctxsim breakeven
  ctxsim breakeven --model claude-opus-4-6 --json
  ctxsim breakeven --growth 0.02 --long 0.1
  ctxsim breakeven ~/.claude/projects
  ctxsim breakeven --plot figs/ --format markdown testdata/claude-code`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			model := fs.String("model", "claude-opus-4-6", "model whose rate card the break-even figures use")
			prices := fs.String("prices", "", "LiteLLM model_prices_and_context_window.json to override or extend the rate card")
			from := fs.String("from", "", "input format of PATHs: native or a registered importer (default: detect)")
			growth := fs.Float64("growth", 0.05, "new prompt tokens per call, as a share of the prompt, for the gap-mix threshold")
			long := fs.Float64("long", 0, "share of gaps over an hour, for the gap-mix threshold")
			plotDir := fs.String("plot", "", "write the break-even and idle-gap figures (SVG, PNG and data) to `DIR`")
			var format formatFlags
			format.add(fs, "same as --format json")
			return func(e *env, args []string) error {
				f, err := format.parse()
				if err != nil {
					return err
				}
				if *growth < 0 || *long < 0 || *long > 1 {
					return usagef("--growth must be ≥ 0 and --long in [0,1]")
				}
				card, err := loadCard(*prices)
				if err != nil {
					return err
				}
				p, err := card.Lookup(*model)
				if err != nil {
					return usagef("--model: %v", err)
				}
				rep, err := newBreakevenReport(p, *growth, *long)
				if err != nil {
					return err
				}
				if len(args) > 0 {
					sessions, ws, err := loadTraces(e, args, *from)
					if err != nil {
						return err
					}
					if f != report.JSON {
						printWarnings(e, ws)
					}
					rep.Warnings = ws.List()
					if err := rep.addSessions(sessions, card, p); err != nil {
						return err
					}
				}
				if *plotDir != "" {
					if err := writeBreakevenPlots(*plotDir, p, *growth); err != nil {
						return err
					}
				}
				return rep.write(e.stdout, f)
			}
		},
	})
}

type breakevenReport struct {
	Model    string              `json:"model"`
	Price    pricing.Price       `json:"price"`
	Tiers    []pricing.Breakeven `json:"tiers"`
	GapMix   *gapMixThreshold    `json:"gap_mix,omitempty"`
	Sessions []sessionVerdict    `json:"sessions,omitempty"`
	Totals   *verdictTotals      `json:"totals,omitempty"`
	Warnings []traces.Warning    `json:"warnings,omitempty"`
}

type gapMixThreshold struct {
	Growth float64 `json:"growth"`
	Long   float64 `json:"long"`
	// MidBreakeven is the share of gaps in (5 min, 1 h] above which 1h is
	// cheaper.
	MidBreakeven float64 `json:"mid_breakeven"`
}

type sessionVerdict struct {
	ID    string `json:"id"`
	Model string `json:"model"`
	pricing.TTLVerdict
	Verdict string `json:"verdict"`
}

type verdictTotals struct {
	Sessions  int            `json:"sessions"`
	Calls     int            `json:"calls"`
	Mix       pricing.GapMix `json:"gaps"`
	Cost5m    float64        `json:"cost_5m_usd"`
	Cost1h    float64        `json:"cost_1h_usd"`
	Savings1h float64        `json:"savings_1h_usd"`
	Verdict   string         `json:"verdict"`
}

func newBreakevenReport(p pricing.Price, growth, long float64) (*breakevenReport, error) {
	tiers, err := pricing.Breakevens(p)
	if err != nil {
		return nil, err
	}
	rep := &breakevenReport{Model: p.Model, Price: p, Tiers: tiers}
	if mid, ok := pricing.MidBreakeven(p, long, growth); ok {
		rep.GapMix = &gapMixThreshold{Growth: growth, Long: long, MidBreakeven: mid}
	}
	return rep, nil
}

// addSessions replays every session with recorded calls at its own model's
// price (def when the session names none).
func (rep *breakevenReport) addSessions(ss []*traces.Session, card *pricing.Card, def pricing.Price) error {
	tot := &verdictTotals{}
	var gaps []time.Duration
	for _, s := range ss {
		var calls []pricing.CallPoint
		model := s.Model
		for _, ev := range s.Events {
			if ev.Kind != traces.Assistant || ev.Usage == nil {
				continue
			}
			if model == "" {
				model = ev.Model
			}
			calls = append(calls, pricing.CallPoint{Time: ev.Time, Prompt: ev.Usage.Prompt()})
		}
		if len(calls) == 0 {
			continue
		}
		p := def
		if model != "" {
			var err error
			if p, err = card.Lookup(model); err != nil {
				return fmt.Errorf("session %s: %w", s.ID, err)
			}
		}
		v, err := pricing.ReplayTTL(p, calls)
		if err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		rep.Sessions = append(rep.Sessions, sessionVerdict{ID: s.ID, Model: p.Model, TTLVerdict: v, Verdict: verdict(v.Savings1h)})
		for i := 1; i < len(calls); i++ {
			gaps = append(gaps, calls[i].Time.Sub(calls[i-1].Time))
		}
		tot.Sessions++
		tot.Calls += v.Calls
		tot.Cost5m += v.Cost5m
		tot.Cost1h += v.Cost1h
	}
	if tot.Sessions == 0 {
		return nil
	}
	tot.Mix = pricing.MixOf(gaps)
	tot.Savings1h = tot.Cost5m - tot.Cost1h
	tot.Verdict = verdict(tot.Savings1h)
	rep.Totals = tot
	return nil
}

func verdict(savings1h float64) string {
	switch {
	case savings1h > 0.005:
		return fmt.Sprintf("1h would have saved $%.2f", savings1h)
	case savings1h < -0.005:
		return fmt.Sprintf("5m was cheaper by $%.2f", -savings1h)
	}
	return "no difference"
}

func (rep *breakevenReport) write(w io.Writer, f report.Format) error {
	if f == report.JSON {
		return writeJSON(w, rep)
	}
	tiers := &report.Table{
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
	if f != report.CSV || len(rep.Sessions) == 0 {
		if err := tiers.Write(w, f); err != nil {
			return err
		}
	}
	if len(rep.Sessions) == 0 {
		return nil
	}
	if f != report.CSV {
		fmt.Fprintln(w)
	}
	st := &report.Table{
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
	st.Notes = append(st.Notes, "Prompt cost only (output is the same under both tiers). Each call caches its whole prompt; the next call reads it back if it comes within the TTL.")
	return st.Write(w, f)
}

func fx(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// writeBreakevenPlots writes the break-even and idle-gap figures of p to
// dir as SVG, PNG and their data.
func writeBreakevenPlots(dir string, p pricing.Price, growth float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	be, err := report.BreakevenFigure(p, 6)
	if err != nil {
		return err
	}
	figs := []report.Figure{be}
	if p.CacheWrite1h > 0 {
		gap, err := report.GapCostFigure(p, growth, 90*time.Minute)
		if err != nil {
			return err
		}
		figs = append(figs, gap)
	}
	return writeFigures(dir, figs)
}

// writeFigures saves each figure as NAME.svg, NAME.png and NAME.txt (its
// data) in dir, each atomically.
func writeFigures(dir string, figs []report.Figure) error {
	for _, fig := range figs {
		for _, ext := range []string{"svg", "png"} {
			path := filepath.Join(dir, fig.Name+"."+ext)
			if err := report.WriteFileAtomic(path, func(w io.Writer) error { return fig.Render(w, ext) }); err != nil {
				return err
			}
		}
		if err := report.WriteFileAtomic(filepath.Join(dir, fig.Name+".txt"), fig.WriteData); err != nil {
			return err
		}
	}
	return nil
}
