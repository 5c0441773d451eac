package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"time"
)

// A Session is one recording: the proxy on a listener, and optionally the
// harness command run with its base URLs pointed at it.
type Session struct {
	// Listen is the address to listen on ("127.0.0.1:0": any free port).
	Listen string
	// Command, when set, is run with ANTHROPIC_BASE_URL and
	// OPENAI_BASE_URL pointing at the proxy; the session ends when it
	// exits. Unset, the session ends when the context is done.
	Command                []string
	Stdin                  io.Reader
	Stdout, Stderr, Notice io.Writer
}

// Serve runs the session with r: it listens, announces the base URLs on
// Notice, runs the command (or waits for ctx), then stops accepting, lets
// the pairs in flight finish (up to 30 s) and closes r. runErr is the
// command's own error (an *exec.ExitError when it exited non-zero); err is
// the recording's. A listen failure is returned as ListenError.
func (s Session) Serve(ctx context.Context, r *Recorder) (runErr, err error) {
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		r.Close()
		return nil, &ListenError{Addr: s.Listen, Err: err}
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: r, ReadHeaderTimeout: time.Minute, ConnContext: r.ConnContext, ConnState: r.ConnState}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if s.Notice != nil {
		fmt.Fprintf(s.Notice, "ANTHROPIC_BASE_URL=%s OPENAI_BASE_URL=%s/v1\n", base, base)
	}
	if len(s.Command) > 0 {
		cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
		cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+base, "OPENAI_BASE_URL="+base+"/v1")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
		runErr = cmd.Run()
	} else {
		<-ctx.Done()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) && shutErr == nil {
		shutErr = err
	}
	return runErr, errors.Join(shutErr, r.Close())
}

// ListenError is a proxy address that could not be listened on.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return fmt.Sprintf("listen %s: %v", e.Addr, e.Err) }
func (e *ListenError) Unwrap() error { return e.Err }
