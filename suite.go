package ctxsim

import (
	"embed"
	"io/fs"
)

//go:embed testdata/claude-code
var recorded embed.FS

// Recorded is the tree of embedded Claude Code logs, rooted so that its
// files are "<session>.jsonl" and "<session>/subagents/agent-*.jsonl".
func Recorded() fs.FS {
	sub, err := fs.Sub(recorded, "testdata/claude-code")
	if err != nil {
		panic(err) // the pattern above guarantees the directory
	}
	return sub
}
