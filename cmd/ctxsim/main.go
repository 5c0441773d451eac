// Command ctxsim simulates and measures how an LLM agent manages its context:
// prompt-cache breakpoints, cache TTLs, token estimates and compaction.
//
// See "ctxsim help" and "ctxsim <command> --help" for the manual.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
