package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// scrape reads the registry as GET /metrics serves it.
func scrape(t *testing.T) string {
	t.Helper()
	w := httptest.NewRecorder()
	Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(w.Result().Body)
	if w.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", w.Code, body)
	}
	return string(body)
}

func TestHandlerServesWhatWasCounted(t *testing.T) {
	ObserveHTTP("/api/v1/things/{id}", HTTPMethod("GET"), 404, 3*time.Millisecond)
	ObserveStore(Write, time.Now(), errors.New("disk full"))
	ObserveStore(Read, time.Now(), nil)
	CountAuthFailure("studio")
	CountAuditDropped("management")
	own := NewCounterVec("gatehouse_test_things_total", "Things a test counted, by colour.", "colour")
	own.WithLabelValues("red").Add(2)
	GatewayNodes(func() float64 { return 3 })
	defer GatewayNodes(nil)
	out := scrape(t)
	for _, want := range []string{
		`gatehouse_http_request_duration_seconds_count{code="404",method="GET",route="/api/v1/things/{id}"} 1`,
		`gatehouse_store_transaction_failures_total{kind="write"} 1`,
		`gatehouse_store_transaction_duration_seconds_count{kind="read"} 1`,
		`gatehouse_auth_failures_total{service="studio"} 1`,
		`gatehouse_audit_refused_dropped_total{service="management"} 1`,
		`gatehouse_test_things_total{colour="red"} 2`,
		`gatehouse_gateway_nodes 3`,
		`gatehouse_build_info{goversion="go`,
		"go_goroutines ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(out, `gatehouse_store_transaction_failures_total{kind="read"} 1`) {
		t.Error("a read without error was counted as a failure")
	}
}

func TestNewCounterVecRefusesANameTwice(t *testing.T) {
	NewCounterVec("gatehouse_test_once_total", "Counted once.", "x")
	defer func() {
		if recover() == nil {
			t.Error("a second counter of the same name was registered")
		}
	}()
	NewCounterVec("gatehouse_test_once_total", "Counted once.", "x")
}

func TestHTTPMethodIsAClosedSet(t *testing.T) {
	for in, want := range map[string]string{
		"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH", "DELETE": "DELETE",
		"OPTIONS": "OPTIONS", "CONNECT": "CONNECT", "TRACE": "TRACE", "get": "other", "BREW": "other", "": "other",
	} {
		if got := HTTPMethod(in); got != want {
			t.Errorf("HTTPMethod(%q) = %q, want %q", in, got, want)
		}
	}
}
