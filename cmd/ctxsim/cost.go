package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	// --timezone takes IANA names on machines without a zoneinfo database.
	_ "time/tzdata"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/traces/hermes"
	"github.com/ctxsim/ctxsim/usage"
)

func init() {
	register(&command{
		name:    "cost",
		summary: "what recorded sessions actually cost, by session, day, week, month, block, project or model",
		usage:   "[flags] PATH...",
		help: `Cost reads recorded sessions and prices the usage their provider billed:
the requests, input, 5m and 1h cache writes, cache reads and output tokens,
the cost in USD and the token-weighted cache hit rate, read ÷ (input +
writes + read), with the first and last activity of every row and each
model's share. Each call is priced at its own model's rate, so mixed-model
sessions come out right.

--by groups the calls: session (the default: each session, its subagents
listed indented under it and counted once), day, week, month, block (the
5-hour usage windows, as ccusage computes them), project or model. Days,
weeks and months are calendar ones in --timezone (default: this machine's
zone; "UTC" or an IANA name such as Europe/Berlin); weeks start on
--week-start. --since and --until keep the calls between two dates (whole
days, inclusive) or RFC 3339 times. In --by session, a subagent has its own
row under its parent; in every other grouping (and in the JSON "groups")
its calls count in its root session, as ccusage counts them.

PATH is a file or a directory searched recursively. Claude Code logs,
Codex rollouts and native traces are told apart by content; --from names
another registered format. A directory brings a session's subagents with
it; a single file is that file alone. The project of a Claude Code session
is its folder under ~/.claude/projects (else the folder holding it); of
any other log, the PATH it was found under.

Claude Code logs take a fast path that decodes only the lines carrying
usage; a response logged over several lines counts once, with its final
usage, and a subagent's responses echoed in its parent's progress lines
count when no file of its own holds them, as ccusage 20.0.24 counts them.

Prices come from the embedded rate card, backed by an embedded LiteLLM
snapshot (every model ccusage prices, OpenAI's GPT-5.x families included);
--prices FILE (a LiteLLM model_prices_and_context_window.json) overrides or
extends both. 1h cache writes cost 2× input, 5m writes 1.25×, as Anthropic
bills them and as ccusage 20.0.24 prices them. A model with no price costs
$0 with a warning naming it, and the other calls are priced as usual.

Examples:
  ctxsim cost ~/.claude/projects
  ctxsim cost --by day --timezone UTC testdata/claude-code
  ctxsim cost --by month --json ~/.claude/projects
  ctxsim cost --by block --since 2026-02-10 --until 2026-02-10 --timezone UTC testdata/claude-code
  ctxsim cost --by model --format csv testdata/claude-code
  ctxsim cost --prices model_prices_and_context_window.json ~/.codex/sessions
  ctxsim cost --from native traces/a.jsonl traces/b.jsonl`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			from := fs.String("from", "", "input format: native or a registered importer (default: detect native, codex or claude-code)")
			prices := fs.String("prices", "", "LiteLLM model_prices_and_context_window.json to override or extend the rate card")
			by := fs.String("by", "session", "group by session, day, week, month, block, project or model")
			since := fs.String("since", "", "keep calls from this date (2006-01-02 or 20060102, inclusive) or RFC 3339 time")
			until := fs.String("until", "", "keep calls up to this date (inclusive) or RFC 3339 time")
			tz := fs.String("timezone", "", `timezone of days, weeks, months and times shown: "UTC" or an IANA name (default: local)`)
			weekStart := fs.String("week-start", "monday", "first day of a --by week week (ccusage weekly: monday; ccusage claude weekly: sunday)")
			var format formatFlags
			format.add(fs, "same as --format json")
			fs.Bool("ccusage", false, "no effect: ccusage 20.0.24 prices 1h writes as ctxsim does")
			_ = fs.MarkDeprecated("ccusage", "ccusage 20.0.24 prices 1h cache writes at the 1h rate, as ctxsim always has: the figures already agree")
			var sh shardFlags
			sh.flag(fs, "project directories (of Claude Code logs)")
			out := fs.StringP("out", "o", "", "with --shard: the directory to write the shard's part to, for ctxsim merge")
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH")
				}
				f, err := format.parse()
				if err != nil {
					return err
				}
				if err := sh.parse(*out); err != nil {
					return err
				}
				if *out != "" && !sh.sp.Sharded() {
					return usagef("--out is where a --shard writes its part; cost prints its report")
				}
				if *from != "" {
					if _, err := traces.Lookup(formats.All(), *from); err != nil {
						return fromError(err)
					}
				}
				opts, err := costOptions(*by, *since, *until, *tz, *weekStart)
				if err != nil {
					return err
				}
				card, err := loadCard(*prices)
				if err != nil {
					return err
				}
				if sh.sp.Sharded() {
					return costShard(e, fs, args, *from, *prices, card, opts, costRender{*by, *since, *until, *tz, *weekStart}, f, &sh, *out)
				}
				sessions, ws, err := costSessions(e, args, *from)
				if err != nil {
					return err
				}
				return printCost(e, f, sessions, ws, card, opts)
			}
		},
	})
}

