package credential

import (
	"bytes"
	"context"
	"sync"
)

// A REST request's key is checked twice: by the facade before it reads the
// body, and by the interceptor before the handler runs. A lookup memo in the
// request's context lets the second check use what the first one found, so
// that one request reads its caller from the store once. Only the request
// that made the memo can see it (a context value never crosses the network),
// and only a successful lookup is remembered.

type memoKey struct{}

// Memo is one request's lookup memo; the zero Memo is empty.
type Memo struct {
	mu    sync.Mutex
	hash  []byte
	value any
}

// MemoKey is the context key WithLookupMemo puts a memo under. A context
// of a caller's own that answers Value(MemoKey) with a *Memo it keeps (the
// REST facade's one record per request) carries that memo as
// WithLookupMemo's would.
var MemoKey any = memoKey{}

// WithLookupMemo returns ctx carrying an empty lookup memo, for one request.
func WithLookupMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &Memo{})
}

// Lookup returns what find returns for the secret hash: from ctx's memo when
// an earlier Lookup of the same hash in this request succeeded, otherwise by
// calling find (and remembering its answer when it has no error).
func Lookup[T any](ctx context.Context, hash []byte, find func() (T, error)) (T, error) {
	m, _ := ctx.Value(memoKey{}).(*Memo)
	if m == nil {
		return find()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.value.(T); ok && m.hash != nil && bytes.Equal(m.hash, hash) {
		return v, nil
	}
	v, err := find()
	if err == nil {
		m.hash, m.value = hash, v
	}
	return v, err
}
