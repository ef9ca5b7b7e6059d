// Package gcpercent raises the garbage collector's percent (GOGC) for the
// length of a bulk job that allocates much and holds little, such as a
// migration of thousands of APIs, when a memory limit bounds the heap.
//
// At the default percent (100) the collector runs each time the heap has
// grown by its live part; a job that allocates hundreds of megabytes over a
// live heap of tens runs it dozens of times. A higher percent runs it fewer
// times, for a heap that many times the live one, unless the memory limit
// (GOMEMLIMIT; the binaries set it from the container's limit) comes first:
// then the collector runs as often as the limit needs, as it would have.
// So the percent is raised only while a memory limit is in force (without
// one nothing would bound the larger heap), and never when the environment
// chose GOGC itself.
package gcpercent

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

var (
	mu      sync.Mutex
	holders int // raises not yet released
	saved   int // the percent before the first of them
)

// Raise sets the collector's percent to percent, unless it is that high
// already, no memory limit is in force or GOGC is set in the environment,
// until release is called. Raises may overlap (concurrent jobs): the
// percent goes back when the last is released. release may be called once.
func Raise(percent int) (release func()) {
	if os.Getenv("GOGC") != "" || debug.SetMemoryLimit(-1) == math.MaxInt64 {
		return func() {}
	}
	mu.Lock()
	defer mu.Unlock()
	if holders == 0 {
		saved = debug.SetGCPercent(percent)
		if saved < 0 || saved >= percent { // off, or that high already
			debug.SetGCPercent(saved)
		}
	}
	holders++
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if holders--; holders == 0 {
				debug.SetGCPercent(saved)
			}
		})
	}
}