// printCost prices and groups sessions and prints the report, the
// warnings on stderr always (JSON on stdout stays clean) and in the JSON.
func printCost(e *env, f report.Format, sessions []costSession, ws *traces.Warnings, card *pricing.Card, opts usage.Options) error {
	rep := buildCostReport(sessions, card, opts, ws)
	rep.Warnings = ws.List()
	printWarnings(e, ws)
	return rep.write(e, f, opts.Loc)
}

// costOptions checks the grouping flags.
func costOptions(by, since, until, tz, weekStart string) (usage.Options, error) {
	var o usage.Options
	b, err := usage.ParseBy(by)
	if err != nil {
		return o, usagef("--by: %v", err)
	}
	o.By = b
	if o.Loc, err = usage.LoadLocation(tz); err != nil {
		return o, usagef("%v", err)
	}
	if since != "" {
		if o.Since, err = usage.ParseBound(since, o.Loc, false); err != nil {
			return o, usagef("--since: %v", err)
		}
	}
	if until != "" {
		if o.Until, err = usage.ParseBound(until, o.Loc, true); err != nil {
			return o, usagef("--until: %v", err)
		}
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && o.Until.Before(o.Since) {
		return o, usagef("--until %s is before --since %s", until, since)
	}
	found := false
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(d.String(), weekStart) {
			o.WeekStart, found = d, true
		}
	}
	if !found {
		return o, usagef("--week-start %q: want a weekday name (sunday, monday, ...)", weekStart)
	}
	return o, nil
}

// costSession is one session's billed calls, from the fast Claude Code
// scan or from imported events.
type costSession struct {
	id, parent string
	start      time.Time
	// project groups --by project; file is where the session was read
	// (for warnings).
	project, file string
	calls         []costCall
}

type costCall struct {
	at    time.Time
	model string
	usage traces.Usage
	// requests is how many API calls the usage sums (0 means 1): a
	// hermes session database keeps only per-session totals.
	requests int
}

// splitMixed replaces each directory holding logs of several formats (a
// corpus of Claude Code logs and Codex rollouts) by its files, so that each
// is read in its own format; without it the whole tree was read in the
// format of its first file. --from keeps the paths as given.
func splitMixed(e *env, paths []string, from string) ([]string, error) {
	if from != "" {
		return paths, nil
	}
	var out []string
	for _, p := range paths {
		files, mixed, err := traces.MixedFiles(e.ctx, p, e.stdin, formats.All())
		if err != nil {
			return nil, err
		}
		if mixed {
			out = append(out, files...)
		} else {
			out = append(out, p)
		}
	}
	return out, nil
}

