package main

import (
	"github.com/ctxsim/ctxsim/traces/codex"
)

func init() {
	registerImporter("codex", "Codex CLI rollouts (~/.codex/sessions, a rollout-*.jsonl, or a tree of them)", codex.Import)
}
