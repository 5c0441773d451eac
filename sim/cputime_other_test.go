//go:build !unix

package sim_test

import "time"

func processCPU() time.Duration { return 0 }
