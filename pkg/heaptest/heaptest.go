// Package heaptest measures what a piece of work adds to the Go heap of the
// process that runs it, for tests and benchmarks that hold an answer or a
// parse to a memory bound.
package heaptest

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Peak runs f and returns the most heap (live and not yet collected objects,
// sampled every millisecond and once more at the end) above what was in use
// before it, after a collection.
func Peak(f func()) uint64 {
	runtime.GC()
	return peakOf("/memory/classes/heap/objects:bytes", time.Millisecond, f)
}

// PeakHeld runs f and returns the most heap f held at once: the live heap
// each collection found (collections made every 1% of growth while f runs),
// above what was live before it. Peak also counts garbage not yet collected,
// which a process lets grow to its whole live heap (GOGC 100), whatever f
// holds: a 4 MiB minimum, other work's data. PeakHeld is the figure that
// grows with what f holds, so with the number of concurrent fs.
func PeakHeld(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	runtime.GC()
	return peakOf("/gc/heap/live:bytes", 100*time.Microsecond, f)
}

// peakOf runs f and returns the most the runtime metric name (a byte count)
// grew above its value before f, sampled every period and once at the end.
func peakOf(name string, period time.Duration, f func()) uint64 {
	sample := []metrics.Sample{{Name: name}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	note := func() {
		if v := read(); v > peak.Load() {
			peak.Store(v)
		}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			note()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	note()
	return max(peak.Load(), base) - base
}
