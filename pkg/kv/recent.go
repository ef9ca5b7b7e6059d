package kv

import (
	"context"
	"time"
)

// recentKey carries a View's staleness allowance in its context.
type recentKey struct{}

// Recent marks ctx's Views as content with bounded staleness: such a View
// sees every write acknowledged more than within before it was called
// (not necessarily the ones after). An engine that serves Views from a
// cache answers it from memory when the cache is known to be that fresh,
// without the read that makes a View linearizable (etcd's quorum read); an
// engine whose Views cost nothing more (bbolt) ignores it. The gRPC front
// door reads keys this way: every stream is checked against the store
// without a round trip to etcd.
func Recent(ctx context.Context, within time.Duration) context.Context {
	return context.WithValue(ctx, recentKey{}, within)
}

// RecentWithin is the staleness Recent allowed ctx's Views; false for a
// linearizable View.
func RecentWithin(ctx context.Context) (time.Duration, bool) {
	within, ok := ctx.Value(recentKey{}).(time.Duration)
	return within, ok
}
