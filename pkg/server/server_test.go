package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// loopback is a configuration listening on free loopback ports.
func loopback() config.Config { return config.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"} }

func TestListenNamesRealAddressesFirst(t *testing.T) {
	var logs bytes.Buffer
	cfg := loopback()
	cfg.SiteAddr, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	l, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.logListening(slog.New(slog.NewTextHandler(&logs, nil)))
	first, _, _ := strings.Cut(logs.String(), "\n")
	for _, a := range []net.Addr{l.HTTP.Addr(), l.GRPC.Addr(), l.Site.Addr(), l.Metrics.Addr()} {
		if strings.HasSuffix(a.String(), ":0") || !strings.Contains(first, a.String()) {
			t.Errorf("first log line %q does not name the real address %s", first, a)
		}
	}
	for flag, c := range map[string]config.Config{
		"--http-addr":    {HTTPAddr: l.HTTP.Addr().String(), GRPCAddr: "127.0.0.1:0"},
		"--site-addr":    {HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SiteAddr: l.Site.Addr().String()},
		"--metrics-addr": {HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", MetricsAddr: l.Metrics.Addr().String()},
	} {
		if _, err := Listen(c); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("listening on a taken address: %v, want an error naming %s", err, flag)
		}
	}
}

// TestDefaultSiteAddrTaken: a --site-addr left at its default and held by
// another process (a second replica on one machine) moves to a free port.
func TestDefaultSiteAddrTaken(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cfg := loopback()
	cfg.SiteAddr, cfg.SiteAddrDefault = held.Addr().String(), true
	l, err := Listen(cfg)
	if err != nil {
		t.Fatalf("the default site address taken: %v, want a free port instead", err)
	}
	defer l.Close()
	if l.Site.Addr().String() == held.Addr().String() {
		t.Errorf("site listener on %s, the held address", l.Site.Addr())
	}
	for _, s := range []net.Listener{l.HTTP, l.GRPC, l.Site} { // all still open
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatalf("%s after the fallback: %v", s.Addr(), err)
		}
		c.Close()
		if c, err := s.Accept(); err != nil {
			t.Errorf("%s after the fallback: %v", s.Addr(), err)
		} else {
			c.Close()
		}
	}
}

// TestServeStopsGracefully starts a service with no routes of its own: the
// facade answers /healthz and 404 in the service's shape; cancelling the
// context makes Serve return nil and stop listening.
func TestServeStopsGracefully(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	l, err := Listen(loopback())
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.HTTP.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, log, l, Service{
			Name:     "gatehouse.test.v1.TestService",
			Register: func(grpc.ServiceRegistrar) {},
			Gateway: restfacade.Options{
				Register:  func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error { return nil },
				OpenAPI:   []byte(`{"paths":{}}`),
				ErrorBody: func(_ *http.Request, status int, msgs []string) any { return msgs },
			},
		})
	}()
	var res *http.Response
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if res, err = http.Get(base + "/healthz"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving: %v", err)
		}
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("/healthz: %d", res.StatusCode)
	}
	res, _ = http.Get(base + "/nothing")
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || string(body) != `["Not Found"]` {
		t.Errorf("unknown path: %d %s, want 404 in the service's error shape", res.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after cancel: %v", err)
		}
	case <-time.After(ShutdownTimeout + 2*time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after Serve returned")
	}
}

// TestStopDuringInit: a stop asked for while Init runs (SIGTERM right after
// the listening line) is a clean stop, not a failure.
func TestStopDuringInit(t *testing.T) {
	l, err := Listen(loopback())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = Serve(ctx, slog.New(slog.DiscardHandler), l, Service{
		Name:     "gatehouse.test.v1.TestService",
		Register: func(grpc.ServiceRegistrar) {},
		Init:     func(ctx context.Context, _ *slog.Logger) error { cancel(); <-ctx.Done(); return ctx.Err() },
		Gateway: restfacade.Options{
			Register:  func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error { return nil },
			OpenAPI:   []byte(`{"paths":{}}`),
			ErrorBody: func(_ *http.Request, status int, msgs []string) any { return msgs },
		},
	})
	if err != nil {
		t.Errorf("Serve stopped during Init: %v, want nil", err)
	}
}
