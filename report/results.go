package report

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
)

// WriteSummary writes res as indented JSON with a final newline.
func WriteSummary(w io.Writer, res results.Summary) error {
	if res.Runs == nil {
		res.Runs = []results.RunSummary{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// WriteSummaryFile writes res to path (WriteSummary), whole or not at
// all: summary.json, a check's baseline.
func WriteSummaryFile(path string, res results.Summary) error {
	return atomicfile.WriteFunc(path, func(w io.Writer) error { return WriteSummary(w, res) })
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
