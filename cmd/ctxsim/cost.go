package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/traces/hermes"
)

func init() {
	register(&command{
		name:    "cost",
		summary: "what recorded sessions actually cost",
		usage:   "[flags] PATH...",
		help: `Cost reads recorded sessions and prices the usage their provider billed:
per session and in total, the requests, input, 5m and 1h cache writes,
cache reads and output tokens, the cost in USD and the token-weighted cache
hit rate, read ÷ (input + writes + read). Each call is priced at its own
model's rate, so mixed-model sessions come out right. Subagent sessions are
counted once, listed (indented) under their parent.

PATH is a file or a directory searched recursively. Claude Code logs and
native traces are told apart by content; --from names another registered
format. A directory brings a session's subagents with it; a single file is
that file alone.

Claude Code logs take a fast path that decodes only the lines carrying
usage; a response logged over several lines counts once, with its final
usage, as ccusage counts it.

Prices come from the embedded rate card; --prices FILE (a LiteLLM
model_prices_and_context_window.json) overrides or extends it. A model with
no price is an error, never a silent $0.

1h cache writes cost 2× input, as Anthropic bills them. ccusage prices every
cache write at the 5m rate (1.25×), so on sessions that wrote to the 1h tier
its dollars are lower than the bill; --ccusage prices as it does, to
reconcile the two (the tokens agree either way).

Examples:
  ctxsim cost ~/.claude/projects
  ctxsim cost --json ~/.claude/projects/-home-me-proj/
  ctxsim cost --format markdown testdata/claude-code
  ctxsim cost --prices model_prices_and_context_window.json traces/
  ctxsim cost --from native traces/a.jsonl traces/b.jsonl
  ctxsim cost --ccusage ~/.claude/projects`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			from := fs.String("from", "", "input format: native or a registered importer (default: detect native or claude-code)")
			prices := fs.String("prices", "", "LiteLLM model_prices_and_context_window.json to override or extend the rate card")
			var format formatFlags
			format.add(fs, "same as --format json")
			ccusage := fs.Bool("ccusage", false, "price 1h cache writes at the 5m rate, as ccusage does (below what Anthropic bills)")
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH")
				}
				f, err := format.parse()
				if err != nil {
					return err
				}
				if *from != "" {
					if _, err := traces.Lookup(formats.All(), *from); err != nil {
						return fromError(err)
					}
				}
				card, err := loadCard(*prices)
				if err != nil {
					return err
				}
				sessions, ws, err := costSessions(e, args, *from)
				if err != nil {
					return err
				}
				if *ccusage {
					for i := range sessions {
						for j := range sessions[i].calls {
							u := &sessions[i].calls[j].usage
							u.CacheWrite5m, u.CacheWrite1h = u.CacheWrite5m+u.CacheWrite1h, 0
						}
					}
				}
				rep, err := priceSessions(sessions, card)
				if err != nil {
					return err
				}
				rep.Warnings = ws.List()
				printWarnings(e, ws) // stderr always: JSON on stdout stays clean
				return rep.write(e, f)
			}
		},
	})
}

// costSession is one session's billed calls, from the fast Claude Code
// scan or from imported events.
type costSession struct {
	id, parent string
	start      time.Time
	calls      []costCall
}

type costCall struct {
	model string
	usage traces.Usage
	// requests is how many API calls the usage sums (0 means 1): a
	// hermes session database keeps only per-session totals.
	requests int
}

