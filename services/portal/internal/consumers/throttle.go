package consumers

import (
	"sync"
	"time"
)

// Login throttling (CONTRACT §3): at most loginLimit failed logins a
// minute for one e-mail, and as many for one remote address; beyond that a
// login is refused before its password is checked (no argon2 work) until
// the oldest failure is a minute old. The counts live in the process (a
// replica counts its own); the table holds at most throttleEntries keys and
// forgets the stalest when full, so a flood of addresses costs bounded memory.
const (
	loginLimit      = 10
	loginWindow     = time.Minute
	throttleEntries = 100_000
)

type throttle struct {
	mu       sync.Mutex
	failures map[string][]time.Time
}

func newThrottle() *throttle { return &throttle{failures: map[string][]time.Time{}} }

// recent drops the failures of key older than the window and returns the rest.
func (t *throttle) recent(key string, now time.Time) []time.Time {
	list := t.failures[key]
	i := 0
	for i < len(list) && now.Sub(list[i]) >= loginWindow {
		i++
	}
	list = list[i:]
	if len(list) == 0 {
		delete(t.failures, key)
	} else {
		t.failures[key] = list
	}
	return list
}

// blocked reports whether any of keys has loginLimit failures within the last minute.
func (t *throttle) blocked(now time.Time, keys ...string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		if len(t.recent(k, now)) >= loginLimit {
			return true
		}
	}
	return false
}

// fail counts a failed login against every key.
func (t *throttle) fail(now time.Time, keys ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.failures) >= throttleEntries {
		for k, list := range t.failures { // forget what has expired, else an arbitrary key
			if len(list) == 0 || now.Sub(list[len(list)-1]) >= loginWindow {
				delete(t.failures, k)
			}
		}
		for k := range t.failures {
			if len(t.failures) < throttleEntries {
				break
			}
			delete(t.failures, k)
		}
	}
	for _, k := range keys {
		list := t.recent(k, now)
		if len(list) >= loginLimit {
			list = list[1:]
		}
		t.failures[k] = append(list, now)
	}
}
