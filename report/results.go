package report

import (
	"bufio"
	"encoding/json"
	"io"

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
