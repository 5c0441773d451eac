// Package chatlog imports OpenAI-style message logs into the native trace
// model: chat-completions request logs, and the public agent trajectory
// sets whose rows are message arrays.
//
// # Inputs
//
// A file (or every *.json / *.jsonl file under a directory) holds records,
// one per JSONL line or as one JSON document (a record or an array):
//
//   - a chat-completions request log record: {"messages":[...], "model",
//     "usage":{prompt_tokens, completion_tokens,
//     prompt_tokens_details{cached_tokens}}, "created", "choices":[{message}]},
//     or the same split into {"request":{...},"response":{...}};
//   - a trajectory row: nebius/SWE-agent-trajectories
//     (trajectory[{role: system|user|ai, text}], model_name, instance_id) or
//     nebius/SWE-rebench-openhands-trajectories (trajectory[{role, content,
//     tool_calls, name, tool_call_id}], tools, trajectory_id), with the
//     trajectory possibly JSON-encoded as a string.
//
// # What the importer decides
//
// Each request record is one model call. Its messages repeat the
// conversation so far, so a record continues the session whose last request
// (and response) is a prefix of its messages; what lies beyond the prefix
// is new. A record extending no open session starts a new one: interleaved
// conversations split correctly, and a harness that rewrote its history
// (compaction, truncation) shows as a new session rather than a wrong diff.
// When a response is not logged, the call's content is taken from the next
// request's history, or left empty with a warning.
//
// Usage is normalized to the additive form: prompt_tokens includes cached
// tokens, so Input = prompt − cached − written (Usage). A call without usage
// is kept, without Usage, and counted in the warnings.
//
// A leading system or developer message is the floor. Tool schemas of a
// trajectory row ("tools") are the floor's tool blocks. Images count
// ImageTokens each, since logs do not carry their pixel size.
//
// # Synthetic timing
//
// Trajectory sets record no times, nor do request logs without "created".
// Those sessions are timed by a Pacing (DefaultPacing: 10 s ± 50 % per
// event, seeded), and Session.Notes says "timing is synthetic: ...". The
// pacing has no idle gaps, so cache entries never expire between steps:
// results on such sessions favour short TTLs and understate what idle-gap
// policies (1h TTL, prune on resume) are worth on human-paced traffic.
//
// Message is also the row shape of hermes-agent's message table, so package
// hermes builds its events with the same Transcript.
package chatlog
