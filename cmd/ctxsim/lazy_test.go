package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
)

// cost never loads the tokenizer's ranks; whatif does. Each command runs in
// a fresh process (this test binary, re-entered), since the encodings are
// process-wide.
func TestOnlyCountingCommandsLoadRanks(t *testing.T) {
	if args := os.Getenv("CTXSIM_LAZY_CHILD"); args != "" {
		code, _, errs := runCmd(t, strings.Fields(args)...)
		enc, _ := tiktoken.Get("o200k_base")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", args, code, errs)
		}
		os.Stdout.WriteString(map[bool]string{true: "LOADED\n", false: "UNLOADED\n"}[enc.Loaded()])
		return
	}
	for args, want := range map[string]string{
		"cost ../../testdata/claude-code":               "UNLOADED",
		"whatif ../../testdata/claude-code/short.jsonl": "LOADED",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOnlyCountingCommandsLoadRanks$")
		cmd.Env = append(os.Environ(), "CTXSIM_LAZY_CHILD="+args)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want+"\n") {
			t.Errorf("%s: want %s; %v\n%s", args, want, err, out)
		}
	}
}
