//go:build unix

package sim_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, every thread (the
// garbage collector's included), or 0 where it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
