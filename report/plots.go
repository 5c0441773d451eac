package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
)

// A Figure is the data behind one plot: named line series and marked points
// (or a heatmap grid), with axis labels that carry units. Data functions
// build Figures, tests golden-check them, and Render draws them.
type Figure struct {
	// Name is the file stem the figure is saved under.
	Name   string
	Title  string
	XLabel string
	YLabel string
	Series []Series
	// Marks are labelled points drawn on top of the series (break-even
	// points), named MarkLegend in the legend ("break-even" when empty).
	Marks      []Mark
	MarkLegend string
	// Dots are series drawn as points, not lines (a tune's settings).
	Dots []Series
	// Heat, when set, makes the figure a heatmap; Series are then ignored.
	Heat *Grid
	// XTicks, when set, are the labelled x ticks.
	XTicks []float64
	// LegendRight puts the legend in a strip right of the plot, for
	// figures whose lines fill the whole data area.
	LegendRight bool
}

// A Series is one line of a figure.
type Series struct {
	Name   string
	Points plotter.XYs
}

// A Mark is a labelled point.
type Mark struct {
	Label string
	X, Y  float64
}

// A Grid is a two-parameter sweep: Zs[i][j] is the metric at Xs[j], Ys[i].
type Grid struct {
	XName, YName, ZName string
	Xs, Ys              []float64
	Zs                  [][]float64
	// XLabels and YLabels, when set, name the ticks at Xs and Ys (an axis
	// of named values: a layout, a TTL "auto"), instead of their numbers.
	XLabels, YLabels []string
}

// gridXYZ adapts a Grid to plotter.GridXYZ.
type gridXYZ struct{ g *Grid }

func (a gridXYZ) Dims() (c, r int)   { return len(a.g.Xs), len(a.g.Ys) }
func (a gridXYZ) Z(c, r int) float64 { return a.g.Zs[r][c] }
func (a gridXYZ) X(c int) float64    { return a.g.Xs[c] }
func (a gridXYZ) Y(r int) float64    { return a.g.Ys[r] }

func (g *Grid) check() error {
	if len(g.Xs) == 0 || len(g.Ys) == 0 || len(g.Zs) != len(g.Ys) {
		return fmt.Errorf("report: heatmap grid is %d×%d with %d rows of values", len(g.Xs), len(g.Ys), len(g.Zs))
	}
	for i, row := range g.Zs {
		if len(row) != len(g.Xs) {
			return fmt.Errorf("report: heatmap row %d has %d values, want %d", i, len(row), len(g.Xs))
		}
		for _, z := range row {
			if math.IsNaN(z) || math.IsInf(z, 0) {
				return fmt.Errorf("report: heatmap row %d holds %v", i, z)
			}
		}
	}
	return nil
}

// BreakevenFigure is cumulative cost against the number of sends of a 1M-token
// prefix, uncached and cached at each tier p prices, with the break-even
// points marked.
func BreakevenFigure(p pricing.Price, maxUses int) (Figure, error) {
	bs, err := pricing.Breakevens(p)
	if err != nil {
		return Figure{}, err
	}
	f := Figure{
		Name:   "breakeven",
		Title:  fmt.Sprintf("Cache break-even, %s", p.Model),
		XLabel: "sends of the prefix (first one writes)",
		YLabel: "cumulative cost of 1M prefix tokens ($)",
	}
	for n := 0; n <= maxUses; n++ {
		f.XTicks = append(f.XTicks, float64(n))
	}
	none := Series{Name: "no cache"}
	for n := 0; n <= maxUses; n++ {
		none.Points = append(none.Points, plotter.XY{X: float64(n), Y: float64(n) * p.Input})
	}
	f.Series = append(f.Series, none)
	for _, b := range bs {
		s := Series{Name: b.TTL + " cache"}
		for n := 0; n <= maxUses; n++ {
			s.Points = append(s.Points, plotter.XY{X: float64(n), Y: pricing.CumulativeCost(n, b.WriteMultiple, b.ReadMultiple) * p.Input})
		}
		f.Series = append(f.Series, s)
		if b.Pays {
			f.Marks = append(f.Marks, Mark{Label: fmt.Sprintf("%s: %.2f", b.TTL, b.Uses), X: b.Uses, Y: b.Uses * p.Input})
		}
	}
	return f, nil
}

