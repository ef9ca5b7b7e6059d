package audit

import (
	"sync"
	"time"
)

// How many refused requests a process stores, in any window of
// RefusedWindow: RefusedPerCaller of one caller, RefusedPerService of all
// callers together; the rest are only counted
// (gatehouse_audit_refused_dropped_total). The window slides: it is the
// last minute at every instant, never a minute that resets, so a caller
// cannot store twice the cap across a minute's boundary. At about 700
// bytes an entry (its two keys, an id cut to 256 bytes), one key's refusals
// grow the store by at most 100 × 60 × 700 B ≈ 4.2 MB an hour per process.
const (
	RefusedWindow     = time.Minute
	RefusedPerCaller  = 100
	RefusedPerService = 1000
)

// refusals is the sliding-window cap on stored refused requests.
type refusals struct {
	mu      sync.Mutex
	callers map[string]*stamps
	all     stamps
}

// stamps are the times of the last refusals stored, oldest first, at most
// cap of them (a ring).
type stamps struct {
	at   []time.Time
	next int // the oldest when full
}

// allow reports whether one more stamp fits in window before now, and
// records it when it does.
func (s *stamps) allow(now time.Time, limit int) bool {
	if len(s.at) < limit {
		s.at = append(s.at, now)
		return true
	}
	if now.Sub(s.at[s.next]) < RefusedWindow {
		return false
	}
	s.at[s.next] = now
	s.next = (s.next + 1) % limit
	return true
}

// newest is the time of the last stamp.
func (s *stamps) newest() time.Time {
	if len(s.at) == 0 {
		return time.Time{}
	}
	if len(s.at) < cap(s.at) || s.next == 0 {
		return s.at[len(s.at)-1]
	}
	return s.at[s.next-1]
}

// allow reports whether one more refused request of caller may be stored
// now. Callers idle for a window are forgotten, so the map holds only
// callers refused within the last minute.
func (r *refusals) allow(caller string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.callers == nil {
		r.callers = map[string]*stamps{}
	}
	s := r.callers[caller]
	if s == nil {
		if len(r.callers) >= RefusedPerService {
			for c, old := range r.callers {
				if now.Sub(old.newest()) >= RefusedWindow {
					delete(r.callers, c)
				}
			}
		}
		s = &stamps{at: make([]time.Time, 0, RefusedPerCaller)}
		r.callers[caller] = s
	}
	if len(s.at) == RefusedPerCaller && now.Sub(s.at[s.next]) < RefusedWindow {
		return false
	}
	if !r.all.allow(now, RefusedPerService) {
		return false
	}
	return s.allow(now, RefusedPerCaller)
}
