// Package auditctx carries what a service tells the audit log about the
// request it serves — who is calling, which object it created — through the
// request's context. It is a leaf: it imports nothing but the standard
// library, so stores (which name the objects they create) link neither the
// audit log nor the REST facade nor the tracing exporter; package audit
// opens a Request for every audited call and reads it back.
package auditctx

import (
	"context"
	"sync"
)

// Request is what one audited request learned while it was served. Its
// methods are safe for concurrent use.
type Request struct {
	mu     sync.Mutex
	userID string
	email  string
	caller bool // SetCaller was called: the request is authenticated
	object string
}

type requestKey struct{}

// With returns ctx carrying r.
func With(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

func of(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// SetCaller tells the request's audit record who is calling; a service's
// authentication calls it once it knows the caller, before it authorizes
// the call. It does nothing outside an audited request.
func SetCaller(ctx context.Context, userID, email string) {
	if r := of(ctx); r != nil {
		r.mu.Lock()
		r.userID, r.email, r.caller = userID, email, true
		r.mu.Unlock()
	}
}

// SetObject names the object a request created, for requests whose path
// carries no id; call it inside the transaction that creates it. It does
// nothing outside an audited request.
func SetObject(ctx context.Context, id string) {
	if r := of(ctx); r != nil {
		r.SetObject(id)
	}
}

// SetObject names the request's object.
func (r *Request) SetObject(id string) {
	r.mu.Lock()
	r.object = id
	r.mu.Unlock()
}

// Caller is who SetCaller said is calling; ok is false until it was called.
func (r *Request) Caller() (userID, email string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.userID, r.email, r.caller
}

// Object is the request's object id (SetObject's last).
func (r *Request) Object() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.object
}

type noEntryKey struct{}

// WithoutEntry returns ctx whose transactions do not write the request's
// audit entry: for a write whose request may still fail after it commits
// (a call made after it), the entry is then stored when the request ends,
// with the status it answered.
func WithoutEntry(ctx context.Context) context.Context {
	return context.WithValue(ctx, noEntryKey{}, true)
}

// EntryKept reports whether transactions under ctx may write the request's
// entry (not under WithoutEntry).
func EntryKept(ctx context.Context) bool {
	off, _ := ctx.Value(noEntryKey{}).(bool)
	return !off
}
