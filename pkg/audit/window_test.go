package audit

import (
	"fmt"
	"testing"
	"time"
)

func TestRefusalsSlide(t *testing.T) {
	var r refusals
	t0 := time.Date(2026, 11, 1, 12, 0, 59, 0, time.UTC) // a second before a minute's boundary
	stored := 0
	// Two bursts either side of the minute's boundary: a reset would let 200 in.
	for i := range 2 * RefusedPerCaller {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		if r.allow("noisy", at) {
			stored++
		}
	}
	if stored != RefusedPerCaller {
		t.Errorf("%d refusals stored within 2 s across a minute's boundary, want %d", stored, RefusedPerCaller)
	}
	if r.allow("noisy", t0.Add(RefusedWindow-time.Millisecond)) {
		t.Error("a refusal stored before the first one left the window")
	}
	if !r.allow("noisy", t0.Add(RefusedWindow)) {
		t.Error("no refusal stored once the first left the window")
	}
	// Over an hour at one call a millisecond: at most 60 windows' worth.
	r = refusals{}
	stored = 0
	for i := range 3_600_000 / 7 {
		if r.allow("noisy", t0.Add(time.Duration(i)*7*time.Millisecond)) {
			stored++
		}
	}
	if max := 60 * RefusedPerCaller; stored > max {
		t.Errorf("%d refusals stored in an hour, want at most %d", stored, max)
	}
}

func TestRefusalsServiceBudget(t *testing.T) {
	var r refusals
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	stored := 0
	for c := range 3 * RefusedPerService / RefusedPerCaller {
		for range RefusedPerCaller {
			if r.allow(fmt.Sprint("caller", c), t0) {
				stored++
			}
		}
	}
	if stored != RefusedPerService {
		t.Errorf("%d refusals stored by many callers in one instant, want %d", stored, RefusedPerService)
	}
	if !r.allow("late", t0.Add(RefusedWindow)) {
		t.Error("the service's budget did not slide")
	}
	if len(r.callers) > RefusedPerService+1 {
		t.Errorf("%d callers remembered, want idle ones forgotten", len(r.callers))
	}
}
