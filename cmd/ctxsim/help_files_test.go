package main

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/runner"
)

// TestHelpFiles: help/ holds one text per command and nothing else, each
// with examples (TestHelpExamples runs them), and whatif's list of
// variants is the one the code has.
func TestHelpFiles(t *testing.T) {
	files, err := fs.Glob(helpFiles, "help/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt")
		if commands[name] == nil {
			t.Errorf("%s: no command %q", f, name)
		}
	}
	if len(files) != len(commands) {
		t.Errorf("%d help files for %d commands", len(files), len(commands))
	}
	for name, c := range commands {
		h := c.help()
		if !strings.HasSuffix(h, "\n") || strings.TrimSpace(h) != strings.TrimSuffix(h, "\n") {
			t.Errorf("help/%s.txt: want text ending in one newline", name)
		}
		if !strings.Contains(h, "\nExamples:\n  ctxsim ") || !strings.Contains(h, "  ctxsim "+name) {
			t.Errorf("help/%s.txt: no \"Examples:\" section with a ctxsim %s line", name, name)
		}
	}
	var variants strings.Builder
	for _, v := range runner.Variants() {
		fmt.Fprintf(&variants, "  %-16s %s\n", v.Name, v.Help)
	}
	want := "Default policies (variants of the recorded behaviour):\n" + variants.String() + "\n"
	if !strings.Contains(commands["whatif"].help(), want) {
		t.Errorf("help/whatif.txt does not list runner.Variants(); want\n%s", want)
	}
}
