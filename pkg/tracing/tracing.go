// Package tracing sets up OpenTelemetry tracing for a Gatehouse process.
//
// Spans are made for every REST request (pkg/restfacade), every gRPC call
// (otelgrpc on the server), every in-process call the facade makes
// (grpcserver.Local), every store transaction of a kv engine
// (pkg/kv/kvobserve) and every migration. The
// W3C traceparent header is read from REST requests and carried on gRPC
// metadata, so one request is one trace across the facade and the service.
//
// Spans are exported over OTLP only when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set; otherwise Setup installs OpenTelemetry's no-op provider, whose spans
// cost almost nothing (see the benchmark in pkg/restfacade) and still carry
// a trace a request came with (its id is logged).
package tracing

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Name is the instrumentation scope of Gatehouse's own spans.
const Name = "github.com/gatehouse/gatehouse"

func init() {
	// Propagation works with or without an exporter: a trace that starts
	// upstream continues through the service.
	otel.SetTextMapPropagator(propagator)
}

// propagator is the process's: W3C trace context and baggage, read from
// the headers extractHeaders names.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// extractHeaders are the headers propagator reads, as net/http keys them:
// a request with none of them has nothing to extract.
var extractHeaders = []string{"Traceparent", "Tracestate", "Baggage"}

// Extract returns ctx with the trace context and baggage h carries, as the
// process's propagator extracts them; ctx itself when h carries none of
// their headers (Extract would look each up by a name it canonicalizes
// anew: two allocations a request).
func Extract(ctx context.Context, h http.Header) context.Context {
	for _, k := range extractHeaders {
		if _, ok := h[k]; ok {
			return otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(h))
		}
	}
	return ctx
}

// Start starts a span with the process's tracer, as Tracer().Start does.
// Without an exporter (the no-op provider, Setup) a span only passes its
// parent's span context on, and Start returns ctx and that parent as they
// are, as the no-op tracer does for a parent that does not record, instead
// of putting a span that is nothing into a new context (an allocation a
// span).
func Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t := Tracer()
	if _, off := t.(noop.Tracer); off {
		if parent := trace.SpanFromContext(ctx); !parent.IsRecording() {
			return ctx, parent
		}
	}
	return t.Start(ctx, name, opts...)
}

// Tracer returns the tracer for Gatehouse's own spans (the global provider's).
func Tracer() trace.Tracer { return otel.Tracer(Name) }

// Enabled reports whether getenv asks for an OTLP exporter.
func Enabled(getenv func(string) string) bool {
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs an OTLP/gRPC exporter as the global tracer provider when
// Enabled; the exporter reads the standard OTEL_EXPORTER_OTLP_* variables
// itself. The returned function flushes and stops it (a no-op without one).
func Setup(ctx context.Context, service string, getenv func(string) string) (shutdown func(context.Context) error, err error) {
	if !Enabled(getenv) {
		// The global provider left unset is not free: its tracer makes and
		// allocates a span for every Start (two per REST request).
		otel.SetTracerProvider(noop.NewTracerProvider())
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// ID is the id of ctx's trace for log lines, or "" when ctx carries none.
func ID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}
