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

// SnapshotterOf finds the Snapshotter in e or in the engines it decorates
// (each decorator has Unwrap() Engine).
func SnapshotterOf(e Engine) (Snapshotter, bool) {
	for e != nil {
		if s, ok := e.(Snapshotter); ok {
			return s, true
		}
		u, ok := e.(interface{ Unwrap() Engine })
		if !ok {
			return nil, false
		}
		e = u.Unwrap()
	}
	return nil, false
}
