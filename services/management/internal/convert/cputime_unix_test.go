//go:build unix

package convert

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time the test process has used so far, user and system, every thread included
// (garbage collection too).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-ns/op metric to a benchmark: on a machine shared with other work, wall time per
// operation measures the queue for the cores, CPU time per operation what the code costs.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	}
}
