package tracing

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:4317"}, false},
	} {
		if got := Enabled(env(tc.vars)); got != tc.want {
			t.Errorf("Enabled(%v) = %v, want %v", tc.vars, got, tc.want)
		}
	}
}

// Without an exporter, Setup leaves the no-op provider: spans record
// nothing and have no trace id.
func TestSetupWithoutExporter(t *testing.T) {
	shutdown, err := Setup(context.Background(), "studio", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := Tracer().Start(context.Background(), "x")
	if span.IsRecording() || ID(ctx) != "" {
		t.Errorf("without an exporter a span records (%v) or has a trace id (%q)", span.IsRecording(), ID(ctx))
	}
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// With an exporter (to a loopback address nothing listens on), spans record
// and carry a trace id, which the traceparent header propagates.
func TestSetupWithExporter(t *testing.T) {
	prev := otel.GetTracerProvider()
	defer otel.SetTracerProvider(prev)
	shutdown, err := Setup(context.Background(), "studio", env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_INSECURE": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		shutdown(ctx) // nothing answers: the export fails, which is no matter here
	}()
	ctx, span := Tracer().Start(context.Background(), "x")
	defer span.End()
	id := ID(ctx)
	if !span.IsRecording() || len(id) != 32 {
		t.Fatalf("with an exporter: recording %v, trace id %q", span.IsRecording(), id)
	}
	h := http.Header{}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
	if tp := h.Get("traceparent"); len(tp) < 35 || tp[3:35] != id {
		t.Fatalf("traceparent %q does not carry trace id %s", tp, id)
	}
	back := otel.GetTextMapPropagator().Extract(context.Background(), propagation.HeaderCarrier(h))
	if got := trace.SpanContextFromContext(back).TraceID().String(); got != id {
		t.Errorf("extracted trace id %s, want %s", got, id)
	}
}
