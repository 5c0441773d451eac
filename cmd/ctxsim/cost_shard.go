package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/usage"
)

// A sharded cost splits Claude Code log trees by project directory: the
// shallowest directory on a log's path that holds .jsonl files itself
// (~/.claude/projects/<project>/), with everything below it (subagents).
// Not by session: the scan counts a response seen in two files once (a
// resumed session copies its history into a new file of the same
// project), so the files of a project must be scanned together. A
// response copied across two project directories would be counted by both
// shards; Claude Code does not write that.

// costUnit is one project directory's scan, as a shard cell's data.
type costUnit struct {
	Sessions []costSessionJSON `json:"sessions"`
	Warnings []costWarning     `json:"warnings,omitempty"`
}

type costSessionJSON struct {
	ID      string         `json:"id"`
	Parent  string         `json:"parent,omitempty"`
	Start   time.Time      `json:"start"`
	Project string         `json:"project,omitempty"`
	File    string         `json:"file,omitempty"`
	Calls   []costCallJSON `json:"calls"`
}

type costCallJSON struct {
	At       time.Time    `json:"at,omitzero"`
	Model    string       `json:"model"`
	Usage    traces.Usage `json:"usage"`
	Requests int          `json:"requests,omitempty"`
}

// costRender is the grouping flags, for merge to group as the shards did.
type costRender struct {
	By        string `json:"by"`
	Since     string `json:"since,omitempty"`
	Until     string `json:"until,omitempty"`
	Timezone  string `json:"timezone,omitempty"`
	WeekStart string `json:"week_start"`
}

// costWarning is a warning with the place in the run's file order of the
// file it was first seen in, so merge can pick the run's first.
type costWarning struct {
	traces.Warning
	FileIndex int `json:"file_index"`
}

// costShard scans the project directories the shard owns and writes their
// sessions and warnings for merge; it prints the shard's own report.
func costShard(e *env, fs *pflag.FlagSet, paths []string, from, prices string, card *pricing.Card, opts usage.Options, render costRender, f report.Format, sh *shardFlags, out string) error {
	type unit struct {
		id    string
		first int // index of its first file in the run's file order
		files []string
	}
	var units []*unit
	fileIndex := map[string]int{}
	// What the walk skipped every shard sees alike: it goes in the
	// manifest, once, not in the cells.
	walk := &traces.Warnings{}
	for _, p := range paths {
		in, err := traces.PathInput(p, e.stdin)
		if err != nil {
			return err
		}
		imp, err := traces.Detect(e.ctx, in, formats.All())
		if from != "" {
			imp, err = traces.Lookup(formats.All(), from)
		}
		if err != nil {
			return fromError(err)
		}
		if imp != formats.ClaudeCode || p == "-" {
			return usagef("cost --shard splits Claude Code log trees; %s is %s (run cost on it in one process)", p, imp.Name())
		}
		files, err := in.Files(e.ctx, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }, walk)
		if err != nil {
			return err
		}
		holds := map[string]bool{}
		for _, f := range files {
			holds[path.Dir(f)] = true
		}
		byID := map[string]*unit{}
		for _, f := range files {
			full, _ := in.OSPath(f)
			dir := path.Dir(f)
			proj := dir
			for _, d := range prefixes(dir) {
				if holds[d] {
					proj = d
					break
				}
			}
			// The identity is the project's path under p, not p itself:
			// the same logs mounted elsewhere go to the same shards.
			id := proj
			u := byID[id]
			if u == nil {
				u = &unit{id: id, first: len(fileIndex)}
				byID[id] = u
				units = append(units, u)
			}
			fileIndex[full] = len(fileIndex)
			u.files = append(u.files, full)
		}
	}
	var all []costSession
	var warnings []costWarning
	for _, u := range units {
		if !sh.sp.Owns(u.id) {
			continue
		}
		us, ws, err := claudecode.ScanUsage(u.files...)
		if err != nil {
			return err
		}
		var cu costUnit
		var ss []costSession
		for _, x := range us {
			cs := costSession{id: x.ID, parent: x.Parent, start: x.Start, project: projectOf(x.File), file: x.File}
			for _, c := range x.Calls {
				cs.calls = append(cs.calls, costCall{at: c.Time, model: c.Model, usage: c.Usage})
			}
			ss = append(ss, cs)
		}
		for _, cs := range ss {
			j := costSessionJSON{ID: cs.id, Parent: cs.parent, Start: cs.start, Project: cs.project, File: cs.file}
			for _, c := range cs.calls {
				j.Calls = append(j.Calls, costCallJSON{c.at, c.model, c.usage, c.requests})
			}
			cu.Sessions = append(cu.Sessions, j)
		}
		for _, w := range ws.List() {
			file := w.First[:max(strings.LastIndexByte(w.First, ':'), 0)]
			cu.Warnings = append(cu.Warnings, costWarning{w, fileIndex[file]})
		}
		b, err := json.Marshal(cu)
		if err != nil {
			return err
		}
		sh.cells = append(sh.cells, shard.Cell{Order: []int{u.first}, Unit: u.id, Data: b})
		all = append(all, ss...)
		warnings = append(warnings, cu.Warnings...)
	}
	in, err := inputs(paths, false, prices)
	if err != nil {
		return err
	}
	m, err := manifest(fs, "cost", 0, in, render)
	if err != nil {
		return err
	}
	slices.SortStableFunc(all, func(a, b costSession) int { return cmp.Compare(a.id, b.id) })
	ws := &traces.Warnings{}
	ws.AddList(walk.List())
	ws.AddList(mergeWarnings(warnings))
	if err := printCost(e, f, all, ws, card, opts); err != nil {
		return err
	}
	return sh.write(out, m, walk.List())
}

