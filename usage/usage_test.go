package usage

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func call(ts, model string, in int64) Call {
	return Call{Time: at(ts), Session: "s", Project: "p", Model: model, Usage: traces.Usage{Input: in, Output: 1}}
}

// The cases of ccusage's own identifySessionBlocks tests: a block starts at
// the first call floored to the UTC hour and ends after 5 hours or a gap of
// more than 5 hours.
func TestBlocks(t *testing.T) {
	cases := []struct {
		name  string
		times []string
		want  []string
	}{
		{"within 5 hours", []string{"2024-01-01T10:00:00Z", "2024-01-01T11:00:00Z", "2024-01-01T12:00:00Z"},
			[]string{"2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"}},
		{"6 hours apart", []string{"2024-01-01T10:00:00Z", "2024-01-01T16:00:00Z"},
			[]string{"2024-01-01T10:00:00Z", "2024-01-01T16:00:00Z"}},
		{"floored to the hour", []string{"2024-01-01T10:55:30Z"}, []string{"2024-01-01T10:00:00Z"}},
		// 10:30 starts 10:00; 14:59 is 4h59m after the start; 15:10 is
		// 5h10m after it (past the window) though only 11m after 14:59.
		{"window from the floored start", []string{"2024-01-01T10:30:00Z", "2024-01-01T14:59:00Z", "2024-01-01T15:10:00Z"},
			[]string{"2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z", "2024-01-01T15:00:00Z"}},
		{"exactly 5 hours stays", []string{"2024-01-01T10:00:00Z", "2024-01-01T15:00:00Z"},
			[]string{"2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"}},
		{"unsorted input", []string{"2024-01-01T12:00:00Z", "2024-01-01T10:00:00Z", "2024-01-01T11:00:00Z"},
			[]string{"2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"}},
	}
	for _, c := range cases {
		var calls []Call
		for _, ts := range c.times {
			calls = append(calls, call(ts, "m", 1))
		}
		require.Equal(t, c.want, Blocks(calls, time.UTC), c.name)
	}
	// Keys are shown in the report's zone.
	tokyo, err := LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	require.Equal(t, []string{"2024-01-01T19:00:00+09:00"}, Blocks([]Call{call("2024-01-01T10:20:00Z", "m", 1)}, tokyo))
}

func TestAggregateByDayInZone(t *testing.T) {
	card := pricing.NewCard(pricing.Price{Model: "a", Input: 1, Output: 10}, pricing.Price{Model: "b", Input: 2, Output: 20})
	calls := []Call{
		call("2026-02-10T23:30:00Z", "a", 1000000), // 2026-02-10 in UTC, 00:30 on the 11th in Berlin (UTC+1)
		call("2026-02-10T21:00:00Z", "b", 1000000),
		call("2026-02-11T09:00:00Z", "a", 2000000),
		{Session: "h", Project: "p", Model: "a", Usage: traces.Usage{Input: 5}, Requests: 3}, // no time
	}
	rep := Aggregate(calls, card, Options{By: ByDay, Loc: time.UTC})
	require.Len(t, rep.Groups, 3)
	g := rep.Groups[0]
	require.Equal(t, "2026-02-10", g.Key)
	require.Equal(t, 2, g.Requests)
	require.Equal(t, at("2026-02-10T21:00:00Z"), g.First)
	require.Equal(t, at("2026-02-10T23:30:00Z"), g.Last)
	require.InDelta(t, 1.00001+2.00002, g.CostUSD, 1e-9)
	require.Equal(t, "b", g.Models[0].Model, "costliest model first")
	require.Equal(t, []string{"2026-02-10", "2026-02-11", NoTime}, []string{rep.Groups[0].Key, rep.Groups[1].Key, rep.Groups[2].Key})
	require.Equal(t, 3, rep.Groups[2].Requests)
	require.Equal(t, 6, rep.Totals.Requests)

	berlin, err := LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	rep = Aggregate(calls[:3], card, Options{By: ByDay, Loc: berlin})
	require.Equal(t, "2026-02-10", rep.Groups[0].Key)
	require.Equal(t, "2026-02-11", rep.Groups[1].Key)
	require.Equal(t, 1, rep.Groups[0].Requests)
	require.Equal(t, 2, rep.Groups[1].Requests, "23:30Z is the 11th in Berlin")
	require.Equal(t, "2026-02-11T00:30:00+01:00", rep.Groups[1].First.Format(time.RFC3339), "first/last in the report's zone")
}

func TestAggregateWeekMonthFilterUnpriced(t *testing.T) {
	card := pricing.NewCard(pricing.Price{Model: "a", Input: 1, Output: 10})
	calls := []Call{
		call("2026-02-07T12:00:00Z", "a", 1), // Saturday
		call("2026-02-08T12:00:00Z", "a", 1), // Sunday: a new week by default
		call("2026-03-02T12:00:00Z", "mystery-9", 1),
		call("2026-03-03T12:00:00Z", "a", 1),
	}
	calls[2].Session = "s2"
	keys := func(r *Report) []string {
		var ks []string
		for _, g := range r.Groups {
			ks = append(ks, g.Key)
		}
		return ks
	}
	require.Equal(t, []string{"2026-02-01", "2026-02-08", "2026-03-01"}, keys(Aggregate(calls, card, Options{By: ByWeek})))
	require.Equal(t, []string{"2026-02-02", "2026-03-02"}, keys(Aggregate(calls, card, Options{By: ByWeek, WeekStart: time.Monday})))
	rep := Aggregate(calls, card, Options{By: ByMonth})
	require.Equal(t, []string{"2026-02", "2026-03"}, keys(rep))
	// The unknown model costs $0 and is named; the others are priced.
	require.Equal(t, []Unpriced{{Model: "mystery-9", Calls: 1, Sessions: []string{"s2"}, Err: rep.Unpriced[0].Err}}, rep.Unpriced)
	require.ErrorContains(t, rep.Unpriced[0].Err, "mystery-9")
	require.InDelta(t, 3*(1e-6+10e-6), rep.Totals.CostUSD, 1e-9)
	require.Equal(t, 4, rep.Totals.Requests)

	since, err := ParseBound("2026-02-08", time.UTC, false)
	require.NoError(t, err)
	until, err := ParseBound("20260302", time.UTC, true)
	require.NoError(t, err)
	rep = Aggregate(calls, card, Options{By: ByModel, Since: since, Until: until})
	require.Equal(t, []string{"a", "mystery-9"}, keys(rep))
	require.Equal(t, 2, rep.Totals.Requests, "the 8th and the 2nd, both inclusive")
	_, err = ParseBound("yesterday", time.UTC, false)
	require.Error(t, err)
	exact, err := ParseBound("2026-03-02T12:00:00Z", time.UTC, true)
	require.NoError(t, err)
	require.Equal(t, at("2026-03-02T12:00:00Z"), exact)
	_, err = ParseBy("fortnight")
	require.ErrorContains(t, err, "session, day, week, month, block, project, model")
	_, err = LoadLocation("Mars/Olympus")
	require.Error(t, err)
}
