package audit

import (
	"context"
	"sync"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// record is the entry of one write request while it is served: opened by
// the interceptor (or the REST wrapper), given its caller and object by the
// service (auditctx.SetCaller, auditctx.SetObject on req), put by every
// read-write transaction the request commits.
type record struct {
	req     *auditctx.Request // who calls, which object
	mu      sync.Mutex
	entry   Entry // time, action and address; user and object come from req
	success int   // status of the entry a transaction writes
	written bool  // a transaction holding the entry committed
	stored  Entry // the entry that transaction held
}

type recordKey struct{}

// newRecord opens the record of a request whose entry starts as e (its
// ObjectID the object's id as the request names it).
func newRecord(e Entry) *record {
	r := &record{req: &auditctx.Request{}, entry: e}
	r.req.SetObject(e.ObjectID)
	return r
}

func withRecord(ctx context.Context, r *record) context.Context {
	return auditctx.With(context.WithValue(ctx, recordKey{}, r), r.req)
}

func recordOf(ctx context.Context) *record {
	r, _ := ctx.Value(recordKey{}).(*record)
	return r
}

// current is the entry as known now, and whether its caller is.
func (r *record) current() (Entry, bool) {
	r.mu.Lock()
	e := r.entry
	r.mu.Unlock()
	var caller bool
	e.UserID, e.UserEmail, caller = r.req.Caller()
	e.ObjectID = r.req.Object()
	return e, caller
}

// Engine returns e with every read-write transaction of an audited,
// authenticated request also writing the request's entry (with its success
// status), in the same transaction: the entry commits exactly when the
// request's write does. A request that commits several transactions (a
// migration commits one per API) writes its entry (one key) in those that
// run before one holding it committed, and again only when the entry
// changed since (its caller or object set anew).
func Engine(e kv.Engine) kv.Engine { return engine{e} }

type engine struct{ kv.Engine }

func (e engine) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	r := recordOf(ctx)
	if r == nil || !auditctx.EntryKept(ctx) {
		return e.Engine.Update(ctx, fn)
	}
	if _, ok := r.current(); !ok {
		return e.Engine.Update(ctx, fn)
	}
	var put Entry
	written := false
	err := e.Engine.Update(ctx, func(w kv.WriteTx) error {
		written = false
		if err := fn(w); err != nil {
			return err
		}
		entry, _ := r.current()
		r.mu.Lock()
		entry.Status = r.success
		stored := r.written && entry == r.stored
		r.mu.Unlock()
		if stored {
			return nil
		}
		// An entry that cannot be put never fails the write it records:
		// the interceptor then stores it on its own (Log.finish).
		put, written = entry, putEntry(w, entry) == nil
		return nil
	})
	if err == nil && written {
		r.mu.Lock()
		r.written, r.stored = true, put
		r.mu.Unlock()
	}
	return err
}

// Unwrap returns the decorated engine.
func (e engine) Unwrap() kv.Engine { return e.Engine }