// costSessions reads the paths: Claude Code logs on disk by ScanUsage,
// everything else (standard input included) through the importers.
func costSessions(e *env, paths []string, from string) ([]costSession, *traces.Warnings, error) {
	ws := &traces.Warnings{}
	defer func() { e.failed += ws.Failed() }()
	var ccPaths []string
	var out []costSession
	seen := map[string]bool{}
	for _, p := range paths {
		in, err := traces.PathInput(p, e.stdin)
		if err != nil {
			return nil, nil, err
		}
		imp, err := traces.Detect(e.ctx, in, formats.All())
		if from != "" {
			imp, err = traces.Lookup(formats.All(), from)
		}
		if err != nil {
			return nil, nil, err
		}
		if imp == formats.ClaudeCode && p != "-" {
			ccPaths = append(ccPaths, p)
			continue
		}
		ss, w, err := imp.Import(e.ctx, in)
		if err != nil {
			return nil, nil, err
		}
		ws.Merge(w)
		for _, s := range ss {
			if seen[s.ID] {
				ws.AddPlace(s.ID, traces.WarnDupSession) // counted once
				continue
			}
			seen[s.ID] = true
			cs := costSession{id: s.ID, parent: s.Parent, start: s.Start()}
			for i := range s.Events {
				ev := &s.Events[i]
				if ev.Kind == traces.Assistant && ev.Usage != nil {
					m := ev.Model
					if m == "" {
						m = s.Model
					}
					cs.calls = append(cs.calls, costCall{model: m, usage: *ev.Usage})
				}
			}
			if len(cs.calls) == 0 {
				// hermes' state.db keeps per-session totals, not per call.
				if u, n, ok := hermes.Totals(s); ok && u.Prompt()+u.Output > 0 {
					cs.calls = append(cs.calls, costCall{model: s.Model, usage: u, requests: int(max(n, 1))})
				}
			}
			if len(cs.calls) > 0 {
				out = append(out, cs)
			}
		}
	}
	if len(ccPaths) > 0 {
		us, w, err := claudecode.ScanUsage(ccPaths...)
		if err != nil {
			return nil, nil, err
		}
		ws.Merge(w)
		for _, u := range us {
			cs := costSession{id: u.ID, parent: u.Parent, start: u.Start}
			for _, c := range u.Calls {
				cs.calls = append(cs.calls, costCall{model: c.Model, usage: c.Usage})
			}
			out = append(out, cs)
		}
	}
	return out, ws, nil
}

// costTokens is the JSON tokens object.
type costTokens struct {
	Input        int64 `json:"input"`
	CacheWrite5m int64 `json:"cache_write_5m"`
	CacheWrite1h int64 `json:"cache_write_1h"`
	CacheRead    int64 `json:"cache_read"`
	Output       int64 `json:"output"`
}

func tokensOf(u traces.Usage) costTokens {
	return costTokens{u.Input, u.CacheWrite5m, u.CacheWrite1h, u.CacheRead, u.Output}
}

type costRow struct {
	ID       string     `json:"id"`
	Model    string     `json:"model"`
	Requests int        `json:"requests"`
	Tokens   costTokens `json:"tokens"`
	CostUSD  float64    `json:"cost_usd"`
	HitRate  float64    `json:"cache_hit_rate"`
	Children []*costRow `json:"children"`

	models []string
	usage  traces.Usage
	start  time.Time
}

type costTotals struct {
	Requests int        `json:"requests"`
	Tokens   costTokens `json:"tokens"`
	CostUSD  float64    `json:"cost_usd"`
	HitRate  float64    `json:"cache_hit_rate"`
}

type costReport struct {
	Sessions []*costRow       `json:"sessions"`
	Totals   costTotals       `json:"totals"`
	Warnings []traces.Warning `json:"warnings"`
}

