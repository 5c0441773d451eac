package traces

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A resumed session's copy of an earlier session's call is history: the
// earlier session keeps the bill, whatever order the two were loaded in.
func TestMarkCopied(t *testing.T) {
	t0 := time.Date(2025, 8, 6, 10, 0, 0, 0, time.UTC)
	call := func(at time.Duration, req string) Event {
		return Event{Time: t0.Add(at), Kind: Assistant, RequestID: req, Usage: &Usage{Input: 1, CacheRead: 100}}
	}
	first := &Session{ID: "a", Events: []Event{call(0, "r1"), call(time.Minute, "r2")}}
	resumed := &Session{ID: "b", Events: []Event{call(time.Hour, "r1"), call(time.Hour, "r2"), call(time.Hour+time.Minute, "r3")}}
	MarkCopied([]*Session{resumed, first}, nil)
	for i := range first.Events {
		require.NotNil(t, first.Events[i].Usage, "the earlier session keeps its calls")
	}
	require.Equal(t, "true", resumed.Events[0].Meta[MetaCopied])
	require.Equal(t, "true", resumed.Events[1].Meta[MetaCopied])
	require.Nil(t, resumed.Events[0].Usage)
	require.Nil(t, resumed.Events[2].Meta, "its own call is untouched")
	require.NotNil(t, resumed.Events[2].Usage)
	MarkCopied([]*Session{first, resumed}, nil) // idempotent
	require.NotNil(t, resumed.Events[2].Usage)
}