// costSessions reads the paths: Claude Code logs on disk by ScanUsage,
// everything else (standard input included) through the importers.
func costSessions(e *env, paths []string, from string) ([]costSession, *traces.Warnings, error) {
	ws := &traces.Warnings{}
	defer func() { e.failed += ws.Failed() }()
	var ccPaths []string
	var out []costSession
	seen := map[string]bool{}
	paths, err := splitMixed(e, paths, from)
	if err != nil {
		return nil, nil, err
	}
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
			cs := costSession{id: s.ID, parent: s.Parent, start: s.Start(), project: filepath.Base(filepath.Clean(p)), file: p}
			for i := range s.Events {
				ev := &s.Events[i]
				if ev.Kind == traces.Assistant && ev.Usage != nil {
					m := ev.Model
					if m == "" {
						m = s.Model
					}
					cs.calls = append(cs.calls, costCall{at: ev.Time, model: m, usage: *ev.Usage})
				}
			}
			if len(cs.calls) == 0 {
				// hermes' state.db keeps per-session totals, not per call.
				if u, n, ok := hermes.Totals(s); ok && u.Prompt()+u.Output > 0 {
					cs.calls = append(cs.calls, costCall{at: s.Start(), model: s.Model, usage: u, requests: int(max(n, 1))})
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
			cs := costSession{id: u.ID, parent: u.Parent, start: u.Start, project: projectOf(u.File), file: u.File}
			for _, c := range u.Calls {
				cs.calls = append(cs.calls, costCall{at: c.Time, model: c.Model, usage: c.Usage})
			}
			out = append(out, cs)
		}
	}
	return out, ws, nil
}

// projectOf is a Claude Code log's project, as ccusage names it: the folder
// under .../projects/ (Claude Code's ~/.claude/projects/<project>/), else
// the folder holding the session (a subagent's: its parent's).
func projectOf(file string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(file)), "/")
	for i := len(parts) - 3; i >= 0; i-- {
		if parts[i] == "projects" {
			return parts[i+1]
		}
	}
	dir := filepath.Dir(file)
	if filepath.Base(dir) == "subagents" {
		dir = filepath.Dir(filepath.Dir(dir))
	}
	return filepath.Base(dir)
}

// costRow is one session of --by session, with its subagents.
type costRow struct {
	ID       string        `json:"id"`
	Model    string        `json:"model"`
	First    time.Time     `json:"first,omitzero"`
	Last     time.Time     `json:"last,omitzero"`
	Requests int           `json:"requests"`
	Tokens   usage.Tokens  `json:"tokens"`
	CostUSD  float64       `json:"cost_usd"`
	HitRate  float64       `json:"cache_hit_rate"`
	Models   []usage.Model `json:"models"`
	Children []*costRow    `json:"children"`

	start time.Time
}

type costReport struct {
	By       usage.By `json:"by"`
	Timezone string   `json:"timezone"`
	Since    string   `json:"since,omitempty"`
	Until    string   `json:"until,omitempty"`
	// Groups are the calls grouped --by; a session's subagents count in
	// their root session, as ccusage counts them.
	Groups []usage.Group `json:"groups"`
	// Sessions is --by session's tree: each session with its subagents.
	Sessions []*costRow       `json:"sessions,omitempty"`
	Totals   usage.Totals     `json:"totals"`
	Unpriced []usage.Unpriced `json:"unpriced"`
	Warnings []traces.Warning `json:"warnings"`

	rootOf map[string]string
}

