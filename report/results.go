package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// Results is the summary.json document: one RunSummary per (trace, policy).
type Results struct {
	Runs []RunSummary `json:"runs"`
	// Warnings are what reading the inputs skipped or repaired (the
	// warnings the command printed on stderr).
	Warnings []traces.Warning `json:"warnings,omitempty"`
}

// SummarizeAll summarizes every (trace, policy) run in recs, sorted by trace
// then policy.
func SummarizeAll(recs []sim.Record, opts Options) Results {
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
	res := Results{Runs: make([]RunSummary, 0, len(keys))}
	for _, k := range keys {
		res.Runs = append(res.Runs, Summarize(k.trace, k.policy, recs, opts))
	}
	return res
}

// Find returns the run of (trace, policy), or nil.
func (r *Results) Find(trace, policy string) *RunSummary {
	for i := range r.Runs {
		if r.Runs[i].Trace == trace && r.Runs[i].Policy == policy {
			return &r.Runs[i]
		}
	}
	return nil
}

// WriteResults writes res as indented JSON with a final newline.
func WriteResults(w io.Writer, res Results) error {
	if res.Runs == nil {
		res.Runs = []RunSummary{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// ReadResults reads a summary.json document. name is used in errors.
func ReadResults(r io.Reader, name string) (Results, error) {
	var res Results
	dec := json.NewDecoder(r)
	if err := dec.Decode(&res); err != nil {
		return Results{}, fmt.Errorf("%s: %v", name, jsonErr(err))
	}
	// A gate must not pass on a file it did not fully read: anything after
	// the value is an error, not ignored.
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return Results{}, fmt.Errorf("%s: after the results: %v", name, jsonErr(err))
		}
		return Results{}, fmt.Errorf("%s: after the results: unexpected %v at byte %d", name, tok, dec.InputOffset())
	}
	seen := map[[2]string]int{}
	for i, run := range res.Runs {
		if run.Trace == "" || run.Policy == "" {
			return Results{}, fmt.Errorf("%s: runs[%d]: missing trace or policy", name, i)
		}
		k := [2]string{run.Trace, run.Policy}
		if j, ok := seen[k]; ok {
			// Find would compare only the first copy and hide the other.
			return Results{}, fmt.Errorf("%s: runs[%d] and runs[%d] are both %s · %s: a cell must appear once", name, j, i, run.Trace, run.Policy)
		}
		seen[k] = i
	}
	return res, nil
}

func jsonErr(err error) error {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return err
}

// WriteRecords writes recs as JSON lines (records.jsonl), in the order given.
func WriteRecords(w io.Writer, recs []sim.Record) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFileAtomic writes path whole or not at all (atomicfile.WriteFunc):
// a regular file through a temporary file renamed into place, a symlink
// written through, a FIFO or character device in place; a directory,
// socket or block device is refused.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	return atomicfile.WriteFunc(path, write)
}

// A SetFile is one file of an output set: its name in the directory and
// what to write to it.
type SetFile = atomicfile.SetFile

// WriteSetAtomic writes files into dir as one set (atomicfile.WriteSet):
// all of them into a temporary directory beside dir first, then moved in
// once every one is written. A failed write (a report that cannot render)
// leaves dir as it was: never new records beside an old report.
func WriteSetAtomic(dir string, files []SetFile) error {
	return atomicfile.WriteSet(dir, files)
}
