package gcpercent

import (
	"math"
	"runtime/debug"
	"testing"
)

// percent reads the collector's percent.
func percent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestRaise(t *testing.T) {
	t.Setenv("GOGC", "") // the environment chose nothing
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	t.Run("no memory limit", func(t *testing.T) {
		release := Raise(300)
		if got := percent(); got != 100 {
			t.Errorf("percent %d while raised without a memory limit, want 100", got)
		}
		release()
	})

	debug.SetMemoryLimit(1 << 30)
	t.Run("overlapping raises", func(t *testing.T) {
		a := Raise(300)
		b := Raise(300)
		if got := percent(); got != 300 {
			t.Fatalf("percent %d while raised, want 300", got)
		}
		a()
		a() // a second call changes nothing
		if got := percent(); got != 300 {
			t.Errorf("percent %d with one raise left, want 300", got)
		}
		b()
		if got := percent(); got != 100 {
			t.Errorf("percent %d after the last release, want 100", got)
		}
	})
	t.Run("higher already", func(t *testing.T) {
		debug.SetGCPercent(400)
		defer debug.SetGCPercent(100)
		release := Raise(300)
		if got := percent(); got != 400 {
			t.Errorf("percent %d, want 400 kept", got)
		}
		release()
		if got := percent(); got != 400 {
			t.Errorf("percent %d after release, want 400", got)
		}
	})
	t.Run("GOGC in the environment", func(t *testing.T) {
		t.Setenv("GOGC", "100")
		release := Raise(300)
		if got := percent(); got != 100 {
			t.Errorf("percent %d with GOGC set, want 100", got)
		}
		release()
	})
}
