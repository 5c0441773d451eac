package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The documents a newcomer reads: what they name must exist, so that they
// cannot go stale unnoticed (TestDocsNameWhatExists).
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) < 5 {
		t.Fatalf("docs/*.md: %v, %d files", err, len(docs))
	}
	return append([]string{"../../README.md"}, docs...)
}

var (
	codeSpan   = regexp.MustCompile("`([^`\n]+)`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	ctxsimCall = regexp.MustCompile(`(?:^|[\s(` + "`" + `$])ctxsim ([a-z]+)((?: [^|;&>#` + "`" + `]*)?)`)
	flagToken  = regexp.MustCompile(`(?:^|\s)(--?[a-zA-Z][a-zA-Z0-9-]*)`)
	goTest     = regexp.MustCompile(`go test ([^|;&` + "`" + `]*)`)
	testName   = regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)(?:[A-Z_]\w*)?$`)
	pkgTest    = regexp.MustCompile(`^([a-z][\w/]*)\.((?:Test|Benchmark|Fuzz|Example)\w*)$`)
	// placeholder is a path written for the reader to fill in.
	placeholder = regexp.MustCompile(`[A-Z]{3,}|[*<>{}$~…]|^\.\./shared|node_modules|^https?:`)
)

// docCode is every piece of code a document holds: its code spans and the
// lines of its fenced blocks (a block's output lines too: harmless, they
// name no command).
func docCode(text string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			out = append(out, line)
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// flagsOf are the flags ctxsim name declares, with the global ones.
func flagsOf(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	commands[name].flags(fs)
	fs.Bool("wide", false, "")
	return fs
}

// testFuncs are the test, benchmark, fuzz and example functions declared
// in the _test.go files of the package in dir.
func testFuncs(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	var out []string
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && testName.MatchString(fn.Name.Name) {
				out = append(out, fn.Name.Name)
			}
		}
	}
	return out
}

// TestDocsNameWhatExists reads the README and docs/: every "ctxsim
// COMMAND" it shows is a command, every flag given to one is that
// command's, every flag named alone is some command's, every file it links
// to or names by a repository path exists, every "go test" command names a
// package that exists and -run/-bench patterns that match a function of
// it, and every test it names by name exists.
func TestDocsNameWhatExists(t *testing.T) {
	allFlags := map[string]bool{"--help": true, "-h": true, "--version": true, "--wide": true}
	for name := range commands {
		flagsOf(name).VisitAll(func(f *pflag.Flag) {
			allFlags["--"+f.Name] = true
			if f.Shorthand != "" {
				allFlags["-"+f.Shorthand] = true
			}
		})
	}
	// tests are the test functions of the repository, by name and by
	// "package.Name" (the package named by its path or its last element).
	tests := map[string]bool{}
	seen := map[string]bool{}
	err := filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "../.." {
			return filepath.SkipDir
		}
		dir := filepath.Dir(p)
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") || seen[dir] {
			return nil
		}
		seen[dir] = true
		rel, _ := filepath.Rel("../..", dir)
		for _, n := range testFuncs(t, dir) {
			tests[n], tests[filepath.ToSlash(rel)+"."+n], tests[filepath.Base(dir)+"."+n] = true, true, true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A path names a file of the repository when its first element is one
	// of the repository's (not encoding/json, /dev/null, out/merged/...).
	top := map[string]bool{}
	ents, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		top[e.Name()] = true
	}
	checked := 0
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		name := strings.TrimPrefix(doc, "../../")
		exists := func(p string) bool {
			p = strings.SplitN(p, "#", 2)[0]
			for _, base := range []string{"../..", filepath.Dir(doc)} {
				if _, err := os.Stat(filepath.Join(base, p)); err == nil {
					return true
				}
			}
			return false
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			if !placeholder.MatchString(m[1]) && !strings.HasPrefix(m[1], "#") {
				checked++
				if !exists(m[1]) {
					t.Errorf("%s links to %s, which does not exist", name, m[1])
				}
			}
		}
		for _, code := range docCode(text) {
			for _, m := range ctxsimCall.FindAllStringSubmatch(code, -1) {
				cmd := m[1]
				if _, ok := commands[cmd]; !ok {
					t.Errorf("%s: ctxsim %s: no such command", name, cmd)
					continue
				}
				checked++
				fs := flagsOf(cmd)
				args := m[2]
				if i := strings.Index(args, " -- "); i >= 0 {
					args = args[:i] // the rest is another program's (ctxsim record -- COMMAND)
				}
				for _, f := range flagToken.FindAllStringSubmatch(args, -1) {
					flag := strings.SplitN(f[1], "=", 2)[0]
					long := strings.TrimPrefix(flag, "--")
					if strings.HasPrefix(flag, "--") && fs.Lookup(long) == nil ||
						!strings.HasPrefix(flag, "--") && fs.ShorthandLookup(strings.TrimPrefix(flag, "-")) == nil {
						t.Errorf("%s: ctxsim %s %s: no such flag of %s", name, cmd, flag, cmd)
					}
				}
			}
			span := strings.TrimSpace(code)
			if fields := strings.Fields(span); len(fields) > 0 && strings.HasPrefix(fields[0], "--") && !strings.Contains(code, "ctxsim ") {
				flag := fields[0]
				flag = strings.SplitN(flag, "=", 2)[0]
				if regexp.MustCompile(`^--[a-z][a-z0-9-]*$`).MatchString(flag) {
					checked++
					if !allFlags[flag] {
						t.Errorf("%s names %s, which no command has", name, flag)
					}
				}
			}
			if testName.MatchString(span) {
				checked++
				if !tests[span] {
					t.Errorf("%s names %s, which no test file declares", name, span)
				}
			}
			if pkgTest.MatchString(span) {
				checked++
				if !tests[span] {
					t.Errorf("%s names %s, which no such package declares", name, span)
				}
				continue
			}
			if !strings.ContainsAny(span, " =") && strings.Contains(span, "/") && !placeholder.MatchString(span) &&
				regexp.MustCompile(`^[a-z0-9.][\w./-]*$`).MatchString(span) && top[strings.SplitN(span, "/", 2)[0]] {
				checked++
				if !exists(span) {
					t.Errorf("%s names %s, which does not exist", name, span)
				}
			}
			for _, m := range goTest.FindAllStringSubmatch(code, -1) {
				checked += checkGoTest(t, name, m[1])
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d names: the parser misses what the documents name", checked)
	}
}

// checkGoTest checks the arguments of a "go test" command a document
// shows: its packages exist, and its -run and -bench patterns match a
// function of theirs. It returns how many names it checked.
func checkGoTest(t *testing.T, doc, args string) int {
	t.Helper()
	f := strings.Fields(strings.NewReplacer("'", "", `"`, "").Replace(args))
	var pkgs, patterns []string
	for i := 0; i < len(f); i++ {
		switch a := f[i]; {
		case (a == "-run" || a == "-bench") && i+1 < len(f):
			patterns = append(patterns, f[i+1])
			i++
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, strings.TrimSuffix(strings.TrimSuffix(a, "..."), "/"))
		}
	}
	n := 0
	for _, p := range pkgs {
		n++
		dir := filepath.Join("../..", p)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Errorf("%s: go test %s: no package %s", doc, args, p)
			continue
		}
		if strings.HasSuffix(args, "...") {
			continue
		}
		funcs := testFuncs(t, dir)
		for _, pat := range patterns {
			if pat == "^$" || pat == "-" || placeholder.MatchString(pat) {
				continue
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				t.Errorf("%s: go test %s: pattern %q: %v", doc, args, pat, err)
				continue
			}
			n++
			found := false
			for _, fn := range funcs {
				found = found || re.MatchString(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(fn, "Test"), "Benchmark"), "Example")) || re.MatchString(fn)
			}
			if !found {
				t.Errorf("%s: go test %s: %q matches no test or benchmark of %s", doc, args, pat, p)
			}
		}
	}
	return n
}

