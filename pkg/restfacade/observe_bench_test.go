package restfacade

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatehouse/gatehouse/pkg/tracing"
)

// BenchmarkObserve measures what observe adds to one request (span, HTTP
// metrics, log line to a discarding handler) with no exporter (what
// tracing.Setup installs then: OpenTelemetry's no-op provider) and with a
// recording SDK tracer, against the bare handler.
func BenchmarkObserve(b *testing.B) {
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setRoute(r, "/api/v1/llm-settings/{id}")
		w.Write([]byte(`{"data":{}}`))
	})
	log := slog.New(slog.DiscardHandler)
	run := func(b *testing.B, h http.Handler) {
		req := httptest.NewRequest("GET", "/api/v1/llm-settings/1", nil)
		req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, bare) })
	b.Run("no-exporter", func(b *testing.B) {
		prev := otel.GetTracerProvider()
		if _, err := tracing.Setup(context.Background(), "bench", func(string) string { return "" }); err != nil {
			b.Fatal(err)
		}
		defer otel.SetTracerProvider(prev)
		run(b, observe(log, bare))
	})
	b.Run("sdk-recording", func(b *testing.B) {
		prev := otel.GetTracerProvider()
		otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter())))
		defer otel.SetTracerProvider(prev)
		run(b, observe(log, bare))
	})
}
