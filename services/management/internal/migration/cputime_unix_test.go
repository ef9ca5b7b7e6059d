//go:build unix

package migration

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used so far, user and system, every thread included
// (the engine's commit loop and garbage collection too).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
