// Package kvobserve measures and traces any kv.Engine: every transaction is
// a child span of its caller's and a sample of the store metrics
// (pkg/metrics: latency by kind, failures). kvopen wraps every engine it
// opens, so no engine and no domain store instruments itself.
package kvobserve

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/tracing"
)

// Wrap returns e measured and traced. A write refused for want of space
// (kv.ErrNoSpace) is counted (gatehouse_store_full_total) and, when the
// store was writable until then, logged on log with what an operator does
// about it; the next write that commits is logged too.
func Wrap(e kv.Engine, log *slog.Logger) kv.Engine {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &engine{Engine: e, log: log.With("component", "store")}
}

type engine struct {
	kv.Engine
	log  *slog.Logger
	full atomic.Bool // the last write was refused for want of space
}

// FullHint is what the log says an operator does about a full etcd store.
const FullHint = "the store's space quota is exhausted and every write is refused (503) until space is freed: " +
	"compact etcd (etcdctl compact <current revision>), defragment it (etcdctl defrag), " +
	"then clear the alarm (etcdctl alarm disarm); or raise --quota-backend-bytes"

var (
	readAttr  = trace.WithAttributes(attribute.String("gatehouse.store.kind", metrics.Read))
	writeAttr = trace.WithAttributes(attribute.String("gatehouse.store.kind", metrics.Write))
)

func (e *engine) View(ctx context.Context, fn func(kv.ReadTx) error) error {
	ctx, span := tracing.Start(ctx, "store view", readAttr)
	start := time.Now()
	err := e.Engine.View(ctx, fn)
	metrics.ObserveStore(metrics.Read, start, err)
	end(span, err)
	return err
}

func (e *engine) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	ctx, span := tracing.Start(ctx, "store update", writeAttr)
	start := time.Now()
	err := e.Engine.Update(ctx, fn)
	metrics.ObserveStore(metrics.Write, start, err)
	if errors.Is(err, kv.ErrNoSpace) {
		metrics.CountStoreFull()
	}
	e.noteFull(err)
	end(span, err)
	return err
}

// Ready is the engine's, noting a full store as a refused write does.
func (e *engine) Ready(ctx context.Context) error {
	err := e.Engine.Ready(ctx)
	e.noteFull(err)
	return err
}

// noteFull logs the store becoming full (FullHint) and writable again,
// once each time, from the error of a write or a readiness check.
func (e *engine) noteFull(err error) {
	switch {
	case errors.Is(err, kv.ErrNoSpace):
		if !e.full.Swap(true) {
			e.log.Error(FullHint, "err", err)
		}
	case err == nil && e.full.Load():
		if e.full.Swap(false) {
			e.log.Info("the store accepts writes again")
		}
	}
}

// Unwrap returns the engine inside, for code that needs its own methods.
func (e *engine) Unwrap() kv.Engine { return e.Engine }

func end(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		// The error's kind only: domain errors (not found, conflict) are
		// answers, not failures of the store, and texts may hold keys.
		span.SetStatus(codes.Error, "transaction returned an error")
	}
	span.End()
}
