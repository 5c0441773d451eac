package results

// A Pivot sums runs into rows × columns (policies × workloads, grid rows ×
// grid columns, policies × sessions...): the one aggregation every
// comparison table is drawn from, with the one rule for "best".
type Pivot struct {
	// Rows and Cols are the keys in first-seen order.
	Rows, Cols []string
	cells      map[[2]string]*Total
}

// A Total is the sum of the runs in one cell of a pivot.
type Total struct {
	Runs    int
	CostUSD float64
	// CacheRead and Prompt are token sums, for the token-weighted hit rate.
	CacheRead, Prompt int64
	// Overflows and Failed count calls rejected for overflowing the window
	// and for other reasons: both go unbilled, so a total with either is
	// not comparable on cost.
	Overflows, Failed int
}

// Comparable reports whether every call of the total was billed: no
// overflow and no failed call, so its cost is not flattered by rejected
// calls.
func (t *Total) Comparable() bool { return t.Overflows == 0 && t.Failed == 0 }

// HitRate is the token-weighted cache hit rate, 0 without prompt tokens.
func (t *Total) HitRate() float64 {
	if t.Prompt == 0 {
		return 0
	}
	return float64(t.CacheRead) / float64(t.Prompt)
}

// NewPivot sums runs into the cells named by row and col.
func NewPivot(runs []RunSummary, row, col func(RunSummary) string) *Pivot {
	p := &Pivot{cells: map[[2]string]*Total{}}
	seenR, seenC := map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		rk, ck := row(r), col(r)
		if !seenR[rk] {
			seenR[rk] = true
			p.Rows = append(p.Rows, rk)
		}
		if !seenC[ck] {
			seenC[ck] = true
			p.Cols = append(p.Cols, ck)
		}
		t := p.cells[[2]string{rk, ck}]
		if t == nil {
			t = &Total{}
			p.cells[[2]string{rk, ck}] = t
		}
		t.Runs++
		t.CostUSD += r.CostUSD
		t.CacheRead += r.Tokens.CacheRead
		t.Prompt += r.Tokens.Prompt()
		t.Overflows += r.OverflowErrors
		t.Failed += r.FailedRequests
	}
	return p
}

// At is the total of a cell, nil when no run fell in it.
func (p *Pivot) At(row, col string) *Total { return p.cells[[2]string{row, col}] }

// BestIn is the cheapest comparable row of column col among rows (ties go
// to the earlier row), or "" when none is comparable.
func (p *Pivot) BestIn(col string, rows []string) string {
	best := ""
	var bc float64
	for _, r := range rows {
		t := p.At(r, col)
		if t == nil || !t.Comparable() {
			continue
		}
		if best == "" || t.CostUSD < bc {
			best, bc = r, t.CostUSD
		}
	}
	return best
}

// Best is the cheapest comparable cell over rows × cols, row-major (ties
// go to the earlier cell), or ok false when none is comparable.
func (p *Pivot) Best(rows, cols []string) (row, col string, ok bool) {
	var bc float64
	for _, r := range rows {
		for _, c := range cols {
			t := p.At(r, c)
			if t == nil || !t.Comparable() {
				continue
			}
			if !ok || t.CostUSD < bc {
				row, col, bc, ok = r, c, t.CostUSD, true
			}
		}
	}
	return row, col, ok
}

// FirstComparable is the first comparable row of column col among rows, or
// "": the baseline savings are measured from.
func (p *Pivot) FirstComparable(col string, rows []string) string {
	for _, r := range rows {
		if t := p.At(r, col); t != nil && t.Comparable() {
			return r
		}
	}
	return ""
}
