package sim

import (
	"time"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/traces"
)

// RecordKind says what a record describes.
type RecordKind string

// Record kinds. A call is one billed model call of the agent; the others are
// context-management passes (with their summarizer call, if any).
const (
	KindCall    RecordKind = "call"
	KindBatch   RecordKind = "batch"
	KindMicro   RecordKind = "micro"
	KindPrune   RecordKind = "prune"
	KindIdle    RecordKind = "idle"
	KindMasking RecordKind = "masking"
	KindBreaker RecordKind = "breaker"
)

// A Record is one simulated call or context-management pass. Records are the
// only thing package report reads.
type Record struct {
	Trace  string     `json:"trace"`
	Policy string     `json:"policy"`
	Seq    int        `json:"seq"`
	Kind   RecordKind `json:"kind"`
	// Time is the virtual time the call was sent (or the pass ran).
	Time time.Time `json:"t"`
	// Event is the index of the transcript event that caused it.
	Event int    `json:"event"`
	Turn  int    `json:"turn"`
	Model string `json:"model,omitempty"`

	// Usage and CostUSD are what the fake provider billed; for a pass, its
	// summarizer call.
	Usage   traces.Usage `json:"usage"`
	CostUSD float64      `json:"cost_usd"`
	// Recorded is what the real provider billed for the same call, when the
	// trace recorded it.
	Recorded        *traces.Usage `json:"recorded,omitempty"`
	RecordedCostUSD float64       `json:"recorded_cost_usd,omitempty"`

	// Prompt is the billed prompt size; Threshold the compaction threshold in
	// force (0 when the policy has none) and Window the context window.
	Prompt    int `json:"prompt"`
	Threshold int `json:"threshold,omitempty"`
	Window    int `json:"window,omitempty"`
	// Estimates of the prompt by the policy's estimators, made before the
	// call, keyed by estimator name, sorted by name when written.
	Estimates []estimate.Estimate `json:"estimates,omitempty"`

	Breakpoints int `json:"breakpoints,omitempty"`
	// MissReason and MissTokens say why the call did not read part of what
	// the session's previous call cached (provider.Miss*), and how much.
	MissReason string `json:"miss_reason,omitempty"`
	MissTokens int    `json:"miss_tokens,omitempty"`
	TTFTMS     int64  `json:"ttft_ms"`
	LatencyMS  int64  `json:"latency_ms"`
	// StallMS is time the turn waited on context management before this
	// call (a batch compaction firing in the turn).
	StallMS int64 `json:"stall_ms,omitempty"`

	// Pass fields (compaction, prune, micro, masking, breaker).
	Trigger      string `json:"trigger,omitempty"`
	Outcome      string `json:"outcome,omitempty"`
	TokensBefore int    `json:"tokens_before,omitempty"`
	TokensAfter  int    `json:"tokens_after,omitempty"`

	// Error is the provider's answer when the call was rejected.
	Error string `json:"error,omitempty"`
	// Detail holds kind-specific telemetry (micro-compaction's fields, ...),
	// as sorted key/value pairs.
	Detail []KV `json:"detail,omitempty"`
}

// A KV is one telemetry field.
type KV struct {
	Key   string  `json:"k"`
	Value float64 `json:"v"`
}