// GapCostFigure is the expected prompt cost of one call against the idle gap
// before it, for the 5m and 1h tiers, for a session reusing a 1M-token prefix
// and appending growth×1M new tokens per call (see pricing.CallCost).
func GapCostFigure(p pricing.Price, growth float64, maxGap time.Duration) (Figure, error) {
	if p.Input <= 0 || p.CacheWrite1h <= 0 {
		return Figure{}, fmt.Errorf("report: %s has no 5m and 1h tiers to compare", p.Model)
	}
	f := Figure{
		Name:   "gap-cost",
		Title:  fmt.Sprintf("Cost per call vs idle gap, %s, %.0f%% growth per call", p.Model, growth*100),
		XLabel: "idle gap before the call (minutes)",
		YLabel: "prompt cost per call, 1M-token prefix ($)",
	}
	maxMin := maxGap.Minutes()
	for _, t := range []float64{0, 5, 15, 30, 45, 60, 90, 120, 180, 240} {
		if t <= maxMin {
			f.XTicks = append(f.XTicks, t)
		}
	}
	for _, ttl := range []time.Duration{pricing.TTL5m, pricing.TTL1h} {
		lo := pricing.CallCost(p, ttl, 0, growth) * p.Input
		hi := pricing.CallCost(p, ttl, ttl+time.Nanosecond, growth) * p.Input
		s := Series{Name: ttlName(ttl) + " cache"}
		if ttl.Minutes() >= maxMin {
			s.Points = plotter.XYs{{X: 0, Y: lo}, {X: maxMin, Y: lo}}
		} else {
			s.Points = plotter.XYs{{X: 0, Y: lo}, {X: ttl.Minutes(), Y: lo}, {X: ttl.Minutes(), Y: hi}, {X: maxMin, Y: hi}}
		}
		f.Series = append(f.Series, s)
	}
	return f, nil
}

func ttlName(d time.Duration) string {
	if d == pricing.TTL1h {
		return "1h"
	}
	return "5m"
}

