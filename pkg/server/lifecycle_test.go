package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// serveTest runs an empty service with delay as its shutdown delay, logging
// at level into logs, and returns its addresses and its context's cancel.
func serveTest(t *testing.T, level slog.Level, delay time.Duration) (logs *syncBuffer, api, grpcAddr string, cancel context.CancelFunc, done chan error) {
	t.Helper()
	logs = &syncBuffer{}
	log := NewLogger(logs, config.Log{Level: level, Format: config.LogText})
	l, err := Listen(loopback())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan error, 1)
	go func() {
		done <- Serve(ctx, log, l, Service{
			Name:          "gatehouse.test.v1.TestService",
			Register:      func(grpc.ServiceRegistrar) {},
			ShutdownDelay: delay,
			Gateway: restfacade.Options{
				Register:  func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error { return nil },
				OpenAPI:   []byte(`{"paths":{}}`),
				ErrorBody: func(_ *http.Request, status int, msgs []string) any { return msgs },
			},
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return logs, "http://" + l.HTTP.Addr().String(), l.GRPC.Addr().String(), cancel, done
}

func healthOf(t *testing.T, grpcAddr, service string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("gRPC health check: %v", err)
	}
	return res.GetStatus()
}

// TestShutdownDelay: once the context ends, /readyz answers 503 "shutting
// down" and gRPC health NOT_SERVING at once, yet requests are still served
// (with Connection: close) until the delay has passed; then Serve returns.
func TestShutdownDelay(t *testing.T) {
	const delay = 700 * time.Millisecond
	_, api, grpcAddr, cancel, done := serveTest(t, slog.LevelInfo, delay)
	if code, _ := get(t, api+"/readyz"); code != 200 {
		t.Fatalf("/readyz before the stop: %d", code)
	}
	cancel()
	stopped := time.Now()
	for deadline := time.Now().Add(200 * time.Millisecond); ; time.Sleep(5 * time.Millisecond) {
		code, body := get(t, api+"/readyz")
		if code == 503 && body == `["shutting down"]` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after the stop: %d %s, want 503 shutting down at once", code, body)
		}
	}
	for _, svc := range []string{"", "gatehouse.test.v1.TestService"} {
		if got := healthOf(t, grpcAddr, svc); got != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("gRPC health %q during the delay: %v, want NOT_SERVING", svc, got)
		}
	}
	res, err := http.Get(api + "/healthz")
	if err != nil {
		t.Fatalf("a request during the delay was refused: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !res.Close {
		t.Errorf("during the delay: %d, Connection: close %v; want 200 and close", res.StatusCode, res.Close)
	}
	select {
	case err := <-done:
		if took := time.Since(stopped); took < delay-50*time.Millisecond {
			t.Errorf("Serve returned %v after the stop, before the %v delay", took, delay)
		}
		done <- err // for the cleanup
	case <-time.After(delay + ShutdownTimeout + 2*time.Second):
		t.Fatal("Serve did not return after the delay")
	}
}

// TestProbesLogAtDebug: health probes, readiness and metrics scrapes, REST
// and gRPC, are DEBUG lines: absent at the default level, present at debug;
// other requests stay INFO.
func TestProbesLogAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		logs, api, grpcAddr, _, _ := serveTest(t, level, 0)
		for _, p := range []string{"/healthz", "/readyz", "/metrics", "/nothing"} {
			get(t, api+p)
		}
		healthOf(t, grpcAddr, "")
		out := logs.String()
		for _, probe := range []string{"route=/healthz", "route=/readyz", "route=/metrics", "method=/grpc.health.v1.Health/Check"} {
			if got := strings.Contains(out, probe); got != (level == slog.LevelDebug) {
				t.Errorf("at level %v, a %s line logged: %v", level, probe, got)
			}
		}
		if !strings.Contains(out, "level=INFO msg=http component=http method=GET route=unmatched status=404") {
			t.Errorf("at level %v, the 404 is not an INFO line:\n%s", level, out)
		}
	}
}

// TestNewStoreLine: a start that creates its bbolt file says so right after
// the listening line, naming the absolute path; a start on an existing file
// does not.
func TestNewStoreLine(t *testing.T) {
	dir := t.TempDir()
	cfg := loopback()
	cfg.Store, cfg.DBPath = config.StoreBbolt, filepath.Join(dir, "typo", "studio.db")
	for _, exists := range []bool{false, true} {
		if exists {
			if err := os.MkdirAll(filepath.Dir(cfg.DBPath), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg.DBPath, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		l, err := Listen(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		l.logListening(slog.New(slog.NewTextHandler(&logs, nil)))
		l.Close()
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		said := len(lines) == 2 && strings.Contains(lines[1], "new store created at "+cfg.DBPath)
		if said == exists || !strings.Contains(lines[0], "listening: ") {
			t.Errorf("store file exists %v: logged\n%s", exists, logs.String())
		}
	}
}
