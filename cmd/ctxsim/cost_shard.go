package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/usage"
)

// costRender is the grouping flags, for merge to group as the shards did.
type costRender struct {
	By        string `json:"by"`
	Since     string `json:"since,omitempty"`
	Until     string `json:"until,omitempty"`
	Timezone  string `json:"timezone,omitempty"`
	WeekStart string `json:"week_start"`
}

// costShard scans the project directories the shard owns (shard.CostProjects)
// and writes their sessions and warnings for merge; it prints the shard's
// own report.
func costShard(e *env, fs *pflag.FlagSet, paths []string, from, prices string, card *pricing.Card, opts usage.Options, render costRender, f report.Format, sh *shardFlags, out string) error {
	projects, fileIndex, walk, err := shard.CostProjects(e.ctx, paths, from, e.stdin)
	var ns *shard.NotSplittableError
	if errors.As(err, &ns) {
		return usagef("%v", err)
	} else if err != nil {
		return fromError(err)
	}
	var all []usage.Session
	var warnings []shard.CostWarning
	for _, p := range projects {
		if !sh.sp.Owns(p.ID) {
			continue
		}
		c, ss, ws, err := shard.ScanCost(p, fileIndex)
		if err != nil {
			return err
		}
		sh.cells = append(sh.cells, c)
		all, warnings = append(all, ss...), append(warnings, ws...)
	}
	in, err := inputs(paths, false, prices)
	if err != nil {
		return err
	}
	m, err := manifest(fs, "cost", 0, in, render)
	if err != nil {
		return err
	}
	shard.SortSessions(all)
	ws := &traces.Warnings{}
	ws.AddList(walk.List())
	ws.AddList(shard.MergeWarnings(warnings))
	if err := printCost(e, f, all, ws, card, opts); err != nil {
		return err
	}
	return sh.write(out, m, walk.List())
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
	all, warnings, err := shard.CostCells(m.Cells)
	if err != nil {
		return err
	}
	ws := &traces.Warnings{}
	ws.AddList(m.Manifest.Warnings)
	ws.AddList(shard.MergeWarnings(warnings))
	return printCost(e, f, all, ws, card, opts)
}
