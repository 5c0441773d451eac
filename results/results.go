package results

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/internal/numflag"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// Summary is the summary.json document: one RunSummary per (trace, policy).
type Summary struct {
	Runs []RunSummary `json:"runs"`
	// Warnings are what reading the inputs skipped or repaired (the
	// warnings the command printed on stderr).
	Warnings []traces.Warning `json:"warnings,omitempty"`
}

// SummarizeAll summarizes every (trace, policy) run in recs, sorted by trace
// then policy.
func SummarizeAll(recs []sim.Record, opts Options) Summary {
	type key struct{ trace, policy string }
	seen := map[key]bool{}
	var keys []key
	for _, r := range recs {
		k := key{r.Trace, r.Policy}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.trace, b.trace), cmp.Compare(a.policy, b.policy))
	})
	if opts.Prices == nil {
		opts.Prices = pricing.Default()
	}
	res := Summary{Runs: make([]RunSummary, 0, len(keys))}
	for _, k := range keys {
		res.Runs = append(res.Runs, Summarize(k.trace, k.policy, recs, opts))
	}
	return res
}

// Find returns the run of (trace, policy), or nil.
func (r *Summary) Find(trace, policy string) *RunSummary {
	for i := range r.Runs {
		if r.Runs[i].Trace == trace && r.Runs[i].Policy == policy {
			return &r.Runs[i]
		}
	}
	return nil
}

// MaxFile is the largest results file Read takes: 256 MiB, some 90,000
// runs (the embedded suite's 148 are 400 KB), where a file of endless
// blanks would hold gigabytes of memory before it ended.
const MaxFile = 256 << 20

