package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/internal/sigctx"
)

func main() {
	// SIGINT/SIGTERM cancel the command's context: replays stop between
	// calls, a sweep keeps its journal of finished cells (resume it with
	// --resume), and nothing is half-written. A second signal, or the
	// grace period, ends a command stuck where no context reaches.
	ctx, stop := sigctx.Notify(context.Background(), sigctx.Options{Stderr: os.Stderr, Exit: func() { os.Exit(exitFailure) }})
	code := runEnv(&env{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, cacheDir: defaultCacheDir()}, os.Args[1:])
	stop()
	os.Exit(code)
}

// defaultCacheDir is where token counts persist between runs:
// $CTXSIM_CACHE_DIR, else ctxsim/ in the user's cache directory, else none.
func defaultCacheDir() string {
	if d := os.Getenv("CTXSIM_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ctxsim")
	}
	return ""
}
