package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/results/resultstest"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

func sweepGrid() *Grid {
	return &Grid{
		XName: "micro_compact_every_n_turns", YName: "compression.threshold (fraction of window)", ZName: "cost $",
		Xs: []float64{1, 3, 5}, Ys: []float64{0.5, 0.75},
		Zs: [][]float64{{1.2, 1.1, 1.3}, {1.0, 0.9, 1.15}},
	}
}

func allFigures(t *testing.T) []Figure {
	t.Helper()
	be, err := BreakevenFigure(resultstest.Opus(), 6)
	require.NoError(t, err)
	gap, err := GapCostFigure(resultstest.Opus(), 0.05, 90*time.Minute)
	require.NoError(t, err)
	heat, err := HeatmapFigure("sweep", "Cost by threshold and micro-compaction period", sweepGrid())
	require.NoError(t, err)
	recs := resultstest.TwoPolicies()
	return []Figure{be, gap, OccupancyFigure(recs), CumulativeCostFigure(recs), HitRateFigure(recs), heat, FidelityFigure(recordedFixture())}
}

// recordedFixture is three recorded calls: the replay sized them 1% under,
// exactly, and 2% over; the open-loop prediction is on the second and third.
func recordedFixture() []sim.Record {
	var rs []sim.Record
	for i, c := range []struct{ billed, sim, open int64 }{{10000, 9900, 0}, {20000, 20000, 20400}, {30000, 30600, 29000}} {
		r := sim.Record{Trace: "t", Policy: sim.RecordedName, Seq: i, Kind: sim.KindCall, Prompt: int(c.sim),
			Recorded: &traces.Usage{Input: 1, CacheRead: c.billed - 1}}
		if c.open > 0 {
			r.Estimates = []estimate.Estimate{{Name: sim.EstimateOpenLoop, Tokens: int(c.open)}}
		}
		rs = append(rs, r)
	}
	return rs
}

func TestFidelityFigure(t *testing.T) {
	f := FidelityFigure(recordedFixture())
	require.Len(t, f.Series, 3)
	want := [][]float64{{10, 20, 30}, {9.9, 20, 30.6}, {20.4, 29}}
	for i, s := range f.Series {
		require.Len(t, s.Points, len(want[i]), s.Name)
		for j, p := range s.Points {
			if !resultstest.Near(p.Y, want[i][j]) {
				t.Errorf("%s point %d = %v, want %v", s.Name, j, p.Y, want[i][j])
			}
		}
	}
	if f.Series[2].Points[0].X != 2 {
		t.Errorf("open loop starts at call %v, want 2", f.Series[2].Points[0].X)
	}
}

func TestFigureData(t *testing.T) {
	for _, f := range allFigures(t) {
		var b bytes.Buffer
		require.NoError(t, f.WriteData(&b))
		golden(t, "plots/"+f.Name+".txt", b.Bytes())
	}
}

func TestBreakevenFigureMarks(t *testing.T) {
	f, err := BreakevenFigure(resultstest.Opus(), 4)
	require.NoError(t, err)
	if len(f.Series) != 3 || len(f.Marks) != 2 {
		t.Fatalf("series, marks = %d, %d; want 3, 2", len(f.Series), len(f.Marks))
	}
	// At 4 sends of 1M tokens: uncached $20; 5m $6.25 + 3×$0.50; 1h $10 + 3×$0.50.
	for i, want := range []float64{20, 7.75, 11.5} {
		if got := f.Series[i].Points[4].Y; !resultstest.Near(got, want) {
			t.Errorf("%s at 4 sends = %v, want %v", f.Series[i].Name, got, want)
		}
	}
	if f.Marks[0].Label != "5m: 1.28" || f.Marks[1].Label != "1h: 2.11" {
		t.Errorf("marks = %+v", f.Marks)
	}
}

func TestOccupancyFigure(t *testing.T) {
	f := OccupancyFigure(resultstest.Run())
	require.Len(t, f.Series, 1)
	want := []float64{10.01, 12.01, 14.01, 4.01, 5.01}
	pts := f.Series[0].Points
	require.Len(t, pts, len(want))
	for i, w := range want {
		if pts[i].X != float64(i+1) || !resultstest.Near(pts[i].Y, w) {
			t.Errorf("point %d = %+v, want (%d, %v)", i, pts[i], i+1, w)
		}
	}
}

func TestCumulativeCostIncludesSummarizer(t *testing.T) {
	f := CumulativeCostFigure(resultstest.Run())
	pts := f.Series[0].Points
	s := results.Summarize("t", "p", resultstest.Run(), results.Options{})
	if got := pts[len(pts)-1].Y; !resultstest.Near(got, s.CostUSD) {
		t.Errorf("final cumulative cost = %v, want cost_usd %v", got, s.CostUSD)
	}
}

func TestRenderDeterministic(t *testing.T) {
	for _, f := range allFigures(t) {
		var a, b bytes.Buffer
		require.NoError(t, f.Render(&a, "svg"))
		require.NoError(t, f.Render(&b, "svg"))
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two SVG renders differ", f.Name)
		}
		if !strings.Contains(a.String(), "<svg") || strings.Contains(a.String(), "http://example") {
			t.Errorf("%s: not an SVG", f.Name)
		}
		var png bytes.Buffer
		require.NoError(t, f.Render(&png, "png"))
		if !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
			t.Errorf("%s: not a PNG", f.Name)
		}
	}
}

func TestHeatmapBadGrid(t *testing.T) {
	g := sweepGrid()
	g.Zs[1] = g.Zs[1][:2]
	if _, err := HeatmapFigure("x", "x", g); err == nil {
		t.Errorf("ragged grid accepted")
	}
}

func TestRunFigures(t *testing.T) {
	recs := resultstest.TwoPolicies()
	for _, r := range resultstest.Run() {
		r.Trace = "other/trace"
		recs = append(recs, r)
	}
	var names []string
	for _, f := range RunFigures(recs) {
		names = append(names, f.Name)
	}
	want := "cumulative-cost-other_trace occupancy-other_trace hit-rate-other_trace cumulative-cost-t occupancy-t hit-rate-t"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("RunFigures names = %s\nwant %s", got, want)
	}
}

// TestHeatmapNamedTicks: an axis of named values shows the names at its
// ticks, not the indices the cells sit at.
func TestHeatmapNamedTicks(t *testing.T) {
	g := sweepGrid()
	g.Xs, g.XLabels = []float64{0, 1, 2}, []string{"hermes", "system_and_3", "none"}
	f, err := HeatmapFigure("h", "layouts", g)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, f.Render(&b, "svg"))
	for _, l := range g.XLabels {
		require.Contains(t, b.String(), ">"+l+"<")
	}
	require.Len(t, namedTicks([]float64{1, 2}, []string{"a"}), 2, "names that do not match the values are ignored")
	require.Equal(t, "2", namedTicks([]float64{1, 2}, []string{"a"})[1].Label)
}
