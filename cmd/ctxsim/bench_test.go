package main

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkCompareDefault is what a newcomer's first command costs:
// "ctxsim compare" with no arguments, the embedded suite against every
// preset on all cores (the target is under 30 s). Token counts live in the
// process-wide memo, so only the first iteration tokenizes: run it with
// -benchtime 1x for the cold figure, more for the replay alone.
func BenchmarkCompareDefault(b *testing.B) {
	for b.Loop() {
		if code := run([]string{"compare"}, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
			b.Fatalf("compare exited %d", code)
		}
	}
}
