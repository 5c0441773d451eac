package chatlog

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// Pacing is the synthetic timing given to a source that records no times
// (the public trajectory sets). Each event comes Step after the previous
// one, scaled by a factor drawn uniformly from [1−Jitter, 1+Jitter] by a
// PCG source seeded from (Seed, session id), so the same input and seed give
// the same times.
//
// Synthetic timing has no idle gaps: a cache entry never expires between
// steps, so TTL and idle-compaction policies look better (and the 1h tier
// worse) than on the real, human-paced traffic the trajectory came from.
type Pacing struct {
	Start  time.Time
	Step   time.Duration
	Jitter float64
	Seed   uint64
}

// DefaultPacing is 10 s ± 50 % per event from 2025-01-01T00:00:00Z, seed 1:
// roughly the step time of an agent on a coding benchmark.
var DefaultPacing = Pacing{
	Start:  time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	Step:   10 * time.Second,
	Jitter: 0.5,
	Seed:   1,
}

// Note is the sentence put in Session.Notes of a session paced by p.
func (p Pacing) Note() string {
	return fmt.Sprintf("timing is synthetic: the source records no times; events are %s apart ±%.0f%% (seed %d) from %s",
		p.Step, p.Jitter*100, p.Seed, p.Start.UTC().Format(time.RFC3339))
}

// A clock hands out the synthetic times of one session.
type clock struct {
	p   Pacing
	rng *rand.Rand
	now time.Time
}

func (p Pacing) clock(sessionID string) *clock {
	return &clock{p: p, rng: rand.New(rand.NewPCG(p.Seed, traces.HashString(sessionID))), now: p.Start}
}

// cur is the time of the next event.
func (c *clock) cur() time.Time { return c.now }

// advance moves past an event.
func (c *clock) advance() {
	f := 1 + c.p.Jitter*(2*c.rng.Float64()-1)
	c.now = c.now.Add(time.Duration(f * float64(c.p.Step)).Round(time.Millisecond))
}
