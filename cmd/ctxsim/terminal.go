package main

import (
	"io"
	"os"
	"strconv"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// outputWidth is the width text tables fit: COLUMNS when it is a positive
// number, else the terminal's when stdout is one, else 0 (unlimited: a
// pipe or a file gets the full table).
func outputWidth(stdout io.Writer, getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 0
}

// progress is a bar on stderr when stderr is a terminal, and nothing
// otherwise, so logs and golden tests never see it.
type progress interface {
	Add(n int) error
	Finish() error
}

type noProgress struct{}

func (noProgress) Add(int) error { return nil }
func (noProgress) Finish() error { return nil }

func newProgress(w io.Writer, total int) progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || total < 2 {
		return noProgress{}
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription("replaying"),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100_000_000),
	)
}