// priceSessions prices every call at its model's rate and nests children
// under parents present in the input. Unknown models are one error naming
// all of them.
func priceSessions(ss []costSession, card *pricing.Card) (*costReport, error) {
	unknown := map[string]string{}
	rows := map[string]*costRow{}
	var order []*costRow
	var total traces.Usage
	var totalCost float64
	requests := 0
	for _, s := range ss {
		r := &costRow{ID: s.id, start: s.start, Children: []*costRow{}}
		for _, c := range s.calls {
			p, err := card.Lookup(c.model)
			if err != nil {
				if _, seen := unknown[c.model]; !seen {
					unknown[c.model] = s.id
				}
				continue
			}
			cost := p.Cost(c.usage)
			r.CostUSD += cost
			r.usage = r.usage.Add(c.usage)
			r.Requests += max(c.requests, 1)
			if !slices.Contains(r.models, c.model) {
				r.models = append(r.models, c.model)
			}
		}
		if len(r.models) > 0 {
			r.Model = r.models[0]
		}
		r.Tokens = tokensOf(r.usage)
		r.HitRate = report.Round6(r.usage.HitRate())
		total = total.Add(r.usage)
		totalCost += r.CostUSD
		requests += r.Requests
		r.CostUSD = report.Round6(r.CostUSD)
		rows[r.ID] = r
		order = append(order, r)
	}
	if len(unknown) > 0 {
		models := make([]string, 0, len(unknown))
		for m := range unknown {
			models = append(models, m)
		}
		sort.Strings(models)
		var errs []error
		for _, m := range models {
			_, err := card.Lookup(m)
			errs = append(errs, fmt.Errorf("session %s: %w", unknown[m], err))
		}
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if !order[i].start.Equal(order[j].start) {
			return order[i].start.Before(order[j].start)
		}
		return order[i].ID < order[j].ID
	})
	rep := &costReport{Sessions: []*costRow{}}
	parentOf := map[string]string{}
	for _, s := range ss {
		parentOf[s.id] = s.parent
	}
	for _, r := range order {
		if p := rows[parentOf[r.ID]]; p != nil && p != r {
			p.Children = append(p.Children, r)
			continue
		}
		rep.Sessions = append(rep.Sessions, r)
	}
	rep.Totals = costTotals{Requests: requests, Tokens: tokensOf(total), CostUSD: report.Round6(totalCost), HitRate: report.Round6(total.HitRate())}
	return rep, nil
}

func (rep *costReport) write(e *env, f report.Format) error {
	if f == report.JSON {
		return writeJSON(e.stdout, rep)
	}
	// Text and Markdown are for people (thousands separators, children
	// indented under their parent); CSV is for programs (plain numbers, a
	// parent column).
	csv := f == report.CSV
	num, cost, rate := report.Thousands, dollars, report.FormatPercent
	cols := []string{"session", "model", "requests", "input", "5m write", "1h write", "cache read", "output", "cost", "hit rate"}
	if csv {
		num = func(n int64) string { return strconv.FormatInt(n, 10) }
		cost = func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
		rate = func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
		cols = []string{"session", "parent", "model", "requests", "input", "cache_write_5m", "cache_write_1h", "cache_read", "output", "cost_usd", "cache_hit_rate"}
	}
	t := &report.Table{Columns: cols, Right: []bool{false, false, true, true, true, true, true, true, true, true}}
	row := func(id, parent, model string, requests int, tk costTokens, usd, hit float64) {
		cells := []string{id}
		if csv {
			cells = append(cells, parent)
		}
		cells = append(cells, model, strconv.Itoa(requests), num(tk.Input), num(tk.CacheWrite5m), num(tk.CacheWrite1h),
			num(tk.CacheRead), num(tk.Output), cost(usd), rate(hit))
		t.AddRow(cells...)
	}
	var add func(r *costRow, depth int, parent string)
	add = func(r *costRow, depth int, parent string) {
		id := r.ID
		if depth > 0 && !csv {
			id = strings.Repeat("  ", depth) + strings.TrimPrefix(strings.TrimPrefix(r.ID, parent), ".")
		}
		model := r.Model
		if len(r.models) > 1 {
			model = strings.Join(r.models, ", ")
		}
		row(id, parent, model, r.Requests, r.Tokens, r.CostUSD, r.HitRate)
		for _, c := range r.Children {
			add(c, depth+1, r.ID)
		}
	}
	for _, r := range rep.Sessions {
		add(r, 0, "")
	}
	tt := rep.Totals
	row("total", "", "", tt.Requests, tt.Tokens, tt.CostUSD, tt.HitRate)
	return t.Write(e.stdout, f)
}

func dollars(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 2, 64) }
