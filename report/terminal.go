package report

import (
	"io"
	"os"
	"strconv"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// TerminalWidth is the width text tables fit when written to w: COLUMNS
// (read through getenv) when it is a positive number, else the terminal's
// when w is one, else 0 (unlimited: a pipe or a file gets the full
// table). It is what Output.Width is set from.
func TerminalWidth(w io.Writer, getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 0
}

// A Progress counts finished work on a bar.
type Progress interface {
	Add(n int) error
	Finish() error
}

type noProgress struct{}

func (noProgress) Add(int) error { return nil }
func (noProgress) Finish() error { return nil }

// NewProgress is a bar of total steps on w when w is a terminal, and
// draws nothing otherwise (nor for fewer than two steps), so logs and
// golden files never see it.
func NewProgress(w io.Writer, total int) Progress {
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
