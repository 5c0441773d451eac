package main

import (
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/chatlog"
)

func init() {
	registerImporter("chatlog", "OpenAI-style message logs: chat-completions request logs, SWE-agent / OpenHands trajectory sets (synthetic timing when untimed)",
		func(path string) ([]*traces.Session, *traces.Warnings, error) {
			return chatlog.Import(path, chatlog.Options{})
		})
}
