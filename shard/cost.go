package shard

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
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

// A CostProject is one project directory of a sharded cost run: its
// identity (the project's path under the PATH it was found in, so the
// same logs mounted elsewhere go to the same shards) and its files.
type CostProject struct {
	ID    string
	First int // index of its first file in the run's file order
	Files []string
}

// CostProjects are the project directories under paths, in the run's file
// order, and that order (file → index); walk holds what the walk skipped,
// which every shard sees alike. Every path must be a Claude Code log tree
// (a *NotSplittableError says which is not).
func CostProjects(ctx context.Context, paths []string, from string, stdin io.Reader) (projects []*CostProject, fileIndex map[string]int, walk *traces.Warnings, err error) {
	fileIndex = map[string]int{}
	walk = &traces.Warnings{}
	for _, p := range paths {
		in, err := traces.PathInput(p, stdin)
		if err != nil {
			return nil, nil, nil, err
		}
		imp, err := traces.Detect(ctx, in, formats.All())
		if from != "" {
			imp, err = traces.Lookup(formats.All(), from)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if imp != formats.ClaudeCode || p == "-" {
			return nil, nil, nil, &NotSplittableError{Path: p, Format: imp.Name()}
		}
		files, err := in.Files(ctx, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }, walk)
		if err != nil {
			return nil, nil, nil, err
		}
		holds := map[string]bool{}
		for _, f := range files {
			holds[path.Dir(f)] = true
		}
		byID := map[string]*CostProject{}
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
			u := byID[proj]
			if u == nil {
				u = &CostProject{ID: proj, First: len(fileIndex)}
				byID[proj] = u
				projects = append(projects, u)
			}
			fileIndex[full] = len(fileIndex)
			u.Files = append(u.Files, full)
		}
	}
	return projects, fileIndex, walk, nil
}

// NotSplittableError is a cost --shard input that is not a Claude Code log
// tree on disk.
type NotSplittableError struct{ Path, Format string }

