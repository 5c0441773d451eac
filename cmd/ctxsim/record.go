package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture/record"
)

func init() {
	register(&command{
		name:    "record",
		summary: "record a harness's API traffic (a capture) through a local proxy",
		usage:   "-o FILE [--listen ADDR] [-- COMMAND ARGS...]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			out := fs.StringP("out", "o", "", "capture file to append the pairs to (created if missing)")
			listen := fs.String("listen", "127.0.0.1:8082", "address the proxy listens on (port 0: any free port)")
			anth := fs.String("anthropic", "https://api.anthropic.com", "Anthropic API upstream")
			oai := fs.String("openai", "https://api.openai.com", "OpenAI API upstream")
			maxBody := fs.Int64("max-body", record.DefaultMaxBody, "bytes of one body kept (the rest is forwarded, not recorded)")
			asJSON := fs.Bool("json", false, `print {"file":...,"pairs":N,"warnings":[...]} when done instead of text`)
			addFormatTextJSON(fs, asJSON)
			return func(e *env, args []string) error {
				if *out == "" {
					return usagef("-o FILE is required")
				}
				up := [2]*url.URL{}
				for i, s := range []string{*anth, *oai} {
					u, err := url.Parse(s)
					if err != nil || u.Scheme == "" || u.Host == "" {
						return usagef("upstream %q: want a URL such as https://api.anthropic.com", s)
					}
					up[i] = u
				}
				return runRecord(e, *out, *listen, up[0], up[1], *maxBody, *asJSON, args)
			}
		},
	})
}

func runRecord(e *env, file, listen string, anth, oai *url.URL, maxBody int64, asJSON bool, command []string) error {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	rec, err := record.New(record.Options{Anthropic: anth, OpenAI: oai, Out: f, MaxBody: maxBody, Now: time.Now})
	if err != nil {
		f.Close()
		return err
	}
	fmt.Fprintf(e.stderr, "recording to %s; ", file)
	runErr, err := record.Session{Listen: listen, Command: command, Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Notice: e.stderr}.Serve(e.ctx, rec)
	var le *record.ListenError
	if errors.As(err, &le) {
		f.Close()
		return usagef("--listen %s: %v", listen, le.Err)
	}
	ws := rec.Warnings()
	printWarnings(e, ws)
	if asJSON {
		b, _ := json.Marshal(struct {
			File     string           `json:"file"`
			Pairs    int              `json:"pairs"`
			Warnings []traces.Warning `json:"warnings"`
		}{file, rec.Pairs(), ws.List()})
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		fmt.Fprintf(e.stderr, "recorded %d pairs to %s\n", rec.Pairs(), file)
	}
	if err := errors.Join(err, f.Close()); err != nil {
		return err
	}
	var exit *exec.ExitError
	if errors.As(runErr, &exit) {
		return &regressionError{msg: fmt.Sprintf("%s exited with %d", command[0], exit.ExitCode())}
	}
	return runErr
}
