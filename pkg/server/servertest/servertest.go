// Package servertest runs a service in-process for tests: real REST and gRPC
// servers on 127.0.0.1:0, a gRPC client connection, and an orderly stop.
package servertest

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/server"
)

// Instance is one running service.
type Instance struct {
	// Base is the REST facade's URL, http://127.0.0.1:port.
	Base string
	// Site is the public site's URL (WithSite), else "".
	Site string
	// Metrics is the metrics listener's URL (WithMetrics), else "".
	Metrics string
	// Conn is a gRPC client connection to the service.
	Conn    *grpc.ClientConn
	tb      testing.TB
	stop    context.CancelFunc
	done    chan error
	stopped bool
}

// Start serves on loopback ports with the store at db and the bootstrap
// token, waits until /healthz answers 200, and stops the service when the
// test ends (or when Stop is called). Options change the rest of the
// settings (limits, say).
func Start(tb testing.TB, serve server.ServeFunc, db, token string, options ...func(*config.Config)) *Instance {
	tb.Helper()
	log := slog.New(slog.DiscardHandler)
	cfg := config.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", DBPath: db, BootstrapToken: token}
	for _, o := range options {
		o(&cfg)
	}
	l, err := server.Listen(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.HTTPAddr, cfg.GRPCAddr = l.HTTP.Addr().String(), l.GRPC.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	in := &Instance{Base: "http://" + cfg.HTTPAddr, tb: tb, stop: cancel, done: make(chan error, 1)}
	if l.Site != nil {
		cfg.SiteAddr = l.Site.Addr().String()
		in.Site = "http://" + cfg.SiteAddr
	}
	if l.Metrics != nil {
		cfg.MetricsAddr = l.Metrics.Addr().String()
		in.Metrics = "http://" + cfg.MetricsAddr
	}
	go func() {
		defer l.Close()
		in.done <- serve(ctx, log, l, cfg)
	}()
	if in.Conn, err = grpc.NewClient("passthrough:///"+cfg.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(in.Stop)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		res, err := http.Get(in.Base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return in
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the service did not become healthy: %v", err)
		}
	}
}

// WithSite gives the service a public site listener on a free loopback port
// (Instance.Site).
func WithSite(c *config.Config) { c.SiteAddr = "127.0.0.1:0" }

// WithMetrics serves /metrics on a listener of its own (Instance.Metrics).
func WithMetrics(c *config.Config) { c.MetricsAddr = "127.0.0.1:0" }

// Stop shuts the service down gracefully and reports an error from it; a
// second call does nothing.
func (in *Instance) Stop() {
	if in.stopped {
		return
	}
	in.stopped = true
	in.Conn.Close()
	in.stop()
	if err := <-in.done; err != nil {
		in.tb.Errorf("serve: %v", err)
	}
}
