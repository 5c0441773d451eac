package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

// A TuneSpace is a preset's default search space: the settings a user of
// it would turn first, each at its preset value and a step either side,
// crossed with the cache tier (docs/tune.md lists them).
type TuneSpace struct {
	Preset string
	Grid   []string
}

// TuneSpaces are the presets' default search spaces, in preset order. The
// hermes thresholds start at 0.75: below a 512K window hermes raises any
// lower one to 0.75 (ClampWarnings), so lower values would repeat it.
var TuneSpaces = []TuneSpace{
	{"no-compaction", []string{"prompt_caching.cache_ttl=5m,1h"}},
	{"hermes-default", []string{"compression.threshold=0.75,0.85,0.95", "prompt_caching.cache_ttl=5m,1h"}},
	{"hermes-micro", []string{"compression.micro_compact_every_n_turns=1,2,4", "prompt_caching.cache_ttl=5m,1h"}},
	{"hermes-prune", []string{"compression.proactive_prune_tokens=24000,48000,96000", "prompt_caching.cache_ttl=5m,1h"}},
	{"hermes-idle", []string{"compression.idle_compact_after_seconds=300,1800,3600", "prompt_caching.cache_ttl=5m,1h"}},
	{"prune-on-resume", []string{"compression.idle_compact_after_seconds=300,1800,3600", "prompt_caching.cache_ttl=5m,1h"}},
	{"masking-sliding", []string{"masking.keep_last=5,10,20", "prompt_caching.cache_ttl=5m,1h"}},
	{"masking-batched", []string{"masking.min_reclaim_tokens=2048,4096,16384", "prompt_caching.cache_ttl=5m,1h"}},
	{"claude-code", []string{"prompt_caching.cache_ttl=5m,1h", "prompt_caching.subagent_cache_ttl=5m,1h"}},
}

// DefaultFolds is how many folds a tune splits the sessions into unless
// told otherwise.
const DefaultFolds = 5

// A TunePlan is a tune before it runs: the candidates (the current
// setting, then the grid's points that differ from it) and the setup the
// results are read with.
type TunePlan struct {
	Grid       *Grid
	Candidates []Policy
	Render     TuneRender
}

// TuneRender is what a sharded tune keeps in its manifest for merge to
// finish it: the setup, and each candidate's settings (its difference
// from hermes' defaults) for the policy file it recommends.
type TuneRender struct {
	Setup results.TuneSetup `json:"setup"`
	// Preset is the base preset, "" for a policy file.
	Preset string               `json:"preset"`
	Diffs  [][]policies.Setting `json:"diffs"`
}

// NewTunePlan resolves a tune of the one policy named (a preset or a
// policy file, sets applied) over grid, or with none the preset's TuneSpaces entry;
// constraints keep (results.ParseConstraint), folds folds of the session
// groups dealt by seed. Errors are *InputError.
func NewTunePlan(policy []string, sets, grid, keep []string, folds int, seed uint64, maxCells int) (*TunePlan, error) {
	if len(policy) != 1 {
		return nil, badInput("{policy}: tune takes one policy (a preset or a .yaml/.json config), got %d", len(policy))
	}
	return newTunePlan(policy[0], sets, grid, keep, folds, seed, maxCells)
}

func newTunePlan(policy string, sets, grid, keep []string, folds int, seed uint64, maxCells int) (*TunePlan, error) {
	if len(grid) == 0 {
		i := slices.IndexFunc(TuneSpaces, func(s TuneSpace) bool { return s.Preset == policy })
		if i < 0 {
			return nil, badInput("{grid}: %s has no default search space (the presets have: docs/tune.md); give the settings to search, key=v1,v2,...", policy)
		}
		grid = TuneSpaces[i].Grid
	}
	if folds < 2 {
		return nil, badInput("{folds} %d: want at least 2 (choose on some sessions, measure on others)", folds)
	}
	g, err := NewGrid(policy, sets, grid, maxCells)
	if err != nil {
		return nil, err
	}
	base := g.Base
	cur := Policy{Name: base.Name, Config: &base, Warnings: g.Warnings}
	tp := &TunePlan{Grid: g, Candidates: []Policy{cur}}
	for _, p := range g.Points {
		if !slices.Equal(p.Config.Settings(), base.Settings()) {
			tp.Candidates = append(tp.Candidates, p)
		}
	}
	cons := []results.Constraint{}
	for _, k := range keep {
		c, err := results.ParseConstraint(k)
		if err != nil {
			return nil, badInput("{keep} %v", err)
		}
		cons = append(cons, c)
	}
	r := TuneRender{Setup: results.TuneSetup{Base: base.Name, Current: cur.Name, Axes: g.Axes, Candidates: PolicyNames(tp.Candidates),
		Folds: folds, Seed: seed, Keep: cons}}
	if !IsPolicyFile(policy) {
		r.Preset = policy
	}
	def := policies.Default()
	for _, c := range tp.Candidates {
		r.Diffs = append(r.Diffs, c.Config.Diff(&def))
	}
	tp.Render = r
	return tp, nil
}

