package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/ctxsim/ctxsim/shard"
)

// The recipes of docs/scale.md are files; these tests parse them, expand
// the shard index for every value the engine gives it, and check each
// ctxsim command line against the CLI's own flags: a renamed flag breaks
// here, not in a user's pipeline.

// A cmdLine is one ctxsim invocation found in a script.
type cmdLine struct {
	name string
	args []string // after the command name, shell words
}

// ctxsimLines finds the ctxsim invocations in shell text: continuation
// lines joined, each from the word "ctxsim" to the end of its simple
// command (a redirection, pipe or list operator).
func ctxsimLines(t *testing.T, script string) []cmdLine {
	t.Helper()
	script = strings.ReplaceAll(script, "\\\n", " ")
	var out []cmdLine
	for _, line := range strings.Split(script, "\n") {
		words := shellWords(t, line)
		for i, w := range words {
			if w != "ctxsim" {
				continue
			}
			end := len(words)
			for j := i + 1; j < len(words); j++ {
				if slices.Contains([]string{">", ">>", "|", "&&", "||", ";", "2>"}, words[j]) {
					end = j
					break
				}
			}
			if i+1 < end {
				out = append(out, cmdLine{name: words[i+1], args: words[i+2 : end]})
			}
			break
		}
	}
	return out
}

// shellWords splits a line into words as sh would, for the quoting these
// scripts use: single and double quotes, and operators as their own words.
// Expansions must have been substituted already.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in := false
	quote := byte(0)
	flush := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == '#' && !in:
			return words
		case c == ' ' || c == '\t':
			flush()
		case c == '>' || c == '|' || c == ';' || c == '&':
			flush()
			op := string(c)
			if i+1 < len(line) && (line[i+1] == c) {
				op += string(c)
				i++
			}
			words = append(words, op)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unterminated quote in %q", line)
	}
	flush()
	return words
}

// parseCLI parses args with the flags of the named command and returns the
// flag set's positional arguments, or an error naming the flag.
func parseCLI(name string, args []string) (map[string]string, []string, error) {
	c, ok := commands[name]
	if !ok {
		return nil, nil, fmt.Errorf("no command %q", name)
	}
	fs := newFlagSet(c, io.Discard)
	c.flags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	set := map[string]string{}
	fs.Visit(func(f *pflag.Flag) { set[f.Name] = f.Value.String() })
	return set, fs.Args(), nil
}

// checkShardRun checks that the shard commands, one list per index the
// engine runs, cover shards 1..n exactly once, each with --out, and that
// the merge commands (in the last list, or anywhere) take every shard's
// --out. It returns what is wrong.
func checkShardRun(n int, perIndex [][]cmdLine) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	seen := map[int]bool{}
	var outs []string
	var merges [][]string
	for i, lines := range perIndex {
		shards := 0
		for _, l := range lines {
			set, pos, err := parseCLI(l.name, l.args)
			if err != nil {
				fail("index %d: ctxsim %s: %v", i, l.name, err)
				continue
			}
			if l.name == "merge" {
				if set["out"] == "" || len(pos) == 0 {
					fail("ctxsim merge needs shard directories and --out")
				}
				merges = append(merges, pos)
				continue
			}
			sp, err := shard.Parse(set["shard"])
			if err != nil || !sp.Sharded() {
				fail("index %d: ctxsim %s --shard %q: not a shard (%v)", i, l.name, set["shard"], err)
				continue
			}
			if set["out"] == "" {
				fail("index %d: a shard without --out", i)
			}
			if sp.N != n {
				fail("index %d: --shard %s, but the engine runs %d", i, sp, n)
			}
			if seen[sp.K] {
				fail("shard %s runs twice", sp)
			}
			seen[sp.K] = true
			outs = append(outs, set["out"])
			shards++
		}
		if shards > 1 {
			fail("index %d runs %d shards", i, shards)
		}
	}
	for k := 1; k <= n; k++ {
		if !seen[k] {
			fail("shard %d/%d never runs", k, n)
		}
	}
	if len(merges) == 0 {
		fail("no ctxsim merge")
	}
	for _, pos := range merges {
		for _, o := range outs {
			if !slices.ContainsFunc(pos, func(p string) bool { return globMatch(p, o) }) {
				fail("merge %v does not take shard output %s", pos, o)
			}
		}
	}
	return errs
}

