package usage

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

// Call is one billed API call, or (Requests > 1) the sum of several a log
// keeps only in total.
type Call struct {
	Time time.Time
	// BadTime marks a call whose log gave a timestamp no call has (Time
	// is zero): it is grouped under BadTime, not NoTime.
	BadTime bool
	// Session is the session the call bills to: a subagent's calls carry
	// their root session's id, as ccusage counts them.
	Session string
	Project string
	// Model is named as the log names it.
	Model    string
	Usage    traces.Usage
	Requests int // 0 means 1
}

// By names a grouping.
type By string

// The groupings.
const (
	BySession By = "session"
	ByDay     By = "day"
	ByWeek    By = "week"
	ByMonth   By = "month"
	ByBlock   By = "block"
	ByProject By = "project"
	ByModel   By = "model"
)

// Groupings lists every By, in the order help shows them.
var Groupings = []By{BySession, ByDay, ByWeek, ByMonth, ByBlock, ByProject, ByModel}

// ParseBy reads a grouping name.
func ParseBy(s string) (By, error) {
	for _, b := range Groupings {
		if string(b) == s {
			return b, nil
		}
	}
	names := make([]string, len(Groupings))
	for i, b := range Groupings {
		names[i] = string(b)
	}
	return "", fmt.Errorf("%q is not a grouping (want %s)", s, strings.Join(names, ", "))
}

// BlockDuration is the length of Anthropic's usage window, as ccusage's
// blocks report uses it (its --session-length default).
const BlockDuration = 5 * time.Hour

// NoTime is the key of calls without a timestamp in time groupings;
// BadTime of calls whose timestamp is no time a call was made (not RFC
// 3339, or before 2000 or after 2099, as Go's zero time 0001-01-01:
// traces.PlausibleTime), which a reader warned about, naming it.
const (
	NoTime  = "(no time)"
	BadTime = "(bad time)"
)

// untimedKey is the key of a call without a usable time.
func untimedKey(c *Call) string {
	if c.BadTime {
		return BadTime
	}
	return NoTime
}

// Options say how to group.
type Options struct {
	By By
	// Loc is the timezone of days, weeks, months and block keys; nil is UTC.
	Loc *time.Location
	// Since and Until bound call times, inclusive; zero is unbounded.
	Since, Until time.Time
	// WeekStart is the first day of a week (the zero value is Sunday).
	WeekStart time.Weekday
}

// within reports whether a call at t is kept by Since and Until: always
// when neither is set, never without a time when one is.
func (o Options) within(t time.Time) bool {
	if o.Since.IsZero() && o.Until.IsZero() {
		return true
	}
	return !t.IsZero() && (o.Since.IsZero() || !t.Before(o.Since)) && (o.Until.IsZero() || !t.After(o.Until))
}

// Pricer prices a model; *pricing.Card is one.
type Pricer interface {
	Lookup(model string) (pricing.Price, error)
}

// Tokens are token counts by class.
type Tokens struct {
	Input        int64 `json:"input"`
	CacheWrite5m int64 `json:"cache_write_5m"`
	CacheWrite1h int64 `json:"cache_write_1h"`
	CacheRead    int64 `json:"cache_read"`
	Output       int64 `json:"output"`
}

// TokensOf converts a usage.
func TokensOf(u traces.Usage) Tokens {
	return Tokens{u.Input, u.CacheWrite5m, u.CacheWrite1h, u.CacheRead, u.Output}
}

// Model is one model's share of a group.
type Model struct {
	Model    string  `json:"model"`
	Requests int     `json:"requests"`
	Tokens   Tokens  `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`

	usage traces.Usage
	cost  float64
}

// Group is one row of a report.
type Group struct {
	Key      string    `json:"key"`
	First    time.Time `json:"first,omitzero"`
	Last     time.Time `json:"last,omitzero"`
	Requests int       `json:"requests"`
	Tokens   Tokens    `json:"tokens"`
	CostUSD  float64   `json:"cost_usd"`
	// HitRate is read ÷ (input + writes + read), token-weighted.
	HitRate float64 `json:"cache_hit_rate"`
	Models  []Model `json:"models"`

	usage traces.Usage
	cost  float64
	order int
}

