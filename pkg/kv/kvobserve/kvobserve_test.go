package kvobserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
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
	e := Wrap(raw, nil)
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

// fullEngine refuses every write for want of space, as etcd with its
// NOSPACE alarm raised does, until full is cleared.
type fullEngine struct {
	kv.Engine
	full bool
}

func (e *fullEngine) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	if e.full {
		return fmt.Errorf("%w (etcd NOSPACE alarm)", kv.ErrNoSpace)
	}
	return e.Engine.Update(ctx, fn)
}

// TestStoreFullLogged: the first write refused for want of space logs what
// an operator does (compaction, etcdctl alarm disarm), once, and the first
// write after it that commits says so.
func TestStoreFullLogged(t *testing.T) {
	raw, err := boltkv.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var logs strings.Builder
	full := &fullEngine{Engine: raw, full: true}
	e := Wrap(full, slog.New(slog.NewTextHandler(&logs, nil)))
	put := func() error {
		return e.Update(context.Background(), func(w kv.WriteTx) error { return w.Put([]byte("k"), []byte("v")) })
	}
	for range 3 {
		if err := put(); !errors.Is(err, kv.ErrNoSpace) {
			t.Fatalf("write to a full store: %v", err)
		}
	}
	full.full = false
	if err := put(); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"etcdctl alarm disarm", "etcdctl compact", "accepts writes again"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q does not say %q", out, want)
		}
	}
	if n := strings.Count(out, "etcdctl alarm disarm"); n != 1 {
		t.Errorf("the full store was logged %d times for 3 refused writes, want once", n)
	}
}
