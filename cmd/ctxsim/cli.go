package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/internal/input"
	"github.com/ctxsim/ctxsim/internal/safetext"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/sim/hindsight/hindcache"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/filecache"
)

// A command is one subcommand. Each lives in its own file and registers
// itself in init; its long help, with examples, is help/<name>.txt.
type command struct {
	name    string
	summary string
	// usage is the text after "Usage: ctxsim <name> ", then a blank line and
	// the long help.
	usage string
	// helpTail, if set, is printed after the long help: text known only
	// once every init has run (import's list of formats, registered file by
	// file).
	helpTail func() string
	// flags declares the command's flags on fs and returns the function that
	// runs it once they are parsed.
	flags func(fs *pflag.FlagSet) func(e *env, args []string) error
}

var commands = map[string]*command{}

// helpFiles are the commands' long help texts, one help/<name>.txt each:
// what --help prints above the flags, and the CLI reference the README
// links to.
//
//go:embed help/*.txt
var helpFiles embed.FS

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("ctxsim: command registered twice: " + c.name)
	}
	if _, err := helpFiles.Open("help/" + c.name + ".txt"); err != nil {
		panic("ctxsim: command without help/" + c.name + ".txt")
	}
	commands[c.name] = c
}

// help is c's long help, help/<name>.txt.
func (c *command) help() string {
	b, _ := helpFiles.ReadFile("help/" + c.name + ".txt") // there: register checked
	return string(b)
}

// env is what a command may touch: its context and streams. Commands never
// reach for os globals, so tests run them in-process.
type env struct {
	// ctx is cancelled on SIGINT/SIGTERM: long work stops and says so.
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	// journal, when set, wraps the sweep journal's file: the seam tests
	// inject write failures through (a kill -9 midway through a cell).
	journal func(io.Writer) io.Writer
	// cacheDir is the default token-count cache directory, resolved by
	// main ($CTXSIM_CACHE_DIR, else the user cache dir); "" means no cache
	// unless --cache-dir names one. Tests leave it empty.
	cacheDir string
	// tokenizer, when set, wraps the tokenizer a replay counts with: the
	// seam tests count tokenizer calls through.
	tokenizer func(estimate.Tokenizer) estimate.Tokenizer
	// importCache, when set, serves the importers (openCaches).
	importCache *filecache.Cache
	// importStats, when set, gets the import cache's work at exit: the
	// tests' view of it.
	importStats *filecache.Stats
	// solveStats, when set, gets the hindsight cache's work at exit.
	solveStats *hindcache.Stats
	// atExit runs after the command, whatever its outcome (the count
	// cache's flush).
	atExit []func()
	// failed counts the sessions the command could not load (see
	// load): it goes on with the rest and exits 1.
	failed int
	// warn gathers every warning of the command's input (load),
	// for --json and summary.json; stderr gets them as they come.
	warn traces.Warnings
	// noCall counts the sessions skipped for having no model call.
	noCall int
}

// noSessions is the error of a command left with no session to replay:
// runner.NothingToReplayError (exit 0) when every session found had no
// model call.
func noSessions(e *env, format string, args ...any) error {
	if e.noCall > 0 {
		return runner.NothingToReplayError{Sessions: e.noCall}
	}
	return fmt.Errorf(format, args...)
}

// formatFlags are --format and its --json shorthand, which wins.
type formatFlags struct {
	format string
	asJSON bool
}

func (o *formatFlags) add(fs *pflag.FlagSet, jsonUsage string) {
	fs.StringVar(&o.format, "format", "text", "output format: text, markdown, csv or json")
	fs.BoolVar(&o.asJSON, "json", false, jsonUsage)
}

func (o *formatFlags) parse() (report.Format, error) {
	if o.asJSON {
		return report.JSON, nil
	}
	return report.ParseFormat(o.format)
}

// usageError is a bad command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// regressionError is a check that found a regression: exit code 1, with the
// report already printed.
type regressionError struct{ msg string }

func (e *regressionError) Error() string { return e.msg }

