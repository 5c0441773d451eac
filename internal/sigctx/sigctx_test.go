package sigctx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The child process of these tests: it catches the signals as a command
// does, then blocks opening a FIFO nobody reads (ctxsim check --markdown
// FIFO), where no context reaches it.
func TestMain(m *testing.M) {
	if fifo := os.Getenv("SIGCTX_CHILD_FIFO"); fifo != "" {
		o := Options{Grace: time.Hour}
		if os.Getenv("SIGCTX_CHILD_GRACE") != "" {
			o = Options{Grace: 100 * time.Millisecond, Exit: func() { os.Exit(3) }, Stderr: os.Stdout}
		}
		ctx, stop := Notify(context.Background(), o)
		defer stop()
		go func() {
			<-ctx.Done()
			fmt.Println("cancelled")
		}()
		fmt.Println("ready")
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child starts the child process and returns it once it is blocked on
// the FIFO, with its output's lines after "ready".
func child(t *testing.T, grace bool) (*exec.Cmd, <-chan string, <-chan error) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "summary.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SIGCTX_CHILD_FIFO="+fifo)
	if grace {
		cmd.Env = append(cmd.Env, "SIGCTX_CHILD_GRACE=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("child said %q", sc.Text())
	}
	lines := make(chan string, 4)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	time.Sleep(100 * time.Millisecond) // in open(2)
	return cmd, lines, exited
}

// TestSecondSignalEnds: the first SIGTERM cancels the context; the
// process, stuck where the context cannot reach, ends at the second (it
// caught and swallowed every signal: signal.NotifyContext until stop).
func TestSecondSignalEnds(t *testing.T) {
	cmd, lines, exited := child(t, false)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case l := <-lines:
		if l != "cancelled" {
			t.Fatalf("child said %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first SIGTERM did not cancel the context")
	}
	select {
	case err := <-exited:
		t.Fatalf("the first SIGTERM ended the child (%v): the grace is an hour", err)
	case <-time.After(100 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("child ended with %v, want killed by SIGTERM", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the second SIGTERM did not end the child")
	}
}

// TestGraceEnds: one SIGTERM (what timeout(1) sends) ends a command still
// stuck after the grace period, through Exit.
func TestGraceEnds(t *testing.T) {
	cmd, lines, exited := child(t, true)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		var said []string
		for l := range lines {
			said = append(said, l)
		}
		if !slices.Contains(said, "ctxsim: interrupted, and still busy 100ms later: stopped") {
			t.Errorf("child said %q", said)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("child ended with %v, want Exit's code 3", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("still running 5 s after SIGTERM with a grace of 100 ms")
	}
}

// TestStopEndsWatch: a command that returns in time is not ended, and
// its context is cancelled by stop.
func TestStopEndsWatch(t *testing.T) {
	exited := make(chan struct{}, 1)
	ctx, stop := Notify(context.Background(), Options{Grace: 10 * time.Millisecond, Exit: func() { exited <- struct{}{} }})
	stop()
	stop() // twice is fine
	if ctx.Err() == nil {
		t.Error("context not cancelled by stop")
	}
	select {
	case <-exited:
		t.Error("Exit called after stop")
	case <-time.After(50 * time.Millisecond):
	}
}
