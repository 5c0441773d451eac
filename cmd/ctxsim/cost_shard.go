package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/usage"
)

// costShard scans the project directories the shard owns
// (shard.ScanCostShard) and writes their sessions and warnings for merge;
// it prints the shard's own report.
func costShard(e *env, fs *pflag.FlagSet, paths []string, from, prices string, card *pricing.Card, opts usage.Options, render shard.CostRender, f report.Format, sh *shardFlags, out string) error {
	scan, err := shard.ScanCostShard(e.ctx, paths, from, e.stdin, sh.sp)
	var ns *shard.NotSplittableError
	if errors.As(err, &ns) {
		return usagef("%v", err)
	} else if err != nil {
		return fromError(err)
	}
	m, err := sh.manifest(fs, "cost", 0, paths, false, prices, render)
	if err != nil {
		return err
	}
	if err := printCost(e, f, scan.Sessions, scan.Warnings, card, opts); err != nil {
		return err
	}
	return sh.finish(out, m, scan.Walk, scan.Cells, nil)
}

// mergeCost prints the cost report of a sharded cost run (shard.MergeCost),
// priced with the card the shards used.
func mergeCost(e *env, m *shard.Merged, f report.Format, prices string) error {
	var pf *shard.PricesFlagError
	if err := m.CheckPrices(prices); errors.As(err, &pf) {
		return usagef("%v", err)
	} else if err != nil {
		return err
	}
	scan, r, err := shard.MergeCost(m)
	if err != nil {
		return err
	}
	opts, err := costOptions(r)
	if err != nil {
		return err
	}
	card, err := loadCard(prices)
	if err != nil {
		return err
	}
	return printCost(e, f, scan.Sessions, scan.Warnings, card, opts)
}