func reportErrs(t *testing.T, file string, errs []error) {
	t.Helper()
	for _, err := range errs {
		t.Errorf("%s: %v", file, err)
	}
}

// globMatch matches a shell glob against a path, ignoring a trailing slash.
func globMatch(pattern, p string) bool {
	ok, _ := path.Match(strings.TrimSuffix(pattern, "/"), strings.TrimSuffix(p, "/"))
	return ok
}

func TestScaleKubernetes(t *testing.T) {
	const file = "../../docs/scale/k8s-indexed-job.yaml"
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Command []string `yaml:"command"`
						Args    []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	dec := yaml.NewDecoder(f)
	var jobs []job
	for {
		var j job
		if err := dec.Decode(&j); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		jobs = append(jobs, j)
	}
	if len(jobs) != 2 || jobs[0].Kind != "Job" || jobs[0].Spec.CompletionMode != "Indexed" || jobs[0].Spec.Completions < 2 {
		t.Fatalf("%s: want an Indexed Job and a merge Job, got %+v", file, jobs)
	}
	script := func(j job) string {
		var b strings.Builder
		for _, c := range j.Spec.Template.Spec.Containers {
			b.WriteString(strings.Join(c.Args, "\n"))
		}
		return b.String()
	}
	n := jobs[0].Spec.Completions
	indexExpr := regexp.MustCompile(`\$\(\(\s*JOB_COMPLETION_INDEX\s*\+\s*1\s*\)\)`)
	mergeScript := strings.ReplaceAll(script(jobs[1]), "$RUN", "run")
	var perIndex [][]cmdLine
	for i := range n {
		s := indexExpr.ReplaceAllString(script(jobs[0]), strconv.Itoa(i+1))
		s = strings.ReplaceAll(s, "$JOB_COMPLETION_INDEX", strconv.Itoa(i))
		s = strings.ReplaceAll(s, "$RUN", "run")
		lines := ctxsimLines(t, s)
		// Follow the shard's output through object storage to where the
		// merge job copies it down.
		for j := range lines {
			for a, w := range lines[j].args {
				if a > 0 && lines[j].args[a-1] == "--out" {
					lines[j].args[a] = followCopies(t, followCopies(t, w, s), mergeScript)
				}
			}
		}
		perIndex = append(perIndex, lines)
	}
	perIndex = append(perIndex, ctxsimLines(t, mergeScript))
	reportErrs(t, file, checkShardRun(n, perIndex))
}

// followCopies maps a path through the "aws s3 cp --recursive SRC DST"
// commands of script: a path under SRC lands under DST.
func followCopies(t *testing.T, p, script string) string {
	t.Helper()
	script = strings.ReplaceAll(script, "\\\n", " ")
	for _, line := range strings.Split(script, "\n") {
		w := shellWords(t, line)
		if len(w) >= 6 && w[0] == "aws" && w[1] == "s3" && w[2] == "cp" && w[3] == "--recursive" {
			src, dst := strings.TrimSuffix(w[4], "/"), strings.TrimSuffix(w[5], "/")
			if p == src || strings.HasPrefix(p, src+"/") {
				return dst + strings.TrimPrefix(p, src)
			}
		}
	}
	return p
}