// buildCostReport prices and groups the sessions' calls. A model the card
// cannot price costs $0: one warning per such call, naming the model.
func buildCostReport(ss []costSession, card *pricing.Card, o usage.Options, ws *traces.Warnings) *costReport {
	parentOf := map[string]string{}
	for _, s := range ss {
		if _, dup := parentOf[s.id]; !dup || s.parent != "" {
			parentOf[s.id] = s.parent
		}
	}
	root := func(id string) string {
		for range len(ss) + 1 { // a parent cycle stops here
			p, ok := parentOf[id]
			if !ok || p == "" || p == id {
				return id
			}
			if _, present := parentOf[p]; !present {
				return id
			}
			id = p
		}
		return id
	}
	var grouped, own []usage.Call
	for _, s := range ss {
		r := root(s.id)
		for _, c := range s.calls {
			uc := usage.Call{Time: c.at, Session: r, Project: s.project, Model: c.model, Usage: c.usage, Requests: c.requests}
			grouped = append(grouped, uc)
			uc.Session = s.id
			own = append(own, uc)
		}
	}
	rep := &costReport{By: o.By, Timezone: o.Loc.String()}
	if !o.Since.IsZero() {
		rep.Since = o.Since.In(o.Loc).Format(time.RFC3339)
	}
	if !o.Until.IsZero() {
		rep.Until = o.Until.In(o.Loc).Format(time.RFC3339)
	}
	g := usage.Aggregate(grouped, card, o)
	rep.Groups, rep.Totals, rep.Unpriced = g.Groups, g.Totals, g.Unpriced
	if rep.Unpriced == nil {
		rep.Unpriced = []usage.Unpriced{}
	}
	fileOf := map[string]string{}
	for _, s := range ss {
		if fileOf[s.id] == "" {
			fileOf[s.id] = s.file
		}
	}
	for _, u := range rep.Unpriced {
		reason := fmt.Sprintf("no price for model %q: its calls count $0 (pass --prices FILE with a LiteLLM entry for it)", u.Model)
		for range u.Calls {
			ws.Add(fileOf[u.Sessions[0]], 0, reason)
		}
	}
	if o.By != usage.BySession {
		return rep
	}
	per := usage.Aggregate(own, card, usage.Options{By: usage.BySession, Loc: o.Loc, Since: o.Since, Until: o.Until})
	rows := map[string]*costRow{}
	startOf := map[string]time.Time{}
	for _, s := range ss {
		if _, ok := startOf[s.id]; !ok {
			startOf[s.id] = s.start
		}
	}
	order := make([]*costRow, 0, len(per.Groups))
	for _, gr := range per.Groups {
		r := &costRow{ID: gr.Key, First: gr.First, Last: gr.Last, Requests: gr.Requests, Tokens: gr.Tokens,
			CostUSD: gr.CostUSD, HitRate: gr.HitRate, Models: gr.Models, Children: []*costRow{}, start: startOf[gr.Key]}
		if len(r.Models) > 0 {
			r.Model = firstModel(ss, gr.Key)
		}
		rows[r.ID] = r
		order = append(order, r)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if !order[i].start.Equal(order[j].start) {
			return order[i].start.Before(order[j].start)
		}
		return order[i].ID < order[j].ID
	})
	rep.Sessions = []*costRow{}
	for _, r := range order {
		if p := rows[parentOf[r.ID]]; p != nil && p != r {
			p.Children = append(p.Children, r)
			continue
		}
		rep.Sessions = append(rep.Sessions, r)
	}
	return rep
}

// firstModel is the model of a session's first call, as the log names it.
func firstModel(ss []costSession, id string) string {
	for _, s := range ss {
		if s.id == id && len(s.calls) > 0 {
			return s.calls[0].model
		}
	}
	return ""
}

