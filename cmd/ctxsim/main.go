package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// SIGINT/SIGTERM cancel the command's context: replays stop between
	// calls, a sweep keeps its journal of finished cells (resume it with
	// --resume), and nothing is half-written.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runEnv(&env{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}