// readmeRun is a README block of a command and its output: "$ ctxsim
// ARGS" on its first line.
var readmeRun = regexp.MustCompile("(?s)```text\n\\$ ctxsim ([^\n]*)\n(.*?)```")

// TestReadmeOutputs runs every command the README shows with its output,
// in a 100-column terminal, and compares: the README shows what the build
// prints. -update rewrites the blocks.
func TestReadmeOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the README's examples")
	}
	t.Setenv("COLUMNS", "100")
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	runs := readmeRun.FindAllSubmatchIndex(b, -1)
	if len(runs) < 3 {
		t.Fatalf("%d command blocks in README.md, want cost, fidelity and whatif at least", len(runs))
	}
	var out bytes.Buffer
	last := 0
	for _, m := range runs {
		args := strings.Fields(strings.ReplaceAll(string(b[m[2]:m[3]]), "testdata/", "../../testdata/"))
		var stdout, stderr bytes.Buffer
		if code := runEnv(&env{ctx: t.Context(), stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr}, args); code != exitOK {
			t.Fatalf("ctxsim %s: exit %d\n%s", b[m[2]:m[3]], code, stderr.String())
		}
		if got, want := stdout.String(), string(b[m[4]:m[5]]); got != want && !*update {
			t.Errorf("README.md shows for ctxsim %s:\n%s\nthe build prints:\n%s(go test ./cmd/ctxsim -run TestReadmeOutputs -update rewrites it)", b[m[2]:m[3]], want, got)
		}
		out.Write(b[last:m[4]])
		out.Write(stdout.Bytes())
		last = m[5]
	}
	out.Write(b[last:])
	if *update {
		if err := os.WriteFile("../../README.md", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The README's record → whatif → CI path runs as written, on a capture
// (claude-trace's format, as record writes it) in place of capture.jsonl:
// every line after record (which needs a harness) exits 0, the gate's
// baseline holds the as-sent cell, and checking the same capture against
// it passes, as CI would.
func TestReadmeCapturePath(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "**Any harness, exactly as sent.**")
	if ok {
		_, block, ok = strings.Cut(block, "```sh\n")
	}
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("README.md has no sh block after **Any harness, exactly as sent.**")
	}
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "ctxsim record ") {
		t.Fatalf("the path is %d lines, want five starting with record:\n%s", len(lines), block)
	}
	dir := t.TempDir()
	capture, err := os.ReadFile("../../traces/capture/testdata/claude-trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "capture.jsonl"), capture, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range lines[1:] {
		line, _, _ = strings.Cut(line, "#")
		args := strings.Fields(line)[1:]
		for i, a := range args {
			if strings.HasSuffix(a, ".jsonl") || strings.HasSuffix(a, ".json") || strings.HasSuffix(a, "/") {
				args[i] = filepath.Join(dir, a)
			}
		}
		code, _, errs := runCmd(t, args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", line, code, errs)
		}
	}
	base := readFile(t, filepath.Join(dir, "ctxsim-baseline.json"))
	if !strings.Contains(base, `"policy": "as-sent"`) {
		t.Errorf("the baseline holds no as-sent cell:\n%s", base)
	}
	code, out, errs := runCmd(t, "check", "--baseline", filepath.Join(dir, "ctxsim-baseline.json"), "--results", filepath.Join(dir, "out", "summary.json"))
	if code != exitOK {
		t.Errorf("check against the baseline just written: exit %d\n%s%s", code, out, errs)
	}
}
