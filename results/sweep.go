package results

import (
	"sort"
)

// A SweepGrid names a sweep's grid: its base policy, its axes, and its
// points in grid order. Its JSON is what merge needs to print a sharded
// sweep.
type SweepGrid struct {
	Base   string   `json:"base"`
	Axes   []Axis   `json:"axes"`
	Points []string `json:"points"`
}

// Sort orders runs as the cells ran: by grid point, then by trace.
func (g SweepGrid) Sort(runs []RunSummary) {
	rank := map[string]int{}
	for i, p := range g.Points {
		rank[p] = i
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if rank[runs[i].Policy] != rank[runs[j].Policy] {
			return rank[runs[i].Policy] < rank[runs[j].Policy]
		}
		return runs[i].Trace < runs[j].Trace
	})
}

// SortRuns orders runs by trace, then by the order of policies.
func SortRuns(runs []RunSummary, policies []string) {
	rank := map[string]int{}
	for i, s := range policies {
		rank[s] = i
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].Trace != runs[j].Trace {
			return runs[i].Trace < runs[j].Trace
		}
		return rank[runs[i].Policy] < rank[runs[j].Policy]
	})
}

// An Axis is one swept setting of a sweep grid (runner.ParseGrid): a
// config key, the short name cell names use, and its values in order.
type Axis struct {
	Key, Short string
	Values     []string
}
