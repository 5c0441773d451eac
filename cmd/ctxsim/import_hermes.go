package main

import (
	"github.com/ctxsim/ctxsim/traces/hermes"
)

func init() {
	registerImporter("hermes", "hermes-agent ~/.hermes/state.db (read-only) or `hermes sessions export` JSON/JSONL; usage is per-session totals only", hermes.Import)
}
