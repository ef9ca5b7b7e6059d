package app

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/pkg/metrics/metricstest"
)

// TestMetrics scrapes /metrics after REST and gRPC traffic: the names and
// labels of CONTRACT §5, route patterns instead of paths, no key or path in
// any label value.
func TestMetrics(t *testing.T) {
	s := startTemp(t)
	s.do(t, "POST", "/api/v1/llm-settings", llm(`{"model_name":"m"}`)).expect(t, "create", 201, "")
	s.do(t, "GET", "/api/v1/llm-settings/1", "").expect(t, "get", 200, "")
	s.do(t, "GET", "/api/v1/llm-settings/77", "").expect(t, "get missing", 404, "")
	s.do(t, "GET", "/api/v1/nowhere-7f3a", "").expect(t, "unknown path", 404, "")
	s.do(t, "GET", "/api/v1/llm-settings", "", "Bearer wrong-key-5b1e").expect(t, "bad key", 401, "")

	m := metricstest.Scrape(t, s.base)
	m.CheckCommon(t, "/api/v1/llm-settings/{id}")
	m.Want(t, "grpc_server_handled_total", []string{"grpc_code", "grpc_method", "grpc_service", "grpc_type"},
		"grpc_service", "gatehouse.studio.v1.StudioService", "grpc_method", "GetLlmSettings", "grpc_code", "NotFound")
	m.Want(t, "gatehouse_http_request_duration_seconds_count", []string{"code", "method", "route"},
		"route", "/api/v1/llm-settings", "method", "GET", "code", "401")
	m.CheckRoutes(t, s.base)
	m.CheckNoSecrets(t, token, "wrong-key-5b1e", "nowhere-7f3a", "/api/v1/llm-settings/1", "/api/v1/llm-settings/77")
}

// TestReadyz: 200 while the store answers, 503 in the studio's error shape
// once it does not.
func TestReadyz(t *testing.T) {
	s := startTemp(t)
	s.do(t, "GET", "/readyz", "", "").expect(t, "ready", 200, `{"status":"ok"}`)
}

// TestTraceOfOneRequest follows one REST request carrying a W3C traceparent:
// the facade's server span continues the caller's trace; the facade's key
// check reads the store, then the in-process call's span follows, with the
// handler's store read as its child (the interceptor's key check reuses the
// facade's read), all in one trace.
func TestTraceOfOneRequest(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	s := startTemp(t)
	s.do(t, "POST", "/api/v1/llm-settings", llm(`{"model_name":"m"}`)).expect(t, "create", 201, "")
	exp.Reset()

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest("GET", s.base+"/api/v1/llm-settings/1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}

	spans := exp.GetSpans()
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, sp := range spans {
		byID[sp.SpanContext.SpanID()] = sp
		if got := sp.SpanContext.TraceID().String(); got != traceID {
			t.Errorf("span %q in trace %s, want %s", sp.Name, got, traceID)
		}
	}
	// Each span's chain of parents, as names: child first.
	chain := func(sp tracetest.SpanStub) string {
		var names []string
		for {
			names = append(names, sp.Name)
			parent, ok := byID[sp.Parent.SpanID()]
			if !ok {
				return strings.Join(names, " < ")
			}
			sp = parent
		}
	}
	var got []string
	for _, sp := range spans {
		got = append(got, chain(sp))
	}
	const get = "gatehouse.studio.v1.StudioService/GetLlmSettings"
	want := map[string]bool{
		"GET /api/v1/llm-settings/{id}":                            false,
		"store view < GET /api/v1/llm-settings/{id}":               false,
		get + " < GET /api/v1/llm-settings/{id}":                   false,
		"store view < " + get + " < GET /api/v1/llm-settings/{id}": false,
	}
	for _, c := range got {
		if _, ok := want[c]; !ok {
			t.Errorf("unexpected span chain %q", c)
		}
		want[c] = true
	}
	for c, seen := range want {
		if !seen {
			t.Errorf("no span chain %q; got %q", c, got)
		}
	}
	views := 0
	for _, sp := range spans {
		if sp.Name == "store view" && byID[sp.Parent.SpanID()].Name == get {
			views++
		}
		if sp.Name == get && sp.SpanKind != trace.SpanKindInternal {
			t.Errorf("in-process call span: kind %v, want internal", sp.SpanKind)
		}
		if sp.Name == "GET /api/v1/llm-settings/{id}" {
			if sp.SpanKind != trace.SpanKindServer || sp.Parent.SpanID().String() != "00f067aa0ba902b7" || !sp.Parent.IsRemote() {
				t.Errorf("REST span: kind %v, parent %v remote %v; want a server span continuing the caller's span", sp.SpanKind, sp.Parent.SpanID(), sp.Parent.IsRemote())
			}
		}
	}
	if views != 1 {
		t.Errorf("%d store views inside the call's span, want 1: the handler's read (the interceptor's key check uses what the facade's check read)", views)
	}
}