func (rep *costReport) write(e *env, f report.Format, loc *time.Location) error {
	if f == report.JSON {
		return writeJSON(e.stdout, rep)
	}
	// Text and Markdown are for people (thousands separators, children and
	// models indented under their row); CSV is for programs (plain numbers,
	// RFC 3339 times, a parent column and one row per group and model).
	csv := f == report.CSV
	num, cost, rate := report.Thousands, dollars, report.FormatPercent
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format("2006-01-02 15:04")
	}
	key := string(rep.By)
	if csv {
		return rep.writeCSV(e, loc)
	}
	cols := []string{key, "models", "first", "last", "requests", "input", "5m write", "1h write", "cache read", "output", "cost", "hit rate"}
	right := make([]bool, len(cols))
	for i := range right {
		right[i] = i >= 4
	}
	// Narrow terminals lose, in order: the models column (the breakdown
	// rows still name them), first and last activity, requests, the 5m/1h
	// write split, output.
	drop := []int{0, 9, 8, 7, 6, 0, 5, 5, 0, 4, 0, 0}
	t := &report.Table{Columns: cols, Right: right, Drop: drop}
	row := func(id, model string, first, last time.Time, requests int, tk usage.Tokens, usd float64, hit string) {
		t.AddRow(id, model, when(first), when(last), strconv.Itoa(requests), num(tk.Input), num(tk.CacheWrite5m), num(tk.CacheWrite1h),
			num(tk.CacheRead), num(tk.Output), cost(usd), hit)
	}
	// A row names its one model, or says how many, with a row per model
	// (costliest first) below it.
	models := func(ms []usage.Model) string {
		if len(ms) == 1 {
			return ms[0].Model
		}
		return fmt.Sprintf("%d models", len(ms))
	}
	breakdown := func(ms []usage.Model, indent string) {
		if len(ms) < 2 {
			return
		}
		for _, m := range ms {
			row(indent+"  · "+m.Model, "", time.Time{}, time.Time{}, m.Requests, m.Tokens, m.CostUSD, "")
		}
	}
	if rep.By == usage.BySession {
		var add func(r *costRow, depth int, parent string)
		add = func(r *costRow, depth int, parent string) {
			id := r.ID
			indent := strings.Repeat("  ", depth)
			if depth > 0 {
				id = indent + strings.TrimPrefix(strings.TrimPrefix(r.ID, parent), ".")
			}
			row(id, models(r.Models), r.First, r.Last, r.Requests, r.Tokens, r.CostUSD, rate(r.HitRate))
			breakdown(r.Models, indent)
			for _, c := range r.Children {
				add(c, depth+1, r.ID)
			}
		}
		for _, r := range rep.Sessions {
			add(r, 0, "")
		}
	} else {
		for _, g := range rep.Groups {
			row(g.Key, models(g.Models), g.First, g.Last, g.Requests, g.Tokens, g.CostUSD, rate(g.HitRate))
			if rep.By != usage.ByModel {
				breakdown(g.Models, "")
			}
		}
	}
	tt := rep.Totals
	row("total", models(tt.Models), tt.First, tt.Last, tt.Requests, tt.Tokens, tt.CostUSD, rate(tt.HitRate))
	return t.Write(e.stdout, f)
}

// writeCSV is one row per group and model (per session and model, with
// its parent, for --by session) and a total row: plain numbers, RFC 3339
// times, the hit rate of each row's own tokens.
func (rep *costReport) writeCSV(e *env, loc *time.Location) error {
	key := string(rep.By)
	cols := []string{key}
	if rep.By == usage.BySession {
		cols = append(cols, "parent")
	}
	if rep.By != usage.ByModel {
		cols = append(cols, "model")
	}
	cols = append(cols, "first", "last", "requests", "input", "cache_write_5m", "cache_write_1h", "cache_read", "output", "cost_usd", "cache_hit_rate")
	t := &report.Table{Columns: cols}
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format(time.RFC3339)
	}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	f6 := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	row := func(k, parent, model string, first, last time.Time, requests int, tk usage.Tokens, usd float64) {
		cells := []string{k}
		if rep.By == usage.BySession {
			cells = append(cells, parent)
		}
		if rep.By != usage.ByModel {
			cells = append(cells, model)
		}
		u := traces.Usage{Input: tk.Input, CacheWrite5m: tk.CacheWrite5m, CacheWrite1h: tk.CacheWrite1h, CacheRead: tk.CacheRead, Output: tk.Output}
		cells = append(cells, when(first), when(last), strconv.Itoa(requests), i64(tk.Input), i64(tk.CacheWrite5m), i64(tk.CacheWrite1h),
			i64(tk.CacheRead), i64(tk.Output), f6(usd), f6(report.Round6(u.HitRate())))
		t.AddRow(cells...)
	}
	if rep.By == usage.BySession {
		var add func(r *costRow, parent string)
		add = func(r *costRow, parent string) {
			for _, m := range r.Models {
				row(r.ID, parent, m.Model, r.First, r.Last, m.Requests, m.Tokens, m.CostUSD)
			}
			for _, c := range r.Children {
				add(c, r.ID)
			}
		}
		for _, r := range rep.Sessions {
			add(r, "")
		}
	} else {
		for _, g := range rep.Groups {
			for _, m := range g.Models {
				row(g.Key, "", m.Model, g.First, g.Last, m.Requests, m.Tokens, m.CostUSD)
			}
		}
	}
	tt := rep.Totals
	row("total", "", "", tt.First, tt.Last, tt.Requests, tt.Tokens, tt.CostUSD)
	return t.Write(e.stdout, report.CSV)
}

func dollars(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 2, 64) }