// prefixes are the directories from the top of dir down to dir: ".",
// "a", "a/b" for "a/b".
func prefixes(dir string) []string {
	out := []string{"."}
	if dir == "." {
		return out
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		out = append(out, strings.Join(parts[:i+1], "/"))
	}
	return out
}

// mergeWarnings adds up the units' warnings by reason, each first seen at
// the earliest file in the run's order, sorted by reason as
// traces.Warnings.List is.
func mergeWarnings(ws []costWarning) []traces.Warning {
	by := map[string]*costWarning{}
	var order []string
	for _, w := range ws {
		x := by[w.Reason]
		if x == nil {
			c := w
			by[w.Reason] = &c
			order = append(order, w.Reason)
			continue
		}
		x.Count += w.Count
		if w.FileIndex < x.FileIndex {
			x.First, x.FileIndex = w.First, w.FileIndex
		}
	}
	out := make([]traces.Warning, 0, len(order))
	for _, r := range order {
		out = append(out, by[r].Warning)
	}
	slices.SortFunc(out, func(a, b traces.Warning) int { return cmp.Compare(a.Reason, b.Reason) })
	return out
}

// mergeCost prints the cost report of a sharded cost run: every project's
// sessions, in the order the one-process scan gives them (by session id),
// priced with the card the shards used.
func mergeCost(e *env, m *shard.Merged, f report.Format, prices string) error {
	var have string
	for _, in := range m.Manifest.Inputs {
		if in.Name == "--prices" {
			have = in.Hash
		}
	}
	switch {
	case have != "" && prices == "":
		return usagef("the shards priced with a --prices file: give merge the same --prices FILE")
	case have == "" && prices != "":
		return usagef("--prices: the shards used the embedded rate card")
	case have != "":
		h, err := hashPath(prices)
		if err != nil {
			return err
		}
		if h != have {
			return fmt.Errorf("--prices %s is not the file the shards priced with", prices)
		}
	}
	var r costRender
	if err := json.Unmarshal(m.Manifest.Render, &r); err != nil {
		return fmt.Errorf("render: %v", err)
	}
	opts, err := costOptions(r.By, r.Since, r.Until, r.Timezone, r.WeekStart)
	if err != nil {
		return err
	}
	card, err := loadCard(prices)
	if err != nil {
		return err
	}
	var all []costSession
	var warnings []costWarning
	for _, c := range m.Cells {
		var cu costUnit
		if err := json.Unmarshal(c.Data, &cu); err != nil {
			return fmt.Errorf("cell %q: %v", c.Unit, err)
		}
		for _, j := range cu.Sessions {
			cs := costSession{id: j.ID, parent: j.Parent, start: j.Start, project: j.Project, file: j.File}
			for _, k := range j.Calls {
				cs.calls = append(cs.calls, costCall{at: k.At, model: k.Model, usage: k.Usage, requests: k.Requests})
			}
			all = append(all, cs)
		}
		warnings = append(warnings, cu.Warnings...)
	}
	slices.SortStableFunc(all, func(a, b costSession) int { return cmp.Compare(a.id, b.id) })
	ws := &traces.Warnings{}
	ws.AddList(m.Manifest.Warnings)
	ws.AddList(mergeWarnings(warnings))
	return printCost(e, f, all, ws, card, opts)
}
