package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// emptyService has no routes of its own; ready decides its readiness.
func emptyService(ready func(context.Context) error) ServeFunc {
	return func(ctx context.Context, log *slog.Logger, l *Listeners, _ config.Config) error {
		return Serve(ctx, log, l, Service{
			Name:     "gatehouse.test.v1.TestService",
			Register: func(grpc.ServiceRegistrar) {},
			Ready:    ready,
			Gateway: restfacade.Options{
				Register:  func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error { return nil },
				OpenAPI:   []byte(`{"paths":{}}`),
				ErrorBody: func(_ *http.Request, status int, msgs []string) any { return msgs },
			},
		})
	}
}

// run starts serve through Run with cfg and returns its log and a stop.
func run(t *testing.T, cfg config.Config, serve ServeFunc) (*syncBuffer, func()) {
	t.Helper()
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, slog.New(slog.NewTextHandler(logs, nil)), cfg, serve) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	return logs, stop
}

// addr waits for the log attribute name (such as http_addr) and returns it.
func addr(t *testing.T, logs *syncBuffer, name string) string {
	t.Helper()
	re := regexp.MustCompile(name + `=(\S+)`)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no %s in the log:\n%s", name, logs)
	return ""
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		res, err := http.Get(url)
		if err == nil {
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

// TestDebugListener: pprof and expvar answer on --debug-addr only, never on
// the API port; without --debug-addr there is no debug listener.
func TestDebugListener(t *testing.T) {
	logs, _ := run(t, config.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", DebugAddr: "127.0.0.1:0"}, emptyService(nil))
	api, debug := "http://"+addr(t, logs, "http_addr"), "http://"+addr(t, logs, "debug_addr")
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/vars"} {
		if code, _ := get(t, debug+p); code != 200 {
			t.Errorf("debug listener %s: %d, want 200", p, code)
		}
		if code, _ := get(t, api+p); code != 404 {
			t.Errorf("API port %s: %d, want 404", p, code)
		}
	}

	logs, _ = run(t, config.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"}, emptyService(nil))
	addr(t, logs, "http_addr")
	if bytes.Contains([]byte(logs.String()), []byte("debug_addr")) {
		t.Errorf("a debug listener without --debug-addr:\n%s", logs)
	}
}

// TestReadiness: /readyz and the gRPC health status follow the store.
func TestReadiness(t *testing.T) {
	prev := ReadyInterval
	ReadyInterval = 20 * time.Millisecond
	t.Cleanup(func() { ReadyInterval = prev })
	var down atomic.Bool
	ready := func(context.Context) error {
		if down.Load() {
			return errors.New("bolt: database not open")
		}
		return nil
	}
	logs, _ := run(t, config.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"}, emptyService(ready))
	api, grpcAddr := "http://"+addr(t, logs, "http_addr"), addr(t, logs, "grpc_addr")
	conn, err := grpc.NewClient("passthrough:///"+grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	overall := func() healthpb.HealthCheckResponse_ServingStatus {
		res, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetStatus()
	}
	status := func() healthpb.HealthCheckResponse_ServingStatus {
		res, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "gatehouse.test.v1.TestService"})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetStatus()
	}
	waitFor := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); status() != want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("gRPC health stays %v, want %v", status(), want)
			}
		}
	}

	if code, body := get(t, api+"/readyz"); code != 200 || body != `{"status":"ok"}` {
		t.Errorf("/readyz while ready: %d %s", code, body)
	}
	waitFor(healthpb.HealthCheckResponse_SERVING)
	down.Store(true)
	if code, body := get(t, api+"/readyz"); code != 503 || body != `["store unavailable"]` {
		t.Errorf("/readyz while the store fails: %d %s, want 503 in the service's error shape", code, body)
	}
	if code, _ := get(t, api+"/healthz"); code != 200 {
		t.Errorf("/healthz while the store fails: %d, want 200 (liveness)", code)
	}
	waitFor(healthpb.HealthCheckResponse_NOT_SERVING)
	if got := overall(); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("overall gRPC health (liveness) %v while the store fails, want SERVING", got)
	}
	down.Store(false)
	waitFor(healthpb.HealthCheckResponse_SERVING)
	if code, _ := get(t, api+"/readyz"); code != 200 {
		t.Errorf("/readyz after the store recovered: %d", code)
	}
}

// TestMetricsListener: with --metrics-addr, /metrics is served there alone
// and not on the API port; without it, on the API port.
func TestMetricsListener(t *testing.T) {
	logs, _ := run(t, config.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"}, emptyService(nil))
	api, metrics := "http://"+addr(t, logs, "http_addr"), "http://"+addr(t, logs, "metrics_addr")
	if code, body := get(t, metrics+"/metrics"); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Errorf("metrics listener /metrics: %d %.80s", code, body)
	}
	for _, p := range []string{"/healthz", "/openapi.json", "/"} {
		if code, _ := get(t, metrics+p); code != 404 {
			t.Errorf("metrics listener %s: %d, want 404", p, code)
		}
	}
	if code, _ := get(t, api+"/metrics"); code != 404 {
		t.Errorf("API port /metrics with --metrics-addr: %d, want 404", code)
	}

	logs, _ = run(t, config.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"}, emptyService(nil))
	if code, _ := get(t, "http://"+addr(t, logs, "http_addr")+"/metrics"); code != 200 {
		t.Errorf("API port /metrics without --metrics-addr: %d, want 200", code)
	}
}
