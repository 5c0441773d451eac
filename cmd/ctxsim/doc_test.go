package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// Every "$ ctxsim ..." line of the package manual (doc.go) runs, exits 0
// and prints something: the examples users copy stay true. The count is
// pinned so that an example lost in an edit is noticed.
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
		code, stdout, errs := runCmd(t, args...)
		if code != exitOK || strings.TrimSpace(stdout) == "" {
			t.Errorf("ctxsim %s: exit %d, %d bytes of output\n%s", cmd, code, len(stdout), errs)
		}
	}
	if n != 12 {
		t.Errorf("found %d examples in doc.go, want the manual's 12 (change the count with the manual)", n)
	}
}