func (e *NotSplittableError) Error() string {
	return fmt.Sprintf("cost --shard splits Claude Code log trees; %s is %s (run cost on it in one process)", e.Path, e.Format)
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

// costUnit is one project directory's scan, as a shard cell's data.
type costUnit struct {
	Sessions []usage.Session `json:"sessions"`
	Warnings []CostWarning   `json:"warnings,omitempty"`
}

// A CostWarning is a warning with the place in the run's file order of the
// file it was first seen in, so merge can pick the run's first.
type CostWarning struct {
	traces.Warning
	FileIndex int `json:"file_index"`
}

// ScanCost scans one project's files and returns its cell, its sessions
// and its warnings.
func ScanCost(p *CostProject, fileIndex map[string]int) (Cell, []usage.Session, []CostWarning, error) {
	ss, ws, err := usage.ScanClaudeCode(p.Files...)
	if err != nil {
		return Cell{}, nil, nil, err
	}
	cu := costUnit{Sessions: ss}
	for _, w := range ws.List() {
		file := w.First[:max(strings.LastIndexByte(w.First, ':'), 0)]
		cu.Warnings = append(cu.Warnings, CostWarning{w, fileIndex[file]})
	}
	b, err := json.Marshal(cu)
	if err != nil {
		return Cell{}, nil, nil, err
	}
	return Cell{Order: []int{p.First}, Unit: p.ID, Data: b}, ss, cu.Warnings, nil
}

// A CostRender is a cost run's grouping (usage.ParseOptions' arguments),
// kept in the manifest for merge to group as the shards did.
type CostRender struct {
	By        string `json:"by"`
	Since     string `json:"since,omitempty"`
	Until     string `json:"until,omitempty"`
	Timezone  string `json:"timezone,omitempty"`
	WeekStart string `json:"week_start"`
}

// Options parses the grouping (usage.ParseOptions).
func (r CostRender) Options() (usage.Options, error) {
	return usage.ParseOptions(r.By, r.Since, r.Until, r.Timezone, r.WeekStart)
}

// A CostScan is the sessions of a sharded cost run, or of one shard of it,
// in the order the one-process scan gives them (by session id), and the
// warnings its report shows: the walk's and the projects', merged
// (mergeWarnings) as the one-process scan counts them.
type CostScan struct {
	Sessions []usage.Session
	Warnings *traces.Warnings
	// Cells are a shard's part (WritePart), Walk what its walk skipped,
	// which every shard sees alike: the manifest keeps it once.
	Cells []Cell
	Walk  []traces.Warning
}

// ScanCostShard scans the project directories under paths (CostProjects)
// that sp owns (ScanCost).
func ScanCostShard(ctx context.Context, paths []string, from string, stdin io.Reader, sp Spec) (*CostScan, error) {
	projects, fileIndex, walk, err := CostProjects(ctx, paths, from, stdin)
	if err != nil {
		return nil, err
	}
	out := &CostScan{Walk: walk.List()}
	var warnings []CostWarning
	for _, p := range projects {
		if !sp.Owns(p.ID) {
			continue
		}
		c, ss, ws, err := ScanCost(p, fileIndex)
		if err != nil {
			return nil, err
		}
		out.Cells = append(out.Cells, c)
		out.Sessions, warnings = append(out.Sessions, ss...), append(warnings, ws...)
	}
	sortSessions(out.Sessions)
	out.Warnings = &traces.Warnings{}
	out.Warnings.AddList(out.Walk)
	out.Warnings.AddList(mergeWarnings(warnings))
	return out, nil
}

// MergeCost reads the sessions and warnings of a merged cost run's cells,
// and the grouping its shards used.
func MergeCost(m *Merged) (*CostScan, CostRender, error) {
	var r CostRender
	if err := json.Unmarshal(m.Manifest.Render, &r); err != nil {
		return nil, r, fmt.Errorf("render: %v", err)
	}
	out := &CostScan{Cells: m.Cells, Walk: m.Manifest.Warnings, Warnings: &traces.Warnings{}}
	var warnings []CostWarning
	for _, c := range m.Cells {
		var cu costUnit
		if err := json.Unmarshal(c.Data, &cu); err != nil {
			return nil, r, fmt.Errorf("cell %q: %v", c.Unit, err)
		}
		out.Sessions = append(out.Sessions, cu.Sessions...)
		warnings = append(warnings, cu.Warnings...)
	}
	sortSessions(out.Sessions)
	out.Warnings.AddList(out.Walk)
	out.Warnings.AddList(mergeWarnings(warnings))
	return out, r, nil
}

// sortSessions orders sessions by id, as the one-process scan gives them.
func sortSessions(ss []usage.Session) {
	slices.SortStableFunc(ss, func(a, b usage.Session) int { return cmp.Compare(a.ID, b.ID) })
}

// mergeWarnings adds up the projects' warnings by reason, each first seen
// at the earliest file in the run's order, sorted by reason as
// traces.Warnings.List is.
func mergeWarnings(ws []CostWarning) []traces.Warning {
	by := map[string]*CostWarning{}
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

// A PricesFlagError is CheckPrices' error for a --prices file given
// where the shards used none, or missing where they used one: the command
// line is at fault.
type PricesFlagError struct{ Msg string }

func (e *PricesFlagError) Error() string { return e.Msg }

// CheckPrices checks that prices, a --prices file ("" for the embedded
// rate card), is the one m's cost shards priced with: merge prices their
// sessions again and must do so with the shards' card.
func (m *Merged) CheckPrices(prices string) error {
	switch have := m.Manifest.PricesHash(); {
	case have != "" && prices == "":
		return &PricesFlagError{"the shards priced with a --prices file: give merge the same --prices FILE"}
	case have == "" && prices != "":
		return &PricesFlagError{"--prices: the shards used the embedded rate card"}
	case have != "":
		h, err := HashPath(prices)
		if err != nil {
			return err
		}
		if h != have {
			return fmt.Errorf("--prices %s is not the file the shards priced with", prices)
		}
	}
	return nil
}
