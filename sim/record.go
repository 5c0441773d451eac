package sim

import (
	"time"

	"github.com/ctxsim/ctxsim/policies/compact"
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
	// Detail holds kind-specific telemetry: the engine's own fields
	// (DetailKey) and a pass's compactor telemetry (micro-compaction's
	// fields, ...), in the order set.
	Detail []compact.KV `json:"detail,omitempty"`
}

// A DetailKey names a Record.Detail field for metrics records cannot
// otherwise carry; package report reads them (docs/metrics.md). A pass's
// compactor adds its own fields, named by the compactor.
type DetailKey string

const (
	// DetailUserMsgs and DetailUserVerbatim, on a call record, are the
	// number of user messages in the transcript so far and how many of
	// them the request carried word for word.
	DetailUserMsgs     DetailKey = "user_msgs"
	DetailUserVerbatim DetailKey = "user_msgs_verbatim"
	// DetailPrefixCold, on a pass record, is 1 when the provider's cache of
	// the prefix had already expired when the pass ran (an idle resume past
	// the TTL), so the next call would have rewritten the prompt anyway.
	DetailPrefixCold DetailKey = "prefix_cold"
	// DetailFitPrefix, on a call record of the recorded policy, is 1 when
	// the call was among those the open-loop calibration was fitted on.
	DetailFitPrefix DetailKey = "fit_prefix"
	// DetailObservedResend and DetailObservedKept, on a call record of a
	// policy that honours observed events (recorded-observed and its
	// frozen variants), are 1 when the call's bill was followed: a re-send
	// the transcript does not explain (prompt.Request.ReadLimit), or a read
	// kept alive past the TTL (prompt.Request.KeepAlive). They say how much
	// of that replay's fit comes from reading the bill.
	DetailObservedResend DetailKey = "observed_resend"
	DetailObservedKept   DetailKey = "observed_kept"
	// DetailThinkingKept, on a call record of a recorded Claude Code
	// replay whose version keeps earlier thinking behind a flag
	// (claudecode.ThinkingFlagged), is what the call's bill showed of
	// earlier thinking: 1 kept, 0 stripped. Only calls whose bill could
	// tell carry it; the replay keeps thinking once the 1s outnumber the
	// 0s.
	DetailThinkingKept DetailKey = "thinking_kept"
	// DetailFloorKept, on a call record of a recorded replay whose first
	// call read a shared floor from cache (Options.Prewarm), is what the
	// call's bill showed after the session's own entries had expired: 1
	// the shared floor read (another session kept it warm), 0 not. The
	// replay keeps the floor warm once the 1s outnumber the 0s.
	DetailFloorKept DetailKey = "floor_kept"
)

// EstimateOpenLoop names the open-loop prediction of a recorded call's
// prompt among Record.Estimates (sized from the transcript alone, after a
// fit on the first 20% of calls).
const EstimateOpenLoop = "open_loop"

// SetDetail adds the field k to r's Detail.
func (r *Record) SetDetail(k DetailKey, v float64) {
	r.Detail = append(r.Detail, compact.KV{Key: string(k), Value: v})
}

// DetailValue is the value of field k of r's Detail, ok false when unset.
func (r *Record) DetailValue(k DetailKey) (v float64, ok bool) {
	for _, kv := range r.Detail {
		if kv.Key == string(k) {
			return kv.Value, true
		}
	}
	return 0, false
}
