package kvobserve

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/tracing"
)

// TestWrapMeasuresAndTraces runs transactions on a real bbolt engine: each
// is a child span of its caller's, a latency sample of its kind, and a
// failure when it returns an error.
func TestWrapMeasuresAndTraces(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	raw, err := boltkv.Open(filepath.Join(t.TempDir(), "kv.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := Wrap(raw)
	defer e.Close()

	failures := func(kind string) float64 {
		mfs, _ := metrics.Registry.Gather()
		for _, mf := range mfs {
			if mf.GetName() != "gatehouse_store_transaction_failures_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() == kind {
					return m.GetCounter().GetValue()
				}
			}
		}
		return 0
	}
	before := failures(metrics.Write)

	ctx, parent := tracing.Tracer().Start(context.Background(), "request")
	if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	var got []byte
	if err := e.View(ctx, func(tx kv.ReadTx) error {
		v, err := tx.Get([]byte("k"))
		got = append([]byte(nil), v...)
		return err
	}); err != nil || string(got) != "v" {
		t.Fatalf("View: %q, %v", got, err)
	}
	boom := errors.New("boom")
	if err := e.Update(ctx, func(kv.WriteTx) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Update: %v, want the function's error as is", err)
	}
	parent.End()

	if got := failures(metrics.Write) - before; got != 1 {
		t.Errorf("write failures grew by %v, want 1", got)
	}
	var names []string
	for _, s := range exp.GetSpans() {
		if s.Name == "request" {
			continue
		}
		names = append(names, s.Name)
		if s.Parent.SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %q is not a child of the caller's span", s.Name)
		}
	}
	if want := "[store update store view store update]"; fmt.Sprint(names) != want {
		t.Errorf("spans %v, want %s", names, want)
	}
	if err := e.Ready(context.Background()); err != nil {
		t.Errorf("Ready: %v", err)
	}
}
