package sim

import (
	"context"
	"time"

	"github.com/ctxsim/ctxsim/policies/cacheplan"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// A Policy is everything the engine needs to know about a context-management
// policy. NewPolicy builds one from a policies.Config.
type Policy struct {
	Name string
	// Planner marks the cache breakpoints of each request. It runs last:
	// the engine freezes the request right after it.
	Planner cacheplan.Planner
	// PlannerFor, when set, is the planner of one session, in place of
	// Planner: the recorded policy marks as the version that wrote the
	// log did.
	PlannerFor func(s *traces.Session) cacheplan.Planner
	// TTL picks the cache tier of a session (5m, 1h, hermes' auto, or
	// NoCache for caching off).
	TTL func(s *traces.Session) prompt.TTL
	// Wire is how requests are rendered (framing, thinking stripping,
	// scaffold splitting).
	Wire prompt.Wire
	// NewCompactor makes the context manager of one session replay; nil
	// means the policy never compacts.
	NewCompactor func(s *traces.Session, model compact.Model, sum compact.Summarizer) (Compactor, error)
	// ForkSummary sends each summarizer call through the session's own
	// provider as the current request plus the summary instruction, by the
	// main model, so it reads the cached conversation (Claude Code's
	// cache-safe compaction fork), instead of billing a fresh prompt.
	ForkSummary bool
	// Recorded replays the compactions the trace recorded (the continuation
	// summary replaces the history at each compaction boundary) instead of
	// deciding its own.
	Recorded bool
	// ObserveResends makes the provider serve a recorded call no more of
	// the cached prefix than its bill shows it did, where the log shows a
	// re-send it cannot explain (Calibrator.ReadLimit). It needs a
	// calibrator that observes (anchored) or replays (frozen) them.
	ObserveResends bool
}

// A Compactor is a policy's context manager for one session: the compaction
// ladder. *compact.Manager is the implementation; the interface is the seam
// the engine drives. Each hook gets the current view and returns the view to
// use from now on (the same pointer when nothing changed) and the passes it
// ran. A compactor that also acts at other moments implements the optional
// interfaces below; the engine asks for each by type assertion.
type Compactor interface {
	// BeforeCall runs before every model call (and before each retry).
	BeforeCall(ctx context.Context, now time.Time, v *prompt.View) (*prompt.View, []compact.Pass, error)
	// AfterResponse is told the billed prompt of the call just made; ok
	// is false when the provider rejected it.
	AfterResponse(now time.Time, v *prompt.View, billedPrompt int, ok bool) []compact.Pass
}

// A Resumer acts when a user message arrives after idle; prefixCold says the
// provider's cache of the prefix expired anyway.
type Resumer interface {
	OnResume(ctx context.Context, now time.Time, idle time.Duration, prefixCold bool, v *prompt.View) (*prompt.View, []compact.Pass)
}

// A TurnEnder acts after the last call of a turn.
type TurnEnder interface {
	EndOfTurn(ctx context.Context, now time.Time, v *prompt.View) (*prompt.View, []compact.Pass)
}

// A Restarter is told the agent process restarted: volatile state is lost.
type Restarter interface{ Restart() }

// A ModelSetter is told the session switched models (a new window and
// threshold).
type ModelSetter interface{ SetModel(m compact.Model) }

// A MemoSharer keeps what it derives from block content in a memo shared
// with other compactors (Options.Memo). Sharing changes no decision.
type MemoSharer interface{ ShareMemo(*compact.Memo) }

// A FloorSharer hashes a new floor through the FloorHashes the engine
// shares with the run's Builder, so a floor is hashed once a session (and
// not at all when Options.Hashes kept it from an earlier replay). Sharing
// changes no decision.
type FloorSharer interface{ ShareFloors(*prompt.FloorHashes) }

// A Gauge reports a compactor's view of the prompt before a call, for the
// call's record: its threshold in tokens (0: none) and its estimates.
type Gauge interface {
	Threshold() int
	Estimates(v *prompt.View) []estimate.Estimate
}

var (
	_ Compactor   = (*compact.Manager)(nil)
	_ Resumer     = (*compact.Manager)(nil)
	_ TurnEnder   = (*compact.Manager)(nil)
	_ Restarter   = (*compact.Manager)(nil)
	_ ModelSetter = (*compact.Manager)(nil)
	_ Gauge       = (*compact.Manager)(nil)
	_ MemoSharer  = (*compact.Manager)(nil)
	_ FloorSharer = (*compact.Manager)(nil)
)
