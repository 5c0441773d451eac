package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/traces/synth"
)

func setup(t *testing.T) *runner.Runner {
	t.Helper()
	rn, err := runner.New(nil, "auto", 1)
	if err != nil {
		t.Fatal(err)
	}
	return rn
}

func recorded(t *testing.T) []*traces.Session {
	t.Helper()
	ss, _, err := formats.Open(context.Background(), []string{"../testdata/claude-code"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// recordedAs is recorded with every session's Tenant set to tenant, as
// the command under test sets it ("" is each session its own account).
func recordedAs(t *testing.T, tenant string) []*traces.Session {
	t.Helper()
	ss := recorded(t)
	for _, s := range ss {
		s.Tenant = tenant
	}
	return ss
}

func synthetic(t *testing.T) []*traces.Session {
	t.Helper()
	ss, err := synth.Generate(context.Background(), "coding-burst", 3, 1, synth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// direct replays policies over sessions' tenants with runner alone: the
// reference Compare and Whatif must agree with.
func direct(t *testing.T, ss []*traces.Session, specs []runner.Policy) map[string]float64 {
	t.Helper()
	rn := setup(t)
	plan, err := rn.Plan(context.Background(), runner.Tenants(ss), specs, runner.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	err = rn.Run(context.Background(), plan, runner.RunOptions{Workers: 1}, func(c *runner.Cell) {
		for _, r := range c.Result.Runs {
			out[r.Trace+"/"+r.Policy] = r.CostUSD
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompareMatchesCellsAndShards(t *testing.T) {
	specs, err := runner.ResolvePolicies([]string{"hermes-default", "hermes-micro"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := direct(t, synthetic(t), specs)
	// The hooks: told how many cells, each one done, then the end, once.
	var hooks []string
	o := runner.Options{Workers: 2, Records: true,
		Start: func(n int) { hooks = append(hooks, fmt.Sprint("start ", n)) },
		Done:  func(*runner.Cell) { hooks = append(hooks, "done") },
		End:   func() { hooks = append(hooks, "end") }}
	rp, err := runner.Compare(context.Background(), setup(t), synthetic(t), specs, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(hooks, ","); got != "start 6,done,done,done,done,done,done,end" {
		t.Errorf("hooks: %s", got)
	}
	if len(rp.Runs) != len(want) || len(rp.Runs) != 6 {
		t.Fatalf("%d runs, want %d (3 sessions × 2 policies)", len(rp.Runs), len(want))
	}
	for i, r := range rp.Runs {
		if r.CostUSD <= 0 || r.CostUSD != want[r.Trace+"/"+r.Policy] {
			t.Errorf("%s/%s: $%v, runner alone $%v", r.Trace, r.Policy, r.CostUSD, want[r.Trace+"/"+r.Policy])
		}
		// Sorted by trace, then in the policies' order.
		if r.Policy != rp.Policies[i%2] {
			t.Errorf("run %d: policy %s, want %s", i, r.Policy, rp.Policies[i%2])
		}
	}
	if len(rp.Records) == 0 || len(rp.Labels) != 3 {
		t.Errorf("%d records, %d labels: want records kept and 3 labels", len(rp.Records), len(rp.Labels))
	}
	for _, r := range rp.Runs {
		if w := rp.Workloads[r.Trace]; w != "coding-burst" {
			t.Errorf("%s: workload %q, want coding-burst", r.Trace, w)
		}
	}
	// Two shards own every tenant once, with the same figures.
	n := 0
	for k := 1; k <= 2; k++ {
		sp, _ := shard.Parse([]string{"", "1/2", "2/2"}[k])
		part, err := runner.Compare(context.Background(), setup(t), synthetic(t), specs, runner.Options{Workers: 1, Shard: sp})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range part.Entries {
			var runs []results.RunSummary
			if err := json.Unmarshal(e.Runs, &runs); err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				n++
				if r.CostUSD != want[r.Trace+"/"+r.Policy] {
					t.Errorf("shard %d: %s/%s: $%v, want $%v", k, r.Trace, r.Policy, r.CostUSD, want[r.Trace+"/"+r.Policy])
				}
			}
		}
	}
	if n != 6 {
		t.Errorf("the shards ran %d runs, want 6", n)
	}
}

func TestWhatif(t *testing.T) {
	specs, err := runner.WhatifPolicies([]string{"ttl-1h"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := runner.Whatif(context.Background(), setup(t), recorded(t), specs, runner.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Policies) != 2 || rp.Policies[0] != runner.RecordedObserved().Name || rp.Policies[1] != "ttl-1h" {
		t.Fatalf("policies %v, want the recorded-observed baseline, then ttl-1h", rp.Policies)
	}
	// One account: the same cells as experiment's on sessions of one tenant.
	ss := recordedAs(t, "whatif")
	want := direct(t, ss, append([]runner.Policy{runner.RecordedObserved()}, specs...))
	if len(rp.Runs) != len(want) || len(rp.Runs) < 2 {
		t.Fatalf("%d runs, want %d", len(rp.Runs), len(want))
	}
	for _, r := range rp.Runs {
		if r.CostUSD <= 0 || r.CostUSD != want[r.Trace+"/"+r.Policy] {
			t.Errorf("%s/%s: $%v, runner alone $%v", r.Trace, r.Policy, r.CostUSD, want[r.Trace+"/"+r.Policy])
		}
	}
	rep := results.NewWhatif(rp.Runs, rp.Policies)
	if len(rep.Sessions) == 0 {
		t.Errorf("the what-if report has no session")
	}
	if _, err := runner.Whatif(context.Background(), setup(t), synthetic(t), specs, runner.Options{Workers: 1}); !errors.Is(err, runner.ErrNoRecorded) {
		t.Errorf("synthetic sessions: err %v, want ErrNoRecorded", err)
	}
}

func TestFidelity(t *testing.T) {
	rep, _, err := runner.Fidelity(context.Background(), setup(t), recorded(t), runner.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Each session its own account, under the recorded policy.
	ss := recordedAs(t, "")
	want := direct(t, ss, []runner.Policy{runner.Recorded()})
	if len(rep.Sessions) == 0 || len(rep.Sessions) != len(want) {
		t.Fatalf("%d sessions, want %d", len(rep.Sessions), len(want))
	}
	for _, s := range rep.Sessions {
		if s.RecordedUSD <= 0 || s.ReplayUSD != want[s.Trace+"/"+runner.Recorded().Name] {
			t.Errorf("%s: recorded $%v, replay $%v; runner alone $%v", s.Trace, s.RecordedUSD, s.ReplayUSD, want[s.Trace+"/recorded"])
		}
	}
	if len(rep.Skipped) != 0 {
		t.Errorf("skipped %v", rep.Skipped)
	}
	if _, _, err := runner.Fidelity(context.Background(), setup(t), synthetic(t), runner.Options{Workers: 1}); !errors.Is(err, runner.ErrNoCells) {
		t.Errorf("synthetic sessions: err %v, want ErrNoCells", err)
	}
}

func TestSweepResumes(t *testing.T) {
	grid, err := runner.NewGrid("hermes-micro", nil, []string{"prompt_caching.cache_ttl=5m,1h"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	points := grid.Points
	want := direct(t, synthetic(t), points)
	var buf bytes.Buffer
	journal := func() (*runner.Journal, map[string][]results.RunSummary, func() error, error) {
		return runner.NewJournal(&buf, "cells.jsonl"), nil, func() error { return nil }, nil
	}
	first, err := runner.Sweep(context.Background(), setup(t), synthetic(t), points, runner.Options{Workers: 2}, journal, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Runs) != 6 {
		t.Fatalf("%d runs, want 6 (3 sessions × 2 grid points)", len(first.Runs))
	}
	for _, r := range first.Runs {
		if r.CostUSD <= 0 || r.CostUSD != want[r.Trace+"/"+r.Policy] {
			t.Errorf("%s/%s: $%v, runner alone $%v", r.Trace, r.Policy, r.CostUSD, want[r.Trace+"/"+r.Policy])
		}
	}
	// Resumed from the journal, nothing runs again and the runs are the same.
	lines, err := runner.ReadJournal(bytes.NewReader(buf.Bytes()), "cells.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := runner.CompleteCells(lines)
	resume := func() (*runner.Journal, map[string][]results.RunSummary, func() error, error) {
		return runner.NewJournal(io.Discard, "cells.jsonl"), done, func() error { return nil }, nil
	}
	todo, got, of := -1, -1, -1
	o := runner.Options{Workers: 1, Start: func(n int) { todo = n }}
	again, err := runner.Sweep(context.Background(), setup(t), synthetic(t), points, o, resume, func(n, m int) { got, of = n, m })
	if err != nil {
		t.Fatal(err)
	}
	if todo != 0 || got != 6 || of != 6 {
		t.Errorf("resume: %d to run, %d of %d done; want 0, 6 of 6", todo, got, of)
	}
	if len(again.Runs) != len(first.Runs) {
		t.Fatalf("resumed: %d runs, want %d", len(again.Runs), len(first.Runs))
	}
	for i := range again.Runs {
		if again.Runs[i].CostUSD != first.Runs[i].CostUSD || again.Runs[i].Trace != first.Runs[i].Trace {
			t.Errorf("run %d: resumed %s $%v, first %s $%v", i, again.Runs[i].Trace, again.Runs[i].CostUSD, first.Runs[i].Trace, first.Runs[i].CostUSD)
		}
	}
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	l, err := runner.Load(ctx, runner.Workload{Profiles: []string{"coding-burst", "cron"}, PerProfile: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Sessions) != 4 || l.Callless != 0 || l.Warnings.Len() != 0 {
		t.Errorf("2 profiles × 2: %d sessions, %d callless, %d warnings; want 4, 0, 0", len(l.Sessions), l.Callless, l.Warnings.Len())
	}
	l, err = runner.Load(ctx, runner.Workload{Paths: []string{"../testdata/claude-code"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := recorded(t); len(l.Sessions) != len(want) || len(want) == 0 {
		t.Errorf("traces: %d sessions, formats.Open %d", len(l.Sessions), len(want))
	}
	suite, err := runner.Load(ctx, runner.Workload{PerProfile: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(suite.Sessions) <= len(l.Sessions) {
		t.Errorf("the suite has %d sessions, want the recorded ones (%d) and a session per profile", len(suite.Sessions), len(l.Sessions))
	}
	var ie *runner.InputError
	if _, err := runner.Load(ctx, runner.Workload{Profiles: []string{"no-such"}, PerProfile: 1}); !errors.As(err, &ie) || !ie.Usage ||
		!strings.HasPrefix(ie.Name(func(in string) string { return "--" + in }), "--profile: ") {
		t.Errorf("unknown profile: err %v, want an *InputError naming the {profile}", err)
	}
}

// Two shards of a compare, written and joined, are the unsharded run.
func TestJoinCompareShards(t *testing.T) {
	specs, err := runner.ResolvePolicies([]string{"hermes-default", "hermes-micro"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := runner.Compare(context.Background(), setup(t), synthetic(t), specs, runner.Options{Workers: 1, Records: true})
	if err != nil {
		t.Fatal(err)
	}
	render := runner.CompareRender{Policies: whole.Policies}
	var dirs []string
	for _, k := range []string{"1/2", "2/2"} {
		sp, _ := shard.Parse(k)
		rn := setup(t)
		part, err := runner.Compare(context.Background(), rn, synthetic(t), specs, runner.Options{Workers: 1, Shard: sp, Records: true})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		// A shard writes its output set (records.jsonl), then its part.
		if err := part.Outputs("ctxsim compare", rn, nil).Write(dir, ""); err != nil {
			t.Fatal(err)
		}
		m, err := shard.NewManifest("compare", 1, nil, nil, render)
		if err != nil {
			t.Fatal(err)
		}
		if err := shard.WriteDir(dir, sp, part.Entries, m, nil); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	m, err := shard.Merge(context.Background(), dirs)
	if err != nil {
		t.Fatal(err)
	}
	j, err := runner.Join(m, "manifest.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := j.Render.(runner.CompareRender); !ok || len(r.Policies) != 2 {
		t.Fatalf("render %#v, want the CompareRender written", j.Render)
	}
	got := j.Outputs.Runs
	if len(got) != len(whole.Runs) || len(got) != 6 {
		t.Fatalf("joined %d runs, want %d", len(got), len(whole.Runs))
	}
	for i := range got {
		if got[i].Trace != whole.Runs[i].Trace || got[i].Policy != whole.Runs[i].Policy || got[i].CostUSD != whole.Runs[i].CostUSD {
			t.Errorf("run %d: joined %s/%s $%v, unsharded %s/%s $%v", i, got[i].Trace, got[i].Policy, got[i].CostUSD,
				whole.Runs[i].Trace, whole.Runs[i].Policy, whole.Runs[i].CostUSD)
		}
	}
	if len(j.Outputs.Records) != len(whole.Records) {
		t.Errorf("joined %d records, unsharded %d", len(j.Outputs.Records), len(whole.Records))
	}
	// The joined table prints byte for byte as the unsharded run's.
	for _, f := range []report.Format{report.Text, report.JSON} {
		var joined, unsharded bytes.Buffer
		if err := j.Print(&joined, f); err != nil {
			t.Fatal(err)
		}
		if err := render.Print(&unsharded, f, whole.Outputs("ctxsim compare", setup(t), nil)); err != nil {
			t.Fatal(err)
		}
		if joined.Len() == 0 || joined.String() != unsharded.String() {
			t.Errorf("%s: joined table\n%s\nunsharded\n%s", f, joined.String(), unsharded.String())
		}
	}
	dir := t.TempDir()
	if err := j.Write(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("Write: %v", err)
	}
}

func TestRun(t *testing.T) {
	// The default policy: recorded for sessions with recorded usage.
	rp, res, err := runner.ReplayTrace(context.Background(), setup(t), recorded(t), "", nil, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ss := recordedAs(t, "run")
	want := direct(t, ss, []runner.Policy{runner.Recorded()})
	if len(rp.Runs) != len(want) || len(rp.Runs) < 2 || res == nil || len(rp.Records) == 0 {
		t.Fatalf("%d runs (%d records), want %d, every session one tenant", len(rp.Runs), len(rp.Records), len(want))
	}
	for _, r := range rp.Runs {
		if r.Policy != runner.Recorded().Name || r.CostUSD <= 0 || r.CostUSD != want[r.Trace+"/"+r.Policy] {
			t.Errorf("%s/%s: $%v, runner alone $%v", r.Trace, r.Policy, r.CostUSD, want[r.Trace+"/"+r.Policy])
		}
	}
	// hermes-default for synthetic sessions; recorded needs recorded usage.
	if rp, _, err := runner.ReplayTrace(context.Background(), setup(t), synthetic(t), "", nil, runner.Options{}); err != nil {
		t.Errorf("synthetic sessions: %v", err)
	} else if rp.Policies[0] != "hermes-default" || rp.Runs[0].Policy != "hermes-default" {
		t.Errorf("synthetic sessions: policies %v, want hermes-default", rp.Policies)
	}
	var se *runner.InputError
	if _, _, err := runner.ReplayTrace(context.Background(), setup(t), synthetic(t), "recorded", nil, runner.Options{}); !errors.As(err, &se) {
		t.Errorf("recorded on synthetic sessions: err %v, want a InputError", err)
	}
	if _, _, err := runner.ReplayTrace(context.Background(), setup(t), nil, "", nil, runner.Options{}); !errors.Is(err, runner.ErrNoSessions) {
		t.Errorf("no sessions: err %v, want ErrNoSessions", err)
	}
}

func TestSuite(t *testing.T) {
	// Every preset on every trace, and recorded only where there is a
	// recorded bill.
	ss := append(synthetic(t), recordedAs(t, "recorded")...)
	res, err := runner.SuiteResults(context.Background(), setup(t), ss, runner.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	n, trace := map[string]int{}, map[string]bool{}
	for _, r := range res.Runs {
		n[r.Policy]++
		trace[r.Trace] = true
	}
	presets := policies.PresetNames()
	if len(n) != len(presets)+1 {
		t.Errorf("runs by policy %v: want every preset and %s", n, sim.RecordedName)
	}
	for _, p := range presets {
		if n[p] != len(trace) {
			t.Errorf("%s: %d runs, want one per trace (%d)", p, n[p], len(trace))
		}
	}
	if r := n[sim.RecordedName]; r == 0 || r >= len(trace) {
		t.Errorf("%s: %d runs, want one per recorded trace only (not the 3 synthetic of %d)", sim.RecordedName, r, len(trace))
	}
}

func TestBreakeven(t *testing.T) {
	rn := setup(t)
	p, err := rn.Prices.Lookup("claude-opus-4-6")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := results.NewBreakevenReport(p, 0.05, 0)
	if err != nil {
		t.Fatal(err)
	}
	started, done, ended := 0, 0, 0
	o := runner.Options{Start: func(n int) { started = n }, Done: func(*runner.Cell) { done++ }, End: func() { ended++ }}
	if err := runner.Breakeven(context.Background(), rn, rep, recorded(t), p, true, o); err != nil {
		t.Fatal(err)
	}
	// The verdict is the replays' (whatif's ttl-5m and ttl-1h), one
	// account: each root session priced under both tiers.
	if !rep.Replayed || rep.Totals == nil || len(rep.Sessions) == 0 || rep.Totals.Sessions != len(rep.Sessions) {
		t.Fatalf("replayed %v, %d sessions, totals %+v: want every root session's replayed tier costs", rep.Replayed, len(rep.Sessions), rep.Totals)
	}
	for _, s := range rep.Sessions {
		if s.Cost5m <= 0 || s.Cost1h <= 0 || s.Savings1h != s.Cost5m-s.Cost1h {
			t.Errorf("%s: 5m $%v, 1h $%v, savings $%v", s.ID, s.Cost5m, s.Cost1h, s.Savings1h)
		}
	}
	// The hindsight replay ran its one tenant and found idle gaps.
	if started != 1 || done != 1 || ended != 1 || len(rep.Gaps) == 0 {
		t.Errorf("hindsight: started %d, done %d cells, ended %d times, %d gaps: want 1, 1, 1 and some gaps", started, done, ended, len(rep.Gaps))
	}
}

func TestSweepDir(t *testing.T) {
	grid, err := runner.NewGrid("hermes-micro", nil, []string{"prompt_caching.cache_ttl=5m,1h"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := runner.SweepDir{Dir: t.TempDir(), Flags: []string{"seed=1"}}
	sweep := func(d runner.SweepDir, resumed func(done, of int)) (*runner.Replay, error) {
		ss := synthetic(t)
		return runner.Sweep(context.Background(), setup(t), ss, grid.Points, runner.Options{Workers: 1}, d.Journal(grid, ss), resumed)
	}
	first, err := sweep(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(d.Dir, "sweep.json"))
	if err != nil || !bytes.Contains(meta, []byte(`"base": "hermes-micro"`)) || !bytes.Contains(meta, []byte(`"key": "prompt_caching.cache_ttl"`)) {
		t.Errorf("sweep.json %s: %v; want the base and the grid", meta, err)
	}
	// Not again without Resume; resumed, nothing runs and the runs stand.
	if _, err := sweep(d, nil); err == nil || !strings.Contains(err.Error(), "already holds a sweep") {
		t.Errorf("a second sweep into %s: %v, want refused", d.Dir, err)
	}
	d.Resume = true
	done := -1
	again, err := sweep(d, func(n, _ int) { done = n })
	if err != nil || done != 6 || len(again.Runs) != len(first.Runs) {
		t.Fatalf("resumed: %v, %d cells done, %d runs; want 6 done and %d runs", err, done, len(again.Runs), len(first.Runs))
	}
	// With a Log, a resume says how far the sweep had got, and a last line
	// cut short is named and run again.
	cells := filepath.Join(d.Dir, "cells.jsonl")
	journal, err := os.ReadFile(cells)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSuffix(journal, []byte("\n")), []byte("\n"))
	torn := append(bytes.Join(lines[:len(lines)-1], nil), lines[len(lines)-1][:10]...)
	if err := os.WriteFile(cells, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	d.Log = &log
	if _, err := sweep(d, d.Resumed); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("ctxsim sweep: %s:%d: dropped the last line, cut short by an interrupted write; its cell runs again\n", cells, len(lines)) +
		fmt.Sprintf("ctxsim sweep: resuming %s: 5 of 6 cells done, 1 to run\n", d.Dir)
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
	d.Log = nil
	// Other flags are another sweep.
	d.Flags = []string{"seed=2"}
	if _, err := sweep(d, nil); err == nil || !strings.Contains(err.Error(), "is another one") {
		t.Errorf("resume with other flags: %v, want refused", err)
	}
}

// Records not kept are dropped as each cell is emitted; kept, every cell
// still holds its own. The runs are the same either way.
func TestRecordsDroppedUnlessKept(t *testing.T) {
	specs, err := runner.ResolvePolicies([]string{"hermes-default"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var costs [2][]float64
	for i, keep := range []bool{false, true} {
		rp, err := runner.Compare(context.Background(), setup(t), synthetic(t), specs, runner.Options{Workers: 2, Records: keep})
		if err != nil {
			t.Fatal(err)
		}
		if len(rp.Cells) != 3 {
			t.Fatalf("%d cells, want 3", len(rp.Cells))
		}
		for _, c := range rp.Cells {
			if held := len(c.Result.Records) > 0; held != keep {
				t.Errorf("keep %v: cell %s holds %d records", keep, c.Key(), len(c.Result.Records))
			}
		}
		for _, r := range rp.Runs {
			costs[i] = append(costs[i], r.CostUSD)
		}
	}
	if !reflect.DeepEqual(costs[0], costs[1]) || len(costs[0]) != 3 {
		t.Errorf("runs differ: %v, %v", costs[0], costs[1])
	}
}

// Sessions of one account (traces.Session.Account, from the logs' layout)
// share one provider in fidelity: B's call after its own 12-minute gap
// reads the 5,000-token shared floor, as billed, because A kept it warm;
// replayed alone, B's entry had expired and the replay writes it again.
func TestFidelityAccount(t *testing.T) {
	t0 := time.Date(2025, 8, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	text := func(c string, n int) []traces.Block {
		return []traces.Block{{Kind: traces.Text, Text: strings.Repeat(c, n)}}
	}
	u := func(read, write int64) *traces.Usage {
		return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
	}
	sessions := func(account string) []*traces.Session {
		a := &traces.Session{ID: "a", Format: "claude-code", Model: "claude-opus-4-1", Harness: "claude-code 1.0.89", Account: account,
			Events: []traces.Event{{Time: at(0), Kind: traces.User, Blocks: text("a", 2000)}}}
		a.Events = append(a.Events, traces.Event{Time: at(5), Kind: traces.Assistant, Blocks: text("x", 40), Usage: u(5000, 3000)})
		prompt := int64(8000)
		for i := 1; i <= 15; i++ { // a call a minute for a quarter of an hour
			a.Events = append(a.Events,
				traces.Event{Time: at(60 * i), Kind: traces.User, Blocks: text("q", 100)},
				traces.Event{Time: at(60*i + 5), Kind: traces.Assistant, Blocks: text("y", 40), Usage: u(prompt, 140)})
			prompt += 140
		}
		b := &traces.Session{ID: "b", Format: "claude-code", Model: "claude-opus-4-1", Harness: "claude-code 1.0.89", Account: account,
			Events: []traces.Event{
				{Time: at(10), Kind: traces.User, Blocks: text("b", 3000)},
				{Time: at(15), Kind: traces.Assistant, Blocks: text("z", 40), Usage: u(5000, 4000)},
				{Time: at(735), Kind: traces.User, Blocks: text("c", 500)},
				{Time: at(740), Kind: traces.Assistant, Blocks: text("w", 40), Usage: u(5000, 4540)},
			}}
		return []*traces.Session{a, b}
	}
	errOf := func(account string) float64 {
		rep, _, err := runner.Fidelity(context.Background(), setup(t), sessions(account), runner.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rep.Sessions {
			if s.Trace == "b" {
				return s.ErrorPct
			}
		}
		t.Fatal("no session b")
		return 0
	}
	shared, alone := errOf("claude-code:home/u/.claude"), errOf("")
	t.Logf("b's recorded error: %.2f%% on the account's provider, %.2f%% alone", shared, alone)
	if math.Abs(shared) > 5 || alone < 20 {
		t.Errorf("b's error %.2f%% with its account, %.2f%% alone; want within 5%% and over 20%%", shared, alone)
	}
}
