package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

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
