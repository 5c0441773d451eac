package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"

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

// Read reads a summary.json document. name is used in errors.
func Read(r io.Reader, name string) (Summary, error) {
	var res Summary
	dec := json.NewDecoder(r)
	if err := dec.Decode(&res); err != nil {
		return Summary{}, fmt.Errorf("%s: %v", name, jsonErr(err))
	}
	// A gate must not pass on a file it did not fully read: anything after
	// the value is an error, not ignored.
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return Summary{}, fmt.Errorf("%s: after the results: %v", name, jsonErr(err))
		}
		return Summary{}, fmt.Errorf("%s: after the results: unexpected %v at byte %d", name, tok, dec.InputOffset())
	}
	seen := map[[2]string]int{}
	for i, run := range res.Runs {
		if run.Trace == "" || run.Policy == "" {
			return Summary{}, fmt.Errorf("%s: runs[%d]: missing trace or policy", name, i)
		}
		k := [2]string{run.Trace, run.Policy}
		if j, ok := seen[k]; ok {
			// Find would compare only the first copy and hide the other.
			return Summary{}, fmt.Errorf("%s: runs[%d] and runs[%d] are both %s · %s: a cell must appear once", name, j, i, run.Trace, run.Policy)
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