// Tune replays every tenant of sessions under every candidate of tp, as
// ctxsim tune does (a Sweep, without the hindsight optimum: it sets
// rn.Hindsight false), and chooses among them (results.NewTune). A shard
// owns (candidate, tenant) cells and returns no result: merge finishes it
// (Join). An error that is not Stopped (cells failed) comes with the
// others' results when there are enough to choose on.
func Tune(ctx context.Context, rn *Runner, sessions []*traces.Session, tp *TunePlan, o Options, warnings []traces.Warning) (*TuneResult, *Replay, error) {
	rn.Hindsight = false
	rp, err := Sweep(ctx, rn, sessions, tp.Candidates, o, nil, nil)
	if Stopped(err) || o.Shard.Sharded() {
		return nil, rp, err
	}
	tr, terr := tp.Render.Result(rp.Runs, warnings)
	if terr != nil {
		return nil, rp, terr
	}
	return tr, rp, err
}

// A TuneResult is a finished tune: its runs (in candidate order, then by
// trace), what it chose, and the input's warnings.
type TuneResult struct {
	Tune     *results.Tune
	Runs     []results.RunSummary
	Warnings []traces.Warning
	render   TuneRender
}

// Result chooses among the candidates on runs: the tune, from one process
// or merged from shards.
func (r TuneRender) Result(runs []results.RunSummary, warnings []traces.Warning) (*TuneResult, error) {
	runs = slices.Clone(runs)
	results.SweepGrid{Points: r.Setup.Candidates}.Sort(runs)
	t, err := results.NewTune(r.Setup, runs)
	if err != nil {
		return nil, err
	}
	if warnings == nil {
		warnings = []traces.Warning{}
	}
	return &TuneResult{Tune: t, Runs: runs, Warnings: warnings, render: r}, nil
}

// PolicyFile is the recommended setting as the file its harness reads: a
// fragment of hermes' config.yaml for a hermes preset or a policy file
// (its difference from hermes' defaults), else a ctxsim policy file
// ("preset: NAME" and its difference from the preset). ctxsim run, compare
// and sweep take either as --policy FILE. It is an error when nothing was
// recommended.
func (tr *TuneResult) PolicyFile() ([]byte, error) {
	t := tr.Tune
	i := slices.Index(t.Candidates, t.Recommended)
	if t.Recommended == "" || i < 0 {
		return nil, fmt.Errorf("no setting met the constraints on every fold: nothing to recommend")
	}
	if i >= len(tr.render.Diffs) {
		return nil, fmt.Errorf("candidate %s: no settings recorded for it", t.Recommended) // a render from a damaged manifest
	}
	c := policies.Default()
	for _, s := range tr.render.Diffs[i] {
		if err := c.Set(s.Key, s.Value); err != nil {
			return nil, fmt.Errorf("candidate %s: %v", t.Recommended, err)
		}
	}
	c.Name = t.Recommended
	header := []string{fmt.Sprintf("ctxsim tune: %s over %d session groups, %d folds, seed %d", t.Recommended, t.Sessions, t.Folds, t.Seed),
		fmt.Sprintf("held-out saving %.1f%% of %s's cost (folds %.1f%% to %.1f%%)", t.HeldOut.SavingPct, t.Current, t.HeldOut.MinPct, t.HeldOut.MaxPct)}
	for _, k := range t.Keep {
		header = append(header, "kept "+k.String()+" on every fold")
	}
	preset := tr.render.Preset
	if preset == "" || strings.HasPrefix(preset, "hermes-") {
		header = append(header, "a fragment of hermes-agent's config.yaml (its keys, nested as there); run, compare and sweep read it as a policy")
		preset = ""
	} else {
		header = append(header, "a ctxsim policy file: run, compare and sweep read it as a policy")
	}
	return policies.Marshal(&c, preset, header)
}

// TuneFiles are what a tune writes to its output directory: summary.json
// (every candidate's runs), tune.json (what ctxsim tune --json prints),
// report.html (the choice and its trade-offs) and, when a setting was
// recommended, recommended.yaml (PolicyFile).
var TuneFiles = []string{"summary.json", "tune.json", "report.html", "recommended.yaml"}

// Write writes the tune's files (TuneFiles) to dir as one set, when dir
// is set, and the recommendation (PolicyFile) to emit, when set: an error
// when nothing was recommended.
func (tr *TuneResult) Write(dir, emit string) error {
	if dir != "" {
		if err := tr.writeDir(dir); err != nil {
			return err
		}
	}
	if emit == "" {
		return nil
	}
	pf, err := tr.PolicyFile()
	if err != nil {
		return err
	}
	return atomicfile.Write(emit, pf, false)
}

func (tr *TuneResult) writeDir(dir string) error {
	files := []atomicfile.SetFile{
		{Name: TuneFiles[0], Write: func(w io.Writer) error {
			return report.WriteSummary(w, results.Summary{Runs: tr.Runs, Warnings: tr.Warnings})
		}},
		{Name: TuneFiles[1], Write: func(w io.Writer) error { return report.WriteJSON(w, tr.Tune) }},
		{Name: TuneFiles[2], Write: func(w io.Writer) error { return report.WriteTuneHTML(w, tr.Tune) }},
	}
	if pf, err := tr.PolicyFile(); err == nil {
		files = append(files, atomicfile.SetFile{Name: TuneFiles[3], Write: func(w io.Writer) error {
			_, err := io.Copy(w, bytes.NewReader(pf))
			return err
		}})
	}
	return atomicfile.WriteSet(dir, files)
}

// Output prints the tune in f (Print), then writes its files (Write).
func (tr *TuneResult) Output(w io.Writer, f report.Format, dir, emit string) error {
	if err := tr.Print(w, f); err != nil {
		return err
	}
	return tr.Write(dir, emit)
}

// Print prints the tune in f (report.WriteTune).
func (tr *TuneResult) Print(w io.Writer, f report.Format) error {
	return report.WriteTune(w, f, tr.Tune)
}
