package audit

import (
	"net/http"
	"time"
)

// Sensitive audits a REST request that is not a write yet must be audited,
// because it reads what only an admin may (the store backup). check is the
// service's authentication, run with the request's record so that it names
// the caller (auditctx.SetCaller). When check refuses the request its entry is
// finished as a refused write's is (stored within RefusedPerMinute when the
// caller is known, only counted without valid credentials) and its error
// returned; otherwise done must be called with the answer's status once the
// request is served, and stores the entry.
func (l *Log) Sensitive(req *http.Request, check func(*http.Request) error) (done func(status int), err error) {
	now := time.Now().UTC()
	r := newRecord(Entry{ID: newID(now), Time: now, Action: req.Method + " " + req.URL.Path, RemoteAddr: hostOf(req.RemoteAddr)})
	if err := check(req.WithContext(withRecord(req.Context(), r))); err != nil {
		l.finish(req.Context(), r, err)
		return func(int) {}, err
	}
	return func(status int) {
		r.mu.Lock()
		r.success = status
		r.mu.Unlock()
		l.finish(req.Context(), r, nil)
	}, nil
}
