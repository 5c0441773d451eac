package sim

import (
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// A Planner marks cache breakpoints on a request. It runs last: the engine
// freezes the request right after it.
type Planner interface {
	Plan(req *prompt.Request, ttl prompt.TTL)
}

// A Policy is everything the engine needs to know about a context-management
// policy. It is built from a policies.Config by package policies.
type Policy struct {
	Name    string
	Planner Planner
	// TTL picks the cache tier of a session (5m, 1h, hermes' auto, or
	// NoCache for caching off).
	TTL func(s *traces.Session) prompt.TTL
	// Wire is how requests are rendered (framing, thinking stripping,
	// scaffold splitting).
	Wire prompt.Wire
	// Context makes the context manager of one session replay; nil means the
	// policy never compacts.
	Context func(s *traces.Session, window int) Context
	// Recorded replays the compactions the trace recorded (the continuation
	// summary replaces the history at each compaction boundary) instead of
	// deciding its own.
	Recorded bool
}

// A Context is a policy's context manager for one session: the compaction
// ladder. Each hook gets the current view and returns the view to use from
// now on (the same pointer when nothing changed) and the passes it ran.
type Context interface {
	OnResume(now time.Time, idle time.Duration, prefixCold bool, v *prompt.View) (*prompt.View, []Pass)
	BeforeCall(now time.Time, v *prompt.View) (*prompt.View, []Pass)
	AfterResponse(now time.Time, v *prompt.View, billedPrompt int, ok bool)
	EndOfTurn(now time.Time, v *prompt.View) (*prompt.View, []Pass)
	Restart()
	// Threshold is the compaction threshold in tokens (0: none).
	Threshold() int
	// Estimates are the policy's estimates of v's prompt size, by estimator.
	Estimates(v *prompt.View) []Estimate
}

// A Pass is one context-management pass a Context ran.
type Pass struct {
	Kind         RecordKind
	Trigger      string
	Outcome      string
	TokensBefore int
	TokensAfter  int
	// Summary is the summarizer call the pass made, if any.
	Summary *SummaryCall
	Detail  []KV
}

// A SummaryCall is a summarizer model call: billed and timed like any call.
type SummaryCall struct {
	Model   string
	Usage   traces.Usage
	Latency time.Duration
	Failed  bool
}
