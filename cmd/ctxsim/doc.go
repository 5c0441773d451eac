// Command ctxsim simulates and measures how an LLM agent manages its
// context: prompt-cache breakpoints, cache TTLs, token estimates and
// compaction. It replays recorded or synthetic sessions through the real
// planner, estimator and compaction code against fake providers that cache
// and bill as the real ones do.
//
// Usage:
//
//	ctxsim <command> [flags] [args]
//
// Every command has --help with examples, --json for machine output, and
// exit codes 0 (ok), 1 (failure or regression), 2 (usage error). A
// command's long help is help/<command>.txt, embedded: the CLI reference.
//
// Commands that replay (run, compare, sweep, whatif, fidelity) keep caches
// in ctxsim/ under the user's cache directory: token counts, what the
// importers read from each log (imports/) and each solved hindsight
// optimum (hindsight/), so a second run over the same logs tokenizes,
// decodes and solves nothing; $CTXSIM_CACHE_DIR or --cache-dir moves
// them, --no-cache bypasses them.
//
// # Examples
//
// What a recorded Claude Code session cost, as billed; the same session
// replayed as it happened, with the simulation's error; what the shared
// sessions would have cost under other policies; synthetic sessions under
// two presets, and a grid over one:
//
//	$ ctxsim cost testdata/claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl
//	$ ctxsim run --trace testdata/claude-code/tool_heavy.jsonl --policy recorded
//	$ ctxsim whatif testdata/claude-code --policies ttl-1h,prune-on-resume
//	$ ctxsim compare --profile coding-burst --sessions 1 --policy hermes-default --policy hermes-micro
//	$ ctxsim sweep --profile cron --sessions 1 --policy hermes-default --grid prompt_caching.cache_ttl=5m,1h
//
// The same grid split into two shards, as two machines would run it, and
// merged back into exactly what one run writes (docs/scale.md):
//
//	$ ctxsim sweep --profile cron --sessions 2 --policy hermes-default --grid prompt_caching.cache_ttl=5m,1h --shard 1/2 --out OUT/s1
//	$ ctxsim sweep --profile cron --sessions 2 --policy hermes-default --grid prompt_caching.cache_ttl=5m,1h --shard 2/2 --out OUT/s2
//	$ ctxsim merge OUT/s1 OUT/s2 --out OUT/merged
//
// Cache break-even arithmetic, the presets, a log in the native format and
// a lint of it:
//
//	$ ctxsim breakeven --model claude-opus-4-6
//	$ ctxsim policies
//	$ ctxsim import claude-code testdata/claude-code/short.jsonl -o OUT
//	$ ctxsim validate OUT/55604662-cf2a-4331-851a-ec234028f8ca.jsonl
//
// With no arguments, "ctxsim compare" runs the embedded suite (the recorded
// sessions compiled into the binary and two sessions of every synthetic
// profile) under every preset; "ctxsim check --baseline FILE" compares the
// same suite with a committed baseline and fails on a regression.
//
// The main file stays thin: it cancels the command's context on SIGINT or
// SIGTERM, and runEnv (cli.go) takes the arguments, context and streams and
// returns the exit code, so every command is tested in-process. Commands
// turn flags into a runner.Runner, policies and runner.Options, call
// package runner (load, plan, run, collect) and print what package report
// renders. Each flag several commands share is declared once (flags.go);
// the packages below name no flag: the runner's bad-input errors name
// their inputs in its own words (runner.InputError), which flagged turns
// into the flags that set them.
package main
