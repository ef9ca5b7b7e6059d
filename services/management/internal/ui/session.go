package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxSessions bounds the sessions one process holds; past it the
// oldest idle ones make room, and a sign-in is refused only when every
// session is in use within the last minute.
const DefaultMaxSessions = 10000

// cookieName is the session cookie; csrfField the form field of the token.
const (
	cookieName = "gatehouse_session"
	csrfField  = "csrf_token"
)

// session is one signed-in browser (fields guarded by sessions.mu; get
// hands out copies). It holds the user's access key in
// this process's memory only: every call is made with it, so the service
// authorizes each as that user, and a key that is reset or a user who is
// deactivated ends the session at its next request.
type session struct {
	id, key, csrf string
	seen          time.Time
}

func (s *session) validCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.csrf)) == 1
}

// sessions are the server-side sessions, by opaque id.
type sessions struct {
	mu   sync.Mutex
	m    map[string]*session
	idle time.Duration
	max  int
	now  func() time.Time
}

func newSessions(idle time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{m: map[string]*session{}, idle: idle, max: max, now: now}
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session for key; ok is false when the table is full of
// sessions used within the last minute.
func (s *sessions) create(key string) (*session, bool) {
	now := s.now()
	sess := &session{id: randomToken(), key: key, csrf: randomToken(), seen: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		s.prune(now)
	}
	if len(s.m) >= s.max {
		return nil, false
	}
	s.m[sess.id] = sess
	return sess, true
}

// prune drops expired sessions, then, if still full, those idle for more
// than a minute.
func (s *sessions) prune(now time.Time) {
	for id, x := range s.m {
		if now.Sub(x.seen) >= s.idle {
			delete(s.m, id)
		}
	}
	if len(s.m) < s.max {
		return
	}
	for id, x := range s.m {
		if now.Sub(x.seen) > time.Minute {
			delete(s.m, id)
		}
	}
}

// get returns a copy of the live session of id and marks it used; ok is
// false when there is none or it has been idle for the timeout.
func (s *sessions) get(id string) (session, bool) {
	if id == "" {
		return session{}, false
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.m[id]
	if x == nil {
		return session{}, false
	}
	if now.Sub(x.seen) >= s.idle {
		delete(s.m, id)
		return session{}, false
	}
	x.seen = now
	return *x, true
}

// rekey gives a session the user's new key (the user reset its own).
func (s *sessions) rekey(id, key string) {
	s.mu.Lock()
	if x := s.m[id]; x != nil {
		x.key = key
	}
	s.mu.Unlock()
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

func sessionID(r *http.Request) string {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return ""
	}
	return c.Value
}

// setCookie sends the session cookie: HttpOnly, SameSite=Strict, Secure
// over TLS; a session cookie (no Max-Age), ended server-side by the idle
// timeout. maxAge -1 deletes it.
func setCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: value, Path: Prefix, HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: maxAge})
}
