package usage

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
)

// A sharded cost run splits Claude Code log trees by project directory: the
// shallowest directory on a log's path that holds .jsonl files itself
// (~/.claude/projects/<project>/), with everything below it (subagents).
// Not by session: the scan counts a response seen in two files once (a
// resumed session copies its history into a new file of the same
// project), so the files of a project must be scanned together. A
// response copied across two project directories would be counted by both
// shards; Claude Code does not write that.

// A Project is one project directory of a sharded cost run: its
// identity (the project's path under the PATH it was found in, so the
// same logs mounted elsewhere go to the same shards) and its files.
type Project struct {
	ID    string
	First int // index of its first file in the run's file order
	Files []string
}

// Projects are the project directories under paths, in the run's file
// order, and that order (file → index); walk holds what the walk skipped,
// which every shard sees alike. Every path must be a Claude Code log tree
// (a *NotSplittableError says which is not).
func Projects(ctx context.Context, paths []string, from string, stdin io.Reader) (projects []*Project, fileIndex map[string]int, walk *traces.Warnings, err error) {
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
		byID := map[string]*Project{}
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
				u = &Project{ID: proj, First: len(fileIndex)}
				byID[proj] = u
				projects = append(projects, u)
			}
			fileIndex[full] = len(fileIndex)
			u.Files = append(u.Files, full)
		}
	}
	return projects, fileIndex, walk, nil
}

// NotSplittableError is an input of a sharded cost run that is not a
// Claude Code log tree on disk.
type NotSplittableError struct{ Path, Format string }

func (e *NotSplittableError) Error() string {
	return fmt.Sprintf("%s is %s, not a Claude Code log tree on disk: it does not split by project", e.Path, e.Format)
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

// projectScan is one project directory's scan, as a shard cell's data.
type projectScan struct {
	Sessions []Session       `json:"sessions"`
	Warnings []PlacedWarning `json:"warnings,omitempty"`
}

// A PlacedWarning is a warning with the place in the run's file order of the
// file it was first seen in, so merge can pick the run's first.
type PlacedWarning struct {
	traces.Warning
	FileIndex int `json:"file_index"`
}

// ScanProject scans one project's files and returns its cell, its sessions
// and its warnings.
func ScanProject(ctx context.Context, p *Project, fileIndex map[string]int) (shard.Entry, []Session, []PlacedWarning, error) {
	ss, ws, err := ScanClaudeCode(ctx, p.Files...)
	if err != nil {
		return shard.Entry{}, nil, nil, err
	}
	cu := projectScan{Sessions: ss}
	for _, w := range ws.List() {
		file := w.First[:max(strings.LastIndexByte(w.First, ':'), 0)]
		cu.Warnings = append(cu.Warnings, PlacedWarning{w, fileIndex[file]})
	}
	b, err := json.Marshal(cu)
	if err != nil {
		return shard.Entry{}, nil, nil, err
	}
	return shard.Entry{Order: []int{p.First}, Unit: p.ID, Data: b}, ss, cu.Warnings, nil
}

// A Grouping is a cost run's grouping (ParseOptions' arguments),
// kept in the manifest for merge to group as the shards did.
type Grouping struct {
	By        string `json:"by"`
	Since     string `json:"since,omitempty"`
	Until     string `json:"until,omitempty"`
	Timezone  string `json:"timezone,omitempty"`
	WeekStart string `json:"week_start"`
}

// Options parses the grouping (ParseOptions).
func (r Grouping) Options() (Options, error) {
	return ParseOptions(r.By, r.Since, r.Until, r.Timezone, r.WeekStart)
}

// A ShardScan is the sessions of a sharded cost run, or of one shard of it,
// in the order the one-process scan gives them (by session id), and the
// warnings its report shows: the walk's and the projects', merged
// (mergeWarnings) as the one-process scan counts them.
type ShardScan struct {
	Sessions []Session
	Warnings *traces.Warnings
	// Entries are a shard's part (shard.WriteDir), Walk what its walk skipped,
	// which every shard sees alike: the manifest keeps it once.
	Entries []shard.Entry
	Walk    []traces.Warning
}

// ScanShard scans the project directories under paths (Projects)
// that sp owns (ScanCost).
func ScanShard(ctx context.Context, paths []string, from string, stdin io.Reader, sp shard.Spec) (*ShardScan, error) {
	projects, fileIndex, walk, err := Projects(ctx, paths, from, stdin)
	if err != nil {
		return nil, err
	}
	out := &ShardScan{Walk: walk.List()}
	var warnings []PlacedWarning
	for _, p := range projects {
		if !sp.Owns(p.ID) {
			continue
		}
		c, ss, ws, err := ScanProject(ctx, p, fileIndex)
		if err != nil {
			return nil, err
		}
		out.Entries = append(out.Entries, c)
		out.Sessions, warnings = append(out.Sessions, ss...), append(warnings, ws...)
	}
	sortSessions(out.Sessions)
	out.Warnings = &traces.Warnings{}
	out.Warnings.AddList(out.Walk)
	out.Warnings.AddList(mergeWarnings(warnings))
	return out, nil
}

// MergeShards reads the sessions and warnings of a merged cost run's cells,
// and the grouping its shards used.
func MergeShards(m *shard.Merged) (*ShardScan, Grouping, error) {
	var r Grouping
	if err := json.Unmarshal(m.Manifest.Render, &r); err != nil {
		return nil, r, fmt.Errorf("render: %v", err)
	}
	out := &ShardScan{Entries: m.Entries, Walk: m.Manifest.Warnings, Warnings: &traces.Warnings{}}
	var warnings []PlacedWarning
	for _, c := range m.Entries {
		var cu projectScan
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
func sortSessions(ss []Session) {
	slices.SortStableFunc(ss, func(a, b Session) int { return cmp.Compare(a.ID, b.ID) })
}

// mergeWarnings adds up the projects' warnings by reason, each first seen
// at the earliest file in the run's order, sorted by reason as
// traces.Warnings.List is.
func mergeWarnings(ws []PlacedWarning) []traces.Warning {
	by := map[string]*PlacedWarning{}
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