// runKey names a run in a legend: the policy, or trace/policy when recs
// hold several traces.
func runKeys(recs []sim.Record) (keys []string, name func(sim.Record) string) {
	traces := map[string]bool{}
	for _, r := range recs {
		traces[r.Trace] = true
	}
	name = func(r sim.Record) string { return r.Policy }
	if len(traces) > 1 {
		name = func(r sim.Record) string { return r.Trace + "/" + r.Policy }
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if k := name(r); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, name
}

// perCall builds one series per run: x is the call number (1-based), y(r)
// the value at each billed call. y is called for every record in Seq order,
// passes included, so it can accumulate.
func perCall(recs []sim.Record, y func(r sim.Record) (float64, bool)) []Series {
	rs := slices.Clone(recs)
	slices.SortStableFunc(rs, func(a, b sim.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	keys, name := runKeys(rs)
	idx := map[string]int{}
	out := make([]Series, len(keys))
	for i, k := range keys {
		out[i].Name = k
		idx[k] = i
	}
	calls := make([]int, len(keys))
	for _, r := range rs {
		i := idx[name(r)]
		isCall := r.Kind == sim.KindCall && r.Error == ""
		if isCall {
			calls[i]++
		}
		if v, ok := y(r); ok && isCall {
			out[i].Points = append(out[i].Points, plotter.XY{X: float64(calls[i]), Y: v})
		}
	}
	return out
}

// OccupancyFigure is billed prompt ÷ threshold per call (HermesThreshold
// for a policy that never compacts), one line per run: a sawtooth for a
// compacting policy, a rising line for one that never compacts. The x axis
// counts billed calls, so rejected prompts are not plotted; the summary's
// occupancy counts them.
func OccupancyFigure(recs []sim.Record) Figure {
	return Figure{
		Name: "occupancy", LegendRight: true, Title: "Context occupancy per call",
		XLabel: "call number", YLabel: "billed prompt / compaction threshold (%)",
		Series: perCall(recs, func(r sim.Record) (float64, bool) {
			d := results.OccupancyDenominator(r)
			if d <= 0 {
				return 0, false
			}
			return float64(r.Prompt) / float64(d) * 100, true
		}),
	}
}

// CumulativeCostFigure is the running cost per run, summarizer calls
// included (added at the call after them).
func CumulativeCostFigure(recs []sim.Record) Figure {
	totals := map[string]float64{}
	_, name := runKeys(recs)
	return Figure{
		Name: "cumulative-cost", LegendRight: true, Title: "Cumulative cost",
		XLabel: "call number", YLabel: "cumulative cost ($)",
		Series: perCall(recs, func(r sim.Record) (float64, bool) {
			totals[name(r)] += r.CostUSD
			return totals[name(r)], true
		}),
	}
}

// HitRateFigure is the token-weighted cache hit rate of each call.
func HitRateFigure(recs []sim.Record) Figure {
	return Figure{
		Name: "hit-rate", LegendRight: true, Title: "Cache hit rate per call",
		XLabel: "call number", YLabel: "cache read / prompt (%)",
		Series: perCall(recs, func(r sim.Record) (float64, bool) { return r.Usage.HitRate() * 100, true }),
	}
}

// FidelityFigure is a recorded session's prompt per call as billed, as the
// anchored replay sized it, and as the open-loop calibration predicted it
// (when the records carry that estimate): where the lines part is where the
// simulation's sizing is wrong. Only calls with recorded usage count.
func FidelityFigure(recs []sim.Record) Figure {
	var billed, anchored, open plotter.XYs
	n := 0
	for _, r := range recs {
		if r.Kind != sim.KindCall || r.Error != "" || r.Recorded == nil {
			continue
		}
		n++
		x := float64(n)
		billed = append(billed, plotter.XY{X: x, Y: float64(r.Recorded.Prompt()) / 1000})
		anchored = append(anchored, plotter.XY{X: x, Y: float64(r.Prompt) / 1000})
		for _, e := range r.Estimates {
			if e.Name == sim.EstimateOpenLoop {
				open = append(open, plotter.XY{X: x, Y: float64(e.Tokens) / 1000})
			}
		}
	}
	f := Figure{
		Name: "fidelity", LegendRight: true, Title: "Prompt per call: billed vs simulated",
		XLabel: "call number", YLabel: "prompt (thousand tokens)",
		Series: []Series{{Name: "billed", Points: billed}, {Name: "simulated (anchored)", Points: anchored}},
	}
	if len(open) > 0 {
		f.Series = append(f.Series, Series{Name: "open loop", Points: open})
	}
	return f
}

// RunFigures is the per-trace figures of recs (cumulative cost, occupancy,
// hit rate; policies of a trace share a figure), traces sorted by name, each
// figure named "<kind>-<trace>".
func RunFigures(recs []sim.Record) []Figure {
	byTrace := map[string][]sim.Record{}
	for _, r := range recs {
		byTrace[r.Trace] = append(byTrace[r.Trace], r)
	}
	var figs []Figure
	for _, tr := range slices.Sorted(maps.Keys(byTrace)) {
		rs := byTrace[tr]
		fs := []Figure{CumulativeCostFigure(rs), OccupancyFigure(rs), HitRateFigure(rs)}
		if rec := recordedOnly(rs); len(rec) > 0 {
			fs = append(fs, FidelityFigure(rec))
		}
		for _, f := range fs {
			f.Title += ": " + tr
			f.Name += "-" + fileSafe(tr)
			figs = append(figs, f)
		}
	}
	return figs
}

// recordedOnly keeps the records of the recorded policy that carry
// recorded usage: the replay whose fidelity a figure can show.
func recordedOnly(rs []sim.Record) []sim.Record {
	var out []sim.Record
	for _, r := range rs {
		if r.Policy == sim.RecordedName && r.Recorded != nil {
			out = append(out, r)
		}
	}
	return out
}

// fileSafe maps a trace id to a file-name-safe stem.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// HeatmapFigure shows a two-parameter sweep.
func HeatmapFigure(name, title string, g *Grid) (Figure, error) {
	if err := g.check(); err != nil {
		return Figure{}, err
	}
	return Figure{Name: name, Title: title, XLabel: g.XName, YLabel: g.YName, Heat: g}, nil
}

// WriteData dumps the numbers behind f as text, for golden tests and for
// anyone who wants to re-plot them.
func (f Figure) WriteData(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n# x: %s\n# y: %s\n", f.Title, f.XLabel, f.YLabel)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, s := range f.Series {
		fmt.Fprintf(&b, "series %q\n", s.Name)
		for _, p := range s.Points {
			fmt.Fprintf(&b, "  %s %s\n", num(p.X), num(p.Y))
		}
	}
	for _, s := range f.Dots {
		fmt.Fprintf(&b, "dots %q\n", s.Name)
		for _, p := range s.Points {
			fmt.Fprintf(&b, "  %s %s\n", num(p.X), num(p.Y))
		}
	}
	for _, m := range f.Marks {
		fmt.Fprintf(&b, "mark %q %s %s\n", m.Label, num(m.X), num(m.Y))
	}
	if g := f.Heat; g != nil {
		fmt.Fprintf(&b, "heat %q\n", g.ZName)
		for i, y := range g.Ys {
			for j, x := range g.Xs {
				fmt.Fprintf(&b, "  %s %s %s\n", num(x), num(y), num(g.Zs[i][j]))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Figure sizes: 800×500 px at 96 dpi.
const (
	FigureWidth  = 600 * vg.Length(1) // points: 800 px
	FigureHeight = 375 * vg.Length(1)
)

// Plot draws f with gonum/plot. A LegendRight figure's legend is left out
// (Render draws it beside the plot).
func (f Figure) Plot() (*plot.Plot, error) {
	p, _, err := f.build()
	return p, err
}

// build draws f and returns the legend to draw beside it, if any.
func (f Figure) build() (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	legend := &p.Legend
	var side *plot.Legend
	if f.LegendRight {
		l := plot.NewLegend()
		side = &l
		legend = side
	}
	p.Title.Text = f.Title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Tick.Label.Font.Size = vg.Points(11)
	}
	legend.TextStyle.Font.Size = vg.Points(11)
	legend.Top = true
	legend.Left = true
	if len(f.XTicks) > 0 {
		p.X.Tick.Marker = ticks(f.XTicks)
	}
	if g := f.Heat; g != nil {
		if err := g.check(); err != nil {
			return nil, nil, err
		}
		p.Title.Text = fmt.Sprintf("%s (cell: %s, blue low, red high)", f.Title, g.ZName)
		p.X.Tick.Marker = namedTicks(g.Xs, g.XLabels)
		p.Y.Tick.Marker = namedTicks(g.Ys, g.YLabels)
		hm := plotter.NewHeatMap(gridXYZ{g}, moreland.SmoothBlueRed().Palette(64))
		p.Add(hm)
		labels, err := heatLabels(g)
		if err != nil {
			return nil, nil, err
		}
		p.Add(labels)
		return p, nil, nil
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	p.Y.Tick.Marker = niceTicks{}
	if len(f.XTicks) == 0 {
		p.X.Tick.Marker = niceTicks{}
	}
	for i, s := range f.Series {
		if len(s.Points) == 0 {
			continue
		}
		l, err := plotter.NewLine(s.Points)
		if err != nil {
			return nil, nil, fmt.Errorf("report: figure %s, series %q: %w", f.Name, s.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(2)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		legend.Add(s.Name, l)
	}
	for i, s := range f.Dots {
		sc, err := plotter.NewScatter(s.Points)
		if err != nil {
			return nil, nil, fmt.Errorf("report: figure %s, series %q: %w", f.Name, s.Name, err)
		}
		sc.GlyphStyle.Shape = draw.RingGlyph{}
		sc.GlyphStyle.Radius = vg.Points(5)
		sc.GlyphStyle.Color = plotutil.Color(len(f.Series) + i + 1)
		p.Add(sc)
		legend.Add(s.Name, sc)
	}
	if len(f.Marks) > 0 {
		var pts plotter.XYs
		var lab []string
		for _, m := range f.Marks {
			pts = append(pts, plotter.XY{X: m.X, Y: m.Y})
			lab = append(lab, m.Label)
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, nil, fmt.Errorf("report: figure %s, marks: %w", f.Name, err)
		}
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		sc.GlyphStyle.Radius = vg.Points(4)
		sc.GlyphStyle.Color = color.Black
		p.Add(sc)
		ls, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: lab})
		if err != nil {
			return nil, nil, err
		}
		for i := range ls.TextStyle {
			ls.TextStyle[i].Font.Size = vg.Points(11)
			ls.TextStyle[i].XAlign = draw.XLeft
			ls.TextStyle[i].YAlign = draw.YTop
		}
		ls.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(-4)}
		p.Add(ls)
		legend.Add(cmp.Or(f.MarkLegend, "break-even"), sc)
	}
	return p, side, nil
}

func heatLabels(g *Grid) (*plotter.Labels, error) {
	var xyl plotter.XYLabels
	for i, y := range g.Ys {
		for j, x := range g.Xs {
			xyl.XYs = append(xyl.XYs, plotter.XY{X: x, Y: y})
			xyl.Labels = append(xyl.Labels, strconv.FormatFloat(g.Zs[i][j], 'g', 3, 64))
		}
	}
	ls, err := plotter.NewLabels(xyl)
	if err != nil {
		return nil, err
	}
	for i := range ls.TextStyle {
		ls.TextStyle[i].XAlign = draw.XCenter
		ls.TextStyle[i].YAlign = draw.YCenter
		ls.TextStyle[i].Color = color.Black
		ls.TextStyle[i].Font.Size = vg.Points(12)
	}
	return ls, nil
}

// ticks labels exactly the values vs.
func ticks(vs []float64) plot.ConstantTicks {
	out := make(plot.ConstantTicks, len(vs))
	for i, v := range vs {
		out[i] = plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)}
	}
	return out
}

// namedTicks labels vs with names when there is one per value, else with
// the values.
func namedTicks(vs []float64, names []string) plot.ConstantTicks {
	out := ticks(vs)
	if len(names) == len(vs) {
		for i := range out {
			out[i].Label = names[i]
		}
	}
	return out
}

// niceTicks labels about six round values (1, 2 or 5 × 10ⁿ apart), more
// than gonum's default ticker shows on short ranges.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step))))
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
	}
	return out
}

// Render writes f as "svg" or "png", 800 px wide. SVG output is
// deterministic (no timestamps, fonts referenced by name, not embedded).
func (f Figure) Render(w io.Writer, format string) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("report: figure format %q: want svg or png", format)
	}
	p, side, err := f.build()
	if err != nil {
		return err
	}
	c, err := draw.NewFormattedCanvas(FigureWidth, FigureHeight, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	if side == nil {
		p.Draw(dc)
	} else {
		longest := 0
		for _, s := range f.Series {
			longest = max(longest, len([]rune(s.Name)))
		}
		strip := min(vg.Points(30+6*float64(longest)), FigureWidth/3)
		p.Draw(draw.Crop(dc, 0, -strip, 0, 0))
		side.Draw(draw.Crop(dc, FigureWidth-strip+vg.Points(8), 0, 0, -vg.Points(24)))
	}
	_, err = c.WriteTo(w)
	return err
}

// WriteFigures saves each figure as NAME.svg, NAME.png and NAME.txt (its
// data) in dir (created if missing), each atomically.
func WriteFigures(dir string, figs []Figure) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, fig := range figs {
		for _, ext := range []string{"svg", "png"} {
			path := filepath.Join(dir, fig.Name+"."+ext)
			if err := atomicfile.WriteFunc(path, func(w io.Writer) error { return fig.Render(w, ext) }); err != nil {
				return err
			}
		}
		if err := atomicfile.WriteFunc(filepath.Join(dir, fig.Name+".txt"), fig.WriteData); err != nil {
			return err
		}
	}
	return nil
}
