package sigctx

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is how long a command has, after the first signal, to
// return on its own.
const DefaultGrace = 10 * time.Second

// Options are Notify's seams.
type Options struct {
	// Grace is how long after the first signal Exit is called if stop
	// has not been; 0 is DefaultGrace.
	Grace time.Duration
	// Exit ends a command that did not return within Grace, after a line
	// on Stderr (nil: nothing is done, and only a second signal ends it).
	Exit   func()
	Stderr io.Writer
}

// Notify returns a context cancelled by the first SIGINT or SIGTERM, and
// stop, which the command calls when it returns. After the first signal,
// the signals are no longer caught (a second one ends the process), and
// Exit is called when stop has not been within the grace period.
func Notify(parent context.Context, o Options) (ctx context.Context, stop func()) {
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
		case <-done:
			return
		}
		signal.Stop(ch)
		cancel()
		t := time.NewTimer(o.Grace)
		defer t.Stop()
		select {
		case <-t.C:
			if o.Exit != nil {
				if o.Stderr != nil {
					fmt.Fprintf(o.Stderr, "ctxsim: interrupted, and still busy %v later: stopped\n", o.Grace)
				}
				o.Exit()
			}
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
}