// ReadFile reads the summary.json document at path (Read).
func ReadFile(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Summary{}, fmt.Errorf("%s: no such file: %w", path, fs.ErrNotExist)
		}
		return Summary{}, err
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads a summary.json document, as strictly as traces are read: it
// is what a CI gate (ctxsim check) judges a change by, so a run missing a
// field the check compares (it read as 0: "improved"), or holding a figure
// no run can have (a negative cost, a 500 % hit rate), is an error naming
// the file and the cell, never a pass. name is used in errors.
func Read(r io.Reader, name string) (Summary, error) {
	// Decoded as it is read, so that junk (/dev/zero, `yes`) is refused at
	// its first byte; read holds what came, for the lines of errors.
	var read bytes.Buffer
	dec := json.NewDecoder(io.TeeReader(traces.LimitDocument(r, MaxFile), &read))
	var doc struct {
		Runs     []json.RawMessage `json:"runs"`
		Warnings []traces.Warning  `json:"warnings,omitempty"`
	}
	if err := dec.Decode(&doc); err != nil {
		return Summary{}, traces.JSONError(name, read.Bytes(), err)
	}
	bad := func(line int, format string, args ...any) (Summary, error) {
		return Summary{}, &traces.SyntaxError{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	// A gate must not pass on a file it did not fully read: anything after
	// the value is an error, not ignored.
	if tok, err := dec.Token(); err != io.EOF {
		at := traces.LineAt(read.Bytes(), dec.InputOffset())
		if err != nil {
			return bad(at, "after the results: %v", jsonErr(err))
		}
		return bad(at, "after the results: unexpected %v", tok)
	}
	data := read.Bytes()
	res := Summary{Runs: make([]RunSummary, len(doc.Runs)), Warnings: doc.Warnings}
	lines := make([]int, len(doc.Runs))
	from := 0
	for i, raw := range doc.Runs {
		// A run's bytes are a copy of the file's: found after the last.
		if at := bytes.Index(data[from:], raw); at >= 0 {
			from += at
			lines[i] = traces.LineAt(data, int64(from))
			from += len(raw)
		}
		if err := readRun(raw, &res.Runs[i]); err != nil {
			return bad(lines[i], "runs[%d]%s: %v", i, cellName(raw), err)
		}
	}
	seen := map[[2]string]int{}
	for i, run := range res.Runs {
		k := [2]string{run.Trace, run.Policy}
		if j, ok := seen[k]; ok {
			// Find would compare only the first copy and hide the other.
			return bad(lines[i], "runs[%d] and runs[%d] (line %d) are both %s · %s: a cell must appear once", i, j, lines[j], run.Trace, run.Policy)
		}
		seen[k] = i
	}
	return res, nil
}

// cellName is " (trace · policy)" of a run as written, "" when it names
// neither.
func cellName(raw json.RawMessage) string {
	var id struct{ Trace, Policy string }
	if json.Unmarshal(raw, &id) != nil || id.Trace == "" && id.Policy == "" {
		return ""
	}
	return " (" + id.Trace + " · " + id.Policy + ")"
}

// required are the fields of a run that name it or that a check compares
// (CheckMetrics), each a path of keys: a run without one is refused, not
// read as 0.
var required = [][]string{{"trace"}, {"policy"}, {"cost_usd"}, {"cache_hit_rate"},
	{"occupancy", "max"}, {"compactions"}, {"latency_ms", "p95"}}

// Ranges of a run's figures.
var (
	nonNegative = numflag.Range{Lo: 0, Hi: math.Inf(1)}
	fraction    = numflag.Range{Lo: 0, Hi: 1}
)

// A figure is one number of a run as read, and the range it must be in.
type figure struct {
	name string
	v    float64
	r    numflag.Range
}

// usageFigures are the token counts of u, none of which may be negative.
func usageFigures(name string, u traces.Usage) []figure {
	return []figure{{name + ".input", float64(u.Input), nonNegative}, {name + ".cache_write_5m", float64(u.CacheWrite5m), nonNegative},
		{name + ".cache_write_1h", float64(u.CacheWrite1h), nonNegative}, {name + ".cache_read", float64(u.CacheRead), nonNegative},
		{name + ".output", float64(u.Output), nonNegative}}
}

// readRun decodes one run and checks it: required fields present, every
// figure finite and in its range.
func readRun(raw json.RawMessage, run *RunSummary) error {
	for _, path := range required {
		if !has(raw, path) {
			return fmt.Errorf("%s: missing", strings.Join(path, "."))
		}
	}
	if err := json.Unmarshal(raw, run); err != nil {
		return jsonErr(err)
	}
	return CheckRun(run)
}

// CheckRun checks a run read back from a file (summary.json, a sweep's
// journal, a shard's cells): named, and every figure finite and in its
// range.
func CheckRun(run *RunSummary) error {
	if run.Trace == "" || run.Policy == "" {
		return errors.New("missing trace or policy")
	}
	c := run.Compactions
	figures := []figure{
		{"cost_usd", run.CostUSD, nonNegative},
		{"cache_hit_rate", run.CacheHitRate, fraction},
		{"request_hit_rate", run.RequestHitRate, fraction},
		{"requests", float64(run.Requests), nonNegative},
		{"overflow_errors", float64(run.OverflowErrors), nonNegative},
		{"failed_requests", float64(run.FailedRequests), nonNegative},
		{"occupancy.mean", run.Occupancy.Mean, nonNegative},
		{"occupancy.max", run.Occupancy.Max, nonNegative},
		{"occupancy.final", run.Occupancy.Final, nonNegative},
		{"latency_ms.p50", float64(run.LatencyMS.P50), nonNegative},
		{"latency_ms.p95", float64(run.LatencyMS.P95), nonNegative},
		{"latency_ms.max", float64(run.LatencyMS.Max), nonNegative},
		{"stall_ms", float64(run.StallMS), nonNegative},
		{"miss_cost_usd", run.MissCostUSD, nonNegative},
		{"summarizer_cost_usd", run.SummarizerCostUSD, nonNegative},
		{"compactions.batch", float64(c.Batch), nonNegative},
		{"compactions.micro", float64(c.Micro), nonNegative},
		{"compactions.prune", float64(c.Prune), nonNegative},
		{"compactions.idle", float64(c.Idle), nonNegative},
		{"compactions.masking", float64(c.Masking), nonNegative},
	}
	figures = append(figures, usageFigures("tokens", run.Tokens)...)
	figures = append(figures, usageFigures("summarizer_tokens", run.SummarizerTokens)...)
	if rec := run.Recorded; rec != nil {
		figures = append(figures, figure{"recorded.cost_usd", rec.CostUSD, nonNegative}, figure{"recorded.cache_hit_rate", rec.CacheHitRate, fraction})
		figures = append(figures, usageFigures("recorded.tokens", rec.Tokens)...)
	}
	for _, f := range figures {
		if !f.r.Contains(f.v) {
			return fmt.Errorf("%s: want %s, got %v", f.name, f.r.Allowed(), f.v)
		}
	}
	return nil
}

// has reports whether the JSON object raw holds the key path.
func has(raw json.RawMessage, path []string) bool {
	for _, k := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return false
		}
		v, ok := obj[k]
		if !ok || string(v) == "null" {
			return false
		}
		raw = v
	}
	return true
}

func jsonErr(err error) error {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return err
}
