// Package estimate owns token counting and prompt-size estimation: the
// Tokenizer interface, a Memo that counts each distinct block once per process, and
// the estimators a harness uses to decide when to compact.
//
// Estimators (all implement Estimator over a *prompt.View):
//
//   - RoughEstimator: hermes-agent's estimate_request_tokens_rough. ASCII
//     text is ceil(len/4); CJK, Hangul and Kana codepoints count one token
//     each; other text ceil(utf8 bytes/4); tool schemas (name, description
//     and JSON parameters)/4; images ImageTokens. Rough is the per-string rule,
//     MsgBudget the compressor's per-message budget rule.
//   - ExactEstimator: a tokenizer count through a Memo, plus per-message
//     framing.
//   - Calibrated: the usage anchor. After every response whose prompt fit,
//     Capture stores (billed, rough) for the sent view; Project returns
//     billed + max(0, rough_now − rough_at_anchor), or the rough estimate
//     (anchored=false) when the billed prefix was rewritten or the model
//     changed.
//
// Typical steps of one call (what policies/compact does for you):
//
//	rough := estimate.NewRough()
//	cal := estimate.NewCalibrated(rough)
//	tokens, anchored := cal.Project(model, view) // before the call
//	...                                          // send, get billed prompt
//	cal.Capture(model, view, billed)             // after a response that fit
//
// Each estimator's reading is an Estimate{Name, Tokens}; the engine records
// them next to the billed prompt so their errors can be reported.
//
// # Subpackages
//
// The heavy parts live below, so that the policy packages a Go agent
// imports stay light (no tokenizer tables, no gonum):
//
//   - estimate/tiktoken: the exact o200k_base and cl100k_base encodings, a
//     Tokenizer.
//   - estimate/fit: the ridge fit of a provider's billed sizes against local
//     counts (Calibration).
//   - estimate/tokcache: a persistent count cache for a Memo, so a second
//     run over the same logs tokenizes nothing.
package estimate
