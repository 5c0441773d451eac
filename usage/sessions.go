package usage

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// A Session is one session's billed calls, as the cost report reads them:
// from the fast Claude Code scan or from imported events. Its JSON is a
// sharded cost run's cell data (package shard).
type Session struct {
	ID     string    `json:"id"`
	Parent string    `json:"parent,omitempty"`
	Start  time.Time `json:"start"`
	// Project groups ByProject; File is where the session was read (for
	// warnings).
	Project string        `json:"project,omitempty"`
	File    string        `json:"file,omitempty"`
	Calls   []SessionCall `json:"calls"`
}

// A SessionCall is one billed call of a Session.
type SessionCall struct {
	At    time.Time    `json:"at,omitzero"`
	Model string       `json:"model"`
	Usage traces.Usage `json:"usage"`
	// Requests is how many API calls the usage sums (0 means 1): a
	// hermes session database keeps only per-session totals.
	Requests int `json:"requests,omitempty"`
	// Line is where the call is in its session's File (0: not known, as
	// for an imported session), for warnings.
	Line int `json:"line,omitempty"`
	// BadTime: the log's timestamp was no time a call has (At is zero).
	BadTime bool `json:"bad_time,omitempty"`
}

// place names where c is for a warning: file:line, or the file and the
// session when the line is not known.
func (s *Session) place(c *SessionCall) string {
	if c.Line > 0 {
		return fmt.Sprintf("%s:%d", s.File, c.Line)
	}
	return s.File + " (session " + s.ID + ")"
}

// Warning reasons of CostOf.
const (
	WarnUnpriced = "no price for model %q: its calls count $0 (a price file with a LiteLLM entry for it prices them)"
	WarnUntimed  = "skipped call without a time: a since/until window cannot place it"
	WarnBadTimed = "skipped call with a bad timestamp: a since/until window cannot place it"
)

// ProjectOf is a Claude Code log's project, as ccusage names it: the folder
// under .../projects/ (Claude Code's ~/.claude/projects/<project>/), else
// the folder holding the session (a subagent's: its parent's).
func ProjectOf(file string) string {
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

// A SessionRow is one session of a BySession Cost, with its subagents.
type SessionRow struct {
	ID       string        `json:"id"`
	Model    string        `json:"model"`
	First    time.Time     `json:"first,omitzero"`
	Last     time.Time     `json:"last,omitzero"`
	Requests int           `json:"requests"`
	Tokens   Tokens        `json:"tokens"`
	CostUSD  float64       `json:"cost_usd"`
	HitRate  float64       `json:"cache_hit_rate"`
	Models   []Model       `json:"models"`
	Children []*SessionRow `json:"children"`

	start time.Time
}

// Cost is the cost report of sessions (ctxsim cost): their calls grouped
// by Options.By and, BySession, the tree of sessions and subagents.
type Cost struct {
	By       By     `json:"by"`
	Timezone string `json:"timezone"`
	Since    string `json:"since,omitempty"`
	Until    string `json:"until,omitempty"`
	// Groups are the calls grouped By; a session's subagents count in
	// their root session, as ccusage counts them.
	Groups []Group `json:"groups"`
	// Sessions is BySession's tree: each session with its subagents.
	Sessions []*SessionRow    `json:"sessions,omitempty"`
	Totals   Totals           `json:"totals"`
	Unpriced []Unpriced       `json:"unpriced"`
	Warnings []traces.Warning `json:"warnings"`
}

// CostOf prices and groups the sessions' calls. A model p cannot price
// costs $0: one warning in ws per such call, naming the model.
func CostOf(ss []Session, p Pricer, o Options, ws *traces.Warnings) *Cost {
	parentOf := map[string]string{}
	for _, s := range ss {
		if _, dup := parentOf[s.ID]; !dup || s.Parent != "" {
			parentOf[s.ID] = s.Parent
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
	// Sized once: a tree of a few hundred MB has tens of thousands of calls,
	// and growing these by doubling was a tenth of `cost`'s time.
	n := 0
	for _, s := range ss {
		n += len(s.Calls)
	}
	grouped := make([]Call, 0, n)
	var own []Call // each session's own calls: only BySession's tree needs them
	if o.By == BySession {
		own = make([]Call, 0, n)
	}
	bounded := !o.Since.IsZero() || !o.Until.IsZero()
	for _, s := range ss {
		r := root(s.ID)
		for i := range s.Calls {
			c := &s.Calls[i]
			if bounded && c.At.IsZero() {
				// Aggregate would drop it in silence.
				if c.BadTime {
					ws.AddPlace(s.place(c), WarnBadTimed)
				} else {
					ws.AddPlace(s.place(c), WarnUntimed)
				}
				continue
			}
			uc := Call{Time: c.At, BadTime: c.BadTime, Session: r, Project: s.Project, Model: c.Model, Usage: c.Usage, Requests: c.Requests}
			grouped = append(grouped, uc)
			if o.By == BySession {
				uc.Session = s.ID
				own = append(own, uc)
			}
		}
	}
	rep := &Cost{By: o.By, Timezone: o.Loc.String()}
	if !o.Since.IsZero() {
		rep.Since = o.Since.In(o.Loc).Format(time.RFC3339)
	}
	if !o.Until.IsZero() {
		rep.Until = o.Until.In(o.Loc).Format(time.RFC3339)
	}
	g := Aggregate(grouped, p, o)
	rep.Groups, rep.Totals, rep.Unpriced = g.Groups, g.Totals, g.Unpriced
	if rep.Unpriced == nil {
		rep.Unpriced = []Unpriced{}
	}
	if len(rep.Unpriced) > 0 {
		// One warning per call, at the call (it pointed at file:0).
		reason := make(map[string]string, len(rep.Unpriced))
		for _, u := range rep.Unpriced {
			reason[u.Model] = fmt.Sprintf(WarnUnpriced, u.Model)
		}
		for _, s := range ss {
			for i := range s.Calls {
				c := &s.Calls[i]
				if r, ok := reason[c.Model]; ok && o.within(c.At) {
					ws.AddPlace(s.place(c), r)
				}
			}
		}
	}
	if o.By != BySession {
		return rep
	}
	per := Aggregate(own, p, Options{By: BySession, Loc: o.Loc, Since: o.Since, Until: o.Until})
	rows := map[string]*SessionRow{}
	startOf := map[string]time.Time{}
	for _, s := range ss {
		if _, ok := startOf[s.ID]; !ok {
			startOf[s.ID] = s.Start
		}
	}
	order := make([]*SessionRow, 0, len(per.Groups))
	for _, gr := range per.Groups {
		r := &SessionRow{ID: gr.Key, First: gr.First, Last: gr.Last, Requests: gr.Requests, Tokens: gr.Tokens,
			CostUSD: gr.CostUSD, HitRate: gr.HitRate, Models: gr.Models, Children: []*SessionRow{}, start: startOf[gr.Key]}
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
	rep.Sessions = []*SessionRow{}
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
func firstModel(ss []Session, id string) string {
	for _, s := range ss {
		if s.ID == id && len(s.Calls) > 0 {
			return s.Calls[0].Model
		}
	}
	return ""
}
