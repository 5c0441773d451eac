package main

import (
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

func init() {
	registerImporter("claude-code", "Claude Code session logs (~/.claude/projects, a session .jsonl, or a tree of them)", claudecode.Import)
}