func TestScaleGitHubActions(t *testing.T) {
	const file = "../../docs/scale/github-actions.yml"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Needs    any `yaml:"needs"`
			Strategy struct {
				Matrix struct {
					Shard []int `yaml:"shard"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	sh, mg := wf.Jobs["shard"], wf.Jobs["merge"]
	if len(sh.Strategy.Matrix.Shard) < 2 || mg.Needs != "shard" {
		t.Fatalf("%s: want a shard matrix and a merge job that needs it", file)
	}
	var perIndex [][]cmdLine
	for _, k := range sh.Strategy.Matrix.Shard {
		var lines []cmdLine
		for _, st := range sh.Steps {
			lines = append(lines, ctxsimLines(t, strings.ReplaceAll(st.Run, "${{ matrix.shard }}", strconv.Itoa(k)))...)
		}
		perIndex = append(perIndex, lines)
	}
	var merge []cmdLine
	for _, st := range mg.Steps {
		merge = append(merge, ctxsimLines(t, st.Run)...)
	}
	// The artifacts land in shards/ctxsim-shard-K/: map each shard's
	// --out to where the merge job finds it.
	for i := range perIndex {
		for j, l := range perIndex[i] {
			for a := range l.args {
				if strings.HasPrefix(l.args[a], "out/shard-") {
					perIndex[i][j].args[a] = "shards/ctxsim-shard-" + strings.TrimPrefix(l.args[a], "out/shard-")
				}
			}
		}
	}
	perIndex = append(perIndex, merge)
	reportErrs(t, file, checkShardRun(len(sh.Strategy.Matrix.Shard), perIndex))
}

func TestScaleParallel(t *testing.T) {
	const file = "../../docs/scale/parallel.sh"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`N=\$\{N:-(\d+)\}`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no default N", file)
	}
	n, _ := strconv.Atoi(string(m[1]))
	var perIndex [][]cmdLine
	var merge []cmdLine
	for k := 1; k <= n; k++ {
		s := strings.ReplaceAll(strings.ReplaceAll(string(b), "{}", strconv.Itoa(k)), "$N", strconv.Itoa(n))
		var lines []cmdLine
		for _, l := range ctxsimLines(t, s) {
			if l.name == "merge" {
				if k == 1 {
					merge = append(merge, l)
				}
				continue
			}
			lines = append(lines, l)
		}
		perIndex = append(perIndex, lines)
	}
	reportErrs(t, file, checkShardRun(n, append(perIndex, merge)))
}

// The checks catch what they are for: an unknown flag, a shard run twice
// or never, a shard without --out, a merge that misses a shard.
func TestScaleChecksFail(t *testing.T) {
	shardLine := func(k, n int, out string) []cmdLine {
		return []cmdLine{{"compare", []string{"--shard", fmt.Sprintf("%d/%d", k, n), "--out", out}}}
	}
	merge := []cmdLine{{"merge", []string{"--out", "m", "out/shard-*"}}}
	good := [][]cmdLine{shardLine(1, 2, "out/shard-1"), shardLine(2, 2, "out/shard-2"), merge}
	if errs := checkShardRun(2, good); len(errs) > 0 {
		t.Fatalf("a good run fails: %v", errs)
	}
	for _, tc := range []struct {
		name string
		run  [][]cmdLine
		want string
	}{
		{"unknown flag", [][]cmdLine{{{"compare", []string{"--shardd", "1/2"}}}, shardLine(2, 2, "out/shard-2"), merge}, "unknown flag: --shardd"},
		{"twice", [][]cmdLine{shardLine(2, 2, "out/shard-1"), shardLine(2, 2, "out/shard-2"), merge}, "shard 1/2 never runs"},
		{"wrong n", [][]cmdLine{shardLine(1, 3, "out/shard-1"), shardLine(2, 3, "out/shard-2"), merge}, "--shard 1/3, but the engine runs 2"},
		{"no out", [][]cmdLine{{{"compare", []string{"--shard", "1/2"}}}, shardLine(2, 2, "out/shard-2"), merge}, "a shard without --out"},
		{"merge misses", [][]cmdLine{shardLine(1, 2, "out/shard-1"), shardLine(2, 2, "elsewhere/2"), merge}, "does not take shard output elsewhere/2"},
		{"no merge", good[:2], "no ctxsim merge"},
	} {
		errs := checkShardRun(2, tc.run)
		if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), tc.want) }) {
			t.Errorf("%s: errors %v, want one containing %q", tc.name, errs, tc.want)
		}
	}
	// The shell splitter keeps quoted words whole and stops at operators.
	lines := ctxsimLines(t, "set -e\nx=1; ctxsim merge 'a b' \\\n  --out \"c d\" > t.txt # done\n")
	if len(lines) != 1 || lines[0].name != "merge" || !slices.Equal(lines[0].args, []string{"a b", "--out", "c d"}) {
		t.Errorf("ctxsimLines = %+v", lines)
	}
}
