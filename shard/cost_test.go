package shard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
)

func TestPrefixes(t *testing.T) {
	require.Equal(t, []string{"."}, prefixes("."))
	require.Equal(t, []string{".", "a", "a/b"}, prefixes("a/b"))
}

// Warnings of the projects add up by reason, each first seen where the
// one-process run sees it first: at the earliest file in its order.
func TestMergeWarnings(t *testing.T) {
	got := MergeWarnings([]CostWarning{
		{traces.Warning{Reason: "z", Count: 2, First: "b.jsonl:3"}, 5},
		{traces.Warning{Reason: "a", Count: 1, First: "c.jsonl:1"}, 7},
		{traces.Warning{Reason: "z", Count: 3, First: "a.jsonl:9"}, 1},
	})
	require.Equal(t, []traces.Warning{
		{Reason: "a", Count: 1, First: "c.jsonl:1"},
		{Reason: "z", Count: 5, First: "a.jsonl:9"},
	}, got)
}
