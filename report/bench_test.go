package report

import (
	"bytes"
	"io"
	"testing"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/results/resultstest"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// longRun is a 2,000-call run with a batch compaction every 200 calls.
func longRun() []sim.Record {
	var recs []sim.Record
	prompt := int64(20000)
	seq := 0
	for i := 0; i < 2000; i++ {
		if i > 0 && i%200 == 0 {
			recs = append(recs, sim.Record{Trace: "t", Policy: "p", Seq: seq, Kind: sim.KindBatch, Turn: i / 3,
				TokensBefore: int(prompt), TokensAfter: 20000, Usage: traces.Usage{Input: prompt, Output: 2000}, CostUSD: 0.1})
			seq++
			prompt = 20000
		}
		u := traces.Usage{Input: 5, CacheWrite5m: 1500, CacheRead: prompt - 1505, Output: 300}
		recs = append(recs, resultstest.Call(seq, i/3, i*20, u, 1500))
		seq++
		prompt += 1500
	}
	return recs
}

func BenchmarkSummarize(b *testing.B) {
	recs := longRun()
	b.ReportAllocs()
	for b.Loop() {
		results.Summarize("t", "p", recs, results.Options{})
	}
	b.ReportMetric(float64(len(recs)), "records/op")
}

func BenchmarkWriteHTML(b *testing.B) {
	recs := longRun()
	res := results.SummarizeAll(recs, results.Options{})
	p := resultstest.Opus()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := WriteHTML(&buf, HTMLInput{Runs: res.Runs, Records: recs, Price: &p}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

func BenchmarkRenderSVG(b *testing.B) {
	f := OccupancyFigure(longRun())
	for b.Loop() {
		if err := f.Render(io.Discard, "svg"); err != nil {
			b.Fatal(err)
		}
	}
}