const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// runEnv runs the command line args in e and returns the exit code.
func runEnv(e *env, args []string) int {
	// Text tables fit COLUMNS or the terminal (--wide: no limit).
	out := &report.Output{Writer: e.stdout, Width: report.TerminalWidth(e.stdout, os.Getenv), Name: flagFor}
	ec := *e
	ec.stdout = out
	e = &ec
	stdout, stderr := e.stdout, e.stderr
	helped := func() int { // help is a main output too
		if err := out.Err(); err != nil {
			fmt.Fprintf(stderr, "ctxsim: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fs := newFlagSet(c, stdout)
				c.flags(fs)
				fs.Usage()
				return helped()
			}
		}
		topUsage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return helped()
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ctxsim: unknown command %q\n\n", args[0])
		topUsage(stderr)
		return exitUsage
	}
	fs := newFlagSet(c, stderr)
	runFn := c.flags(fs)
	wide := fs.Bool("wide", false, "print text tables at full width (default: fit COLUMNS or the terminal)")
	printUsage := fs.Usage
	fs.Usage = func() {} // printed below, on stdout for --help
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fs.SetOutput(stdout)
			printUsage()
			return helped()
		}
		fmt.Fprintf(stderr, "ctxsim %s: %v\n(see ctxsim %s --help)\n", c.name, err, c.name)
		return exitUsage
	}
	if *wide {
		out.Width = 0
	}
	err := runFn(e, fs.Args())
	if werr := out.Err(); werr != nil && (err == nil || errors.Is(err, errors.Unwrap(werr))) {
		err = werr // the main output lost is a failure, whatever the command made of it
	}
	for _, f := range e.atExit {
		f()
	}
	e.atExit = nil
	var ue *usageError
	var ie *runner.InputError
	var re *regressionError
	var nr runner.NothingToReplayError
	switch {
	case err == nil && e.failed > 0:
		fmt.Fprintf(stderr, "ctxsim %s: %d session(s) could not be loaded (see the warnings above); the rest were run\n", c.name, e.failed)
		return exitFailure
	case err == nil:
		return exitOK
	case errors.As(err, &nr) && e.failed == 0:
		fmt.Fprintf(stderr, "ctxsim %s: %v\n", c.name, nr)
		return exitOK
	case errors.As(err, &ue) || errors.As(err, &ie) && ie.Usage:
		fmt.Fprintf(stderr, "ctxsim %s: %s\n(see ctxsim %s --help)\n", c.name, safetext.Lines(flagged(err)), c.name)
		return exitUsage
	case errors.As(err, &re):
		fmt.Fprintf(stderr, "ctxsim %s: %s\n", c.name, safetext.Lines(err.Error()))
		return exitFailure
	case errors.Is(err, context.Canceled) && e.ctx.Err() != nil:
		fmt.Fprintf(stderr, "ctxsim %s: interrupted\n", c.name)
		return exitFailure
	default:
		fmt.Fprintf(stderr, "ctxsim %s: %s\n", c.name, safetext.Lines(flagged(err)))
		return exitFailure
	}
}

// flagged is err's message with the inputs it names (input.Error) given
// as the flags that set them.
func flagged(err error) string { return input.Render(err, flagFor) }

// flagFor is the flag that sets the runner's input named in: "--" and
// its words joined by dashes, but for these.
func flagFor(in string) string {
	if f, ok := flagNames[in]; ok {
		return f
	}
	return "--" + strings.ReplaceAll(in, " ", "-")
}

var flagNames = map[string]string{"override": "--set", "policy list": "--policies", "output directory": "--out", "price file": "--prices",
	"log format": "--from", "output format": "--format", "key list": "--keys"}

func newFlagSet(c *command, out io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SetOutput(out)
	fs.SortFlags = false
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: ctxsim %s %s\n\n%s\n", c.name, c.usage, strings.TrimSpace(c.help()))
		if c.helpTail != nil {
			fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.helpTail(), "\n"))
		}
		if fs.HasFlags() {
			fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
		}
	}
	return fs
}

func topUsage(w io.Writer) {
	fmt.Fprint(w, `ctxsim replays agent sessions through real context-management code against
fake providers that bill like real ones, and reports cost, cache hit rate,
latency and context occupancy per policy.

Usage: ctxsim <command> [flags] [args]

Commands:
`)
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run "ctxsim <command> --help" for a command's flags and examples.
Exit codes: 0 ok, 1 failure or regression, 2 usage error.
`)
}
