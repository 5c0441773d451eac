package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// Every "$ ctxsim ..." line of the package manual (doc.go) runs and exits
// 0: the examples users copy stay true.
func TestDocExamples(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	n := 0
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "$ ctxsim ")
		if !ok {
			continue
		}
		n++
		args := strings.Fields(strings.NewReplacer("testdata/", "../../testdata/", "OUT", out).Replace(cmd))
		code, _, errs := runCmd(t, args...)
		if code != exitOK {
			t.Errorf("ctxsim %s: exit %d\n%s", cmd, code, errs)
		}
	}
	if n < 8 {
		t.Errorf("found %d examples in doc.go, want the manual's 10", n)
	}
}
