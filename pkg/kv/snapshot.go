package kv

import (
	"context"
	"io"
)

// Snapshotter is an engine that can copy its whole store while it serves:
// one consistent snapshot (every write committed before it began, none
// after), written as a file the engine opens again (bbolt). An etcd cluster
// is backed up with its own tool (etcdctl snapshot save), so etcd's engine
// is not one.
type Snapshotter interface {
	// Snapshot calls fn inside one read transaction with the snapshot's
	// size in bytes and its content; writes go on meanwhile. fn's error is
	// returned as is.
	Snapshot(ctx context.Context, fn func(size int64, content io.WriterTo) error) error
}

// SnapshotterOf finds the Snapshotter in e or in the engines it decorates.
func SnapshotterOf(e Engine) (Snapshotter, bool) { return find[Snapshotter](e) }

// Checker is an engine that can check the consistency of its own store
// (bbolt's Check of every page); store tests run it at cleanup.
type Checker interface{ Check() error }

// CheckerOf finds the Checker in e or in the engines it decorates.
func CheckerOf(e Engine) (Checker, bool) { return find[Checker](e) }

// find looks for a T in e, then in the engines e decorates: each decorator
// has Unwrap() Engine.
func find[T any](e Engine) (T, bool) {
	for e != nil {
		if t, ok := e.(T); ok {
			return t, true
		}
		u, ok := e.(interface{ Unwrap() Engine })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	var zero T
	return zero, false
}
