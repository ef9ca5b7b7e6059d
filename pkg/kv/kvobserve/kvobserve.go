// Package kvobserve measures and traces any kv.Engine: every transaction is
// a child span of its caller's and a sample of the store metrics
// (pkg/metrics: latency by kind, failures). kvopen wraps every engine it
// opens, so no engine and no domain store instruments itself.
package kvobserve

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/tracing"
)

// Wrap returns e measured and traced.
func Wrap(e kv.Engine) kv.Engine { return &engine{e} }

type engine struct{ kv.Engine }

var (
	readAttr  = trace.WithAttributes(attribute.String("gatehouse.store.kind", metrics.Read))
	writeAttr = trace.WithAttributes(attribute.String("gatehouse.store.kind", metrics.Write))
)

func (e *engine) View(ctx context.Context, fn func(kv.ReadTx) error) error {
	ctx, span := tracing.Tracer().Start(ctx, "store view", readAttr)
	start := time.Now()
	err := e.Engine.View(ctx, fn)
	metrics.ObserveStore(metrics.Read, start, err)
	end(span, err)
	return err
}

func (e *engine) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	ctx, span := tracing.Tracer().Start(ctx, "store update", writeAttr)
	start := time.Now()
	err := e.Engine.Update(ctx, fn)
	metrics.ObserveStore(metrics.Write, start, err)
	end(span, err)
	return err
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