// Totals sum every group.
type Totals struct {
	First    time.Time `json:"first,omitzero"`
	Last     time.Time `json:"last,omitzero"`
	Requests int       `json:"requests"`
	Tokens   Tokens    `json:"tokens"`
	CostUSD  float64   `json:"cost_usd"`
	HitRate  float64   `json:"cache_hit_rate"`
	Models   []Model   `json:"models"`
}

// Unpriced is a model the Pricer did not know: its calls cost $0.
type Unpriced struct {
	Model    string   `json:"model"`
	Calls    int      `json:"calls"`
	Sessions []string `json:"sessions"`
	Err      error    `json:"-"`
}

// Report is the grouped calls.
type Report struct {
	Groups   []Group    `json:"groups"`
	Totals   Totals     `json:"totals"`
	Unpriced []Unpriced `json:"unpriced,omitempty"`
}

// Aggregate prices each call and groups the calls as o says. The result
// depends only on the calls and options, never on map order.
func Aggregate(calls []Call, p Pricer, o Options) *Report {
	loc := o.Loc
	if loc == nil {
		loc = time.UTC
	}
	kept := calls // not copied unless filtered
	if !o.Since.IsZero() || !o.Until.IsZero() {
		kept = make([]Call, 0, len(calls))
		for _, c := range calls {
			if o.within(c.Time) {
				kept = append(kept, c)
			}
		}
	}
	// Price each model once.
	prices := map[string]*pricing.Price{}
	unpriced := map[string]*Unpriced{}
	for _, c := range kept {
		if _, ok := prices[c.Model]; ok {
			if u := unpriced[c.Model]; u != nil {
				u.Calls++
				if !slices.Contains(u.Sessions, c.Session) {
					u.Sessions = append(u.Sessions, c.Session)
				}
			}
			continue
		}
		pr, err := p.Lookup(c.Model)
		if err != nil {
			prices[c.Model] = nil
			unpriced[c.Model] = &Unpriced{Model: c.Model, Calls: 1, Sessions: []string{c.Session}, Err: err}
			continue
		}
		prices[c.Model] = &pr
	}
	keys := groupKeys(kept, o.By, loc, o.WeekStart)
	groups := map[string]*Group{}
	var total Group
	for i, c := range kept {
		k := keys[i]
		g := groups[k]
		if g == nil {
			g = &Group{Key: k, order: len(groups)}
			groups[k] = g
		}
		cost := 0.0
		if pr := prices[c.Model]; pr != nil {
			cost = pr.Cost(c.Usage)
		}
		g.add(c, cost, loc)
		total.add(c, cost, loc)
	}
	rep := &Report{Groups: make([]Group, 0, len(groups))}
	for _, g := range groups {
		g.finish()
		rep.Groups = append(rep.Groups, *g)
	}
	timeKeyed := o.By == ByDay || o.By == ByWeek || o.By == ByMonth || o.By == ByBlock
	slices.SortFunc(rep.Groups, func(a, b Group) int {
		if timeKeyed {
			// ISO keys sort in time order; "(bad time)", then
			// "(no time)", go last.
			au, bu := a.Key == NoTime || a.Key == BadTime, b.Key == NoTime || b.Key == BadTime
			if au != bu {
				if au {
					return 1
				}
				return -1
			}
			return strings.Compare(a.Key, b.Key)
		}
		if c := compareTime(a.First, b.First); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	total.finish()
	rep.Totals = Totals{First: total.First, Last: total.Last, Requests: total.Requests, Tokens: total.Tokens,
		CostUSD: total.CostUSD, HitRate: total.HitRate, Models: total.Models}
	for _, u := range unpriced {
		slices.Sort(u.Sessions)
		rep.Unpriced = append(rep.Unpriced, *u)
	}
	slices.SortFunc(rep.Unpriced, func(a, b Unpriced) int { return strings.Compare(a.Model, b.Model) })
	return rep
}

// compareTime orders times, the zero time last.
func compareTime(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}

func (g *Group) add(c Call, cost float64, loc *time.Location) {
	n := max(c.Requests, 1)
	g.Requests += n
	g.usage = g.usage.Add(c.Usage)
	g.cost += cost
	if !c.Time.IsZero() {
		t := c.Time.In(loc)
		if g.First.IsZero() || t.Before(g.First) {
			g.First = t
		}
		if g.Last.IsZero() || t.After(g.Last) {
			g.Last = t
		}
	}
	i := slices.IndexFunc(g.Models, func(m Model) bool { return m.Model == c.Model })
	if i < 0 {
		g.Models = append(g.Models, Model{Model: c.Model})
		i = len(g.Models) - 1
	}
	m := &g.Models[i]
	m.Requests += n
	m.usage = m.usage.Add(c.Usage)
	m.cost += cost
}

func (g *Group) finish() {
	g.Tokens = TokensOf(g.usage)
	g.CostUSD = round6(g.cost)
	g.HitRate = round6(g.usage.HitRate())
	for i := range g.Models {
		m := &g.Models[i]
		m.Tokens = TokensOf(m.usage)
		m.CostUSD = round6(m.cost)
	}
	// Costliest first, as ccusage's breakdown lists them.
	slices.SortStableFunc(g.Models, func(a, b Model) int {
		if c := cmp.Compare(b.cost, a.cost); c != 0 {
			return c
		}
		return strings.Compare(a.Model, b.Model)
	})
	if g.Models == nil {
		g.Models = []Model{}
	}
}

// round6 keeps JSON free of float noise (and golden files stable).
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// groupKeys is each call's group key.
func groupKeys(calls []Call, by By, loc *time.Location, weekStart time.Weekday) []string {
	keys := make([]string, len(calls))
	type date struct {
		y int
		m time.Month
		d int
	}
	days := map[date]string{} // ByDay: each date formatted once
	if by == ByBlock {
		for i, k := range Blocks(calls, loc) {
			keys[i] = k
		}
		return keys
	}
	for i, c := range calls {
		switch by {
		case BySession:
			keys[i] = c.Session
		case ByProject:
			keys[i] = c.Project
		case ByModel:
			keys[i] = c.Model
		default:
			if c.Time.IsZero() {
				keys[i] = untimedKey(&calls[i])
				continue
			}
			t := c.Time.In(loc)
			switch by {
			case ByDay:
				y, m, d := t.Date()
				k, ok := days[date{y, m, d}]
				if !ok {
					k = t.Format(time.DateOnly)
					days[date{y, m, d}] = k
				}
				keys[i] = k
			case ByMonth:
				keys[i] = t.Format("2006-01")
			case ByWeek:
				back := (int(t.Weekday()) - int(weekStart) + 7) % 7
				y, m, d := t.Date()
				keys[i] = time.Date(y, m, d-back, 0, 0, 0, 0, loc).Format(time.DateOnly)
			}
		}
	}
	return keys
}

// Blocks is each call's 5-hour block key (its start, RFC 3339 in loc), by
// ccusage's rule (see the package doc). Calls without a time get NoTime
// (BadTime).
func Blocks(calls []Call, loc *time.Location) []string {
	idx := make([]int, 0, len(calls))
	keys := make([]string, len(calls))
	for i, c := range calls {
		if c.Time.IsZero() {
			keys[i] = untimedKey(&calls[i])
			continue
		}
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return calls[a].Time.Compare(calls[b].Time) })
	var start, last time.Time
	var key string
	for n, i := range idx {
		t := calls[i].Time
		if n == 0 || t.Sub(start) > BlockDuration || t.Sub(last) > BlockDuration {
			start = t.UTC().Truncate(time.Hour)
			key = start.In(loc).Format(time.RFC3339)
		}
		keys[i] = key
		last = t
	}
	return keys
}

// ParseBound reads a --since/--until value: a date (2006-01-02 or
// 20060102), which means that whole day in loc, or an RFC 3339 instant.
// until selects the end of a date's day rather than its start.
func ParseBound(s string, loc *time.Location, until bool) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	for _, layout := range []string{time.DateOnly, "20060102"} {
		if d, err := time.ParseInLocation(layout, s, loc); err == nil {
			if until {
				return d.AddDate(0, 0, 1).Add(-time.Nanosecond), nil
			}
			return d, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a date (2006-01-02 or 20060102) nor an RFC 3339 time", s)
}

// LoadLocation reads a timezone (ctxsim cost's --timezone): "" or "Local" is the machine's
// zone, "UTC" is UTC, else an IANA name.
func LoadLocation(name string) (*time.Location, error) {
	switch name {
	case "", "Local", "local":
		return time.Local, nil
	case "UTC", "utc", "Z":
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, optionErrorf("{timezone} %q: not an IANA zone name (e.g. UTC, Europe/Berlin, America/New_York)", name)
	}
	return loc, nil
}
