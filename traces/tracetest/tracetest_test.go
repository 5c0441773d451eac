package tracetest

import (
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

func TestKindsAndRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &traces.Session{ID: "s", Format: "native", Model: "m", Events: []traces.Event{
		{Kind: traces.User, Time: t0, Blocks: []traces.Block{{Kind: traces.Text, Text: "hi"}}},
		{Kind: traces.Assistant, Time: t0.Add(time.Second), Blocks: []traces.Block{{Kind: traces.Text, Text: "hello"}},
			Usage: &traces.Usage{Input: 10, Output: 2}},
	}}
	if got := Kinds(s); got != "user assistant" {
		t.Errorf("Kinds = %q", got)
	}
	RoundTrip(t, s)
}
