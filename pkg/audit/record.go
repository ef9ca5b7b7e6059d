package audit

import (
	"context"
	"sync"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// record is the entry of one write request while it is served: opened by
// the interceptor (or the REST wrapper), given its caller by the service's
// authentication, put by every read-write transaction the request commits.
type record struct {
	mu      sync.Mutex
	entry   Entry
	caller  bool // SetCaller was called: the request is authenticated
	success int  // status of the entry a transaction writes
	written bool // a transaction holding the entry committed
}

type recordKey struct{}

func withRecord(ctx context.Context, r *record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

func recordOf(ctx context.Context) *record {
	r, _ := ctx.Value(recordKey{}).(*record)
	return r
}

// SetCaller tells the request's audit record who is calling; a service's
// authentication calls it once it knows the caller, before it authorizes
// the call. It does nothing outside an audited request.
func SetCaller(ctx context.Context, userID, email string) {
	if r := recordOf(ctx); r != nil {
		r.mu.Lock()
		r.entry.UserID, r.entry.UserEmail, r.caller = userID, email, true
		r.mu.Unlock()
	}
}

// SetObject names the object a request created, for requests whose path
// carries no id; call it inside the transaction that creates it.
func SetObject(ctx context.Context, id string) {
	if r := recordOf(ctx); r != nil {
		r.mu.Lock()
		r.entry.ObjectID = id
		r.mu.Unlock()
	}
}

// Engine returns e with every read-write transaction of an audited,
// authenticated request also writing the request's entry (with its success
// status), in the same transaction: the entry commits exactly when the
// request's write does. A request that commits several transactions writes
// the same entry (one key) in each.
func Engine(e kv.Engine) kv.Engine { return engine{e} }

type engine struct{ kv.Engine }

func (e engine) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	r := recordOf(ctx)
	if r == nil {
		return e.Engine.Update(ctx, fn)
	}
	r.mu.Lock()
	entry, ok := r.entry, r.caller
	r.mu.Unlock()
	if !ok {
		return e.Engine.Update(ctx, fn)
	}
	err := e.Engine.Update(ctx, func(w kv.WriteTx) error {
		if err := fn(w); err != nil {
			return err
		}
		r.mu.Lock()
		entry.ObjectID, entry.Status = r.entry.ObjectID, r.success
		r.mu.Unlock()
		return putEntry(w, entry)
	})
	if err == nil {
		r.mu.Lock()
		r.written = true
		r.mu.Unlock()
	}
	return err
}

// Unwrap returns the decorated engine.
func (e engine) Unwrap() kv.Engine { return e.Engine }
