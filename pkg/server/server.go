// Package server runs a Gatehouse service: it listens, names the real
// addresses in the first log line, serves gRPC and the REST facade, and on
// cancellation shuts down in order — /readyz and gRPC health NOT_SERVING at
// once, serving on for Service.ShutdownDelay so that load balancers stop
// sending, then the listeners closed and HTTP and gRPC drained side by side,
// each within its own budget (HTTPDrainTimeout, GRPCDrainTimeout), then
// returns so the caller can close its store.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/pkg/inflight"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// The drain budgets: how long in-flight REST requests and gRPC calls may
// finish once the listeners are closed; past its budget a server is closed
// and its remaining requests cut. They run side by side, so ShutdownTimeout,
// the longer, bounds the drain (CONTRACT §0: up to 10 s).
const (
	HTTPDrainTimeout = 10 * time.Second
	GRPCDrainTimeout = 10 * time.Second
	ShutdownTimeout  = max(HTTPDrainTimeout, GRPCDrainTimeout)
)

// Service is what a service plugs into the shared server.
type Service struct {
	Name string
	// Auth authenticates every call of the service's own gRPC methods.
	Auth grpcserver.AuthFunc
	// Audit, when set, is the audit log's interceptor (pkg/audit), run
	// around authentication.
	Audit grpc.UnaryServerInterceptor
	// Register adds the service's gRPC implementation.
	Register func(grpc.ServiceRegistrar)
	// Ready reports whether the store answers. It drives /readyz and the
	// gRPC health status (NOT_SERVING while it fails); nil means always ready.
	Ready func(ctx context.Context) error
	// Gateway describes the REST facade; it calls the service in-process
	// (grpcserver.Local) through the same interceptors as a gRPC client, so
	// Auth, metrics, logging and recovery apply to REST calls too.
	Gateway restfacade.Options
	// Limits bound what clients can hold of the service (cfg.Limits);
	// zero fields take the defaults.
	Limits config.Limits
	// Init, when set, runs after the listening line is logged and before the
	// first request is served (the bootstrap credential, whose generated
	// secret is logged after that line). An error stops the start.
	Init func(ctx context.Context, log *slog.Logger) error
	// Site, when set, is the service's public site, served on l.Site with
	// its own connection and request caps (the portal's, CONTRACT §3).
	Site http.Handler
	// ShutdownDelay is how long the service keeps serving after ctx ends,
	// /readyz and gRPC health NOT_SERVING, before it closes its listeners
	// (cfg.ShutdownDelay).
	ShutdownDelay time.Duration
	// Door authenticates gRPC streams before their message is read
	// (grpcserver.FrontDoor); nil leaves it to Auth alone.
	Door *grpcserver.FrontDoor
	// LargeBodies names the methods whose requests may take
	// bodylimit.Large (API definitions, OAS documents, migration requests,
	// page content); every other takes bodylimit.Small, on REST and gRPC.
	LargeBodies []string
}

// The defaults of config.Limits. A 16 MiB body on a slow link (64 KiB/s)
// takes 256 s: the facade gives each body its own deadline by its length
// (restfacade.DefaultBodyGrace, restfacade.DefaultMinBodyRate); the server's
// read timeout is the bound for the largest, the write timeout leaves the
// handler and the answer as long again.
const (
	DefaultMaxConns          = 4096
	DefaultMaxConnsPerIP     = 64
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultWriteTimeout      = 10 * time.Minute
)

func withDefaults(l config.Limits) config.Limits {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxConnsPerIP <= 0 {
		l.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	set(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&l.IdleTimeout, DefaultIdleTimeout)
	set(&l.WriteTimeout, DefaultWriteTimeout)
	if l.GRPCMaxStreams <= 0 {
		l.GRPCMaxStreams = grpcserver.MaxConcurrentStreams
	}
	set(&l.GRPCPingMinTime, grpcserver.PingMinTime)
	set(&l.BodyGrace, restfacade.DefaultBodyGrace)
	if l.MinBodyRate <= 0 {
		l.MinBodyRate = restfacade.DefaultMinBodyRate
	}
	return l
}

// ReadyInterval is how often the gRPC health status follows Service.Ready.
var ReadyInterval = 5 * time.Second

// Serve runs until ctx is cancelled or a server fails, then shuts down; it
// closes l.
func Serve(ctx context.Context, log *slog.Logger, l *Listeners, svc Service) error {
	defer l.Close()
	l.logListening(log)
	if svc.Init != nil {
		if err := svc.Init(ctx, log); err != nil {
			if ctx.Err() != nil {
				return nil // asked to stop before serving: a clean stop
			}
			return err
		}
	}
	limits := withDefaults(svc.Limits)
	budget := inflight.New(int64(limits.MaxInFlightBytes), 0)
	bodies := bodylimit.New(svc.LargeBodies...)
	grpcOpts := []grpc.ServerOption{grpc.MaxConcurrentStreams(uint32(limits.GRPCMaxStreams)),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: limits.GRPCPingMinTime, PermitWithoutStream: true})}
	guards := grpcserver.Guards{Door: svc.Door, Budget: budget, Limits: bodies, MessageTimeout: limits.GRPCMessageTimeout}
	if l.GRPCTLS != nil {
		guards.Creds = credentials.NewTLS(l.GRPCTLS)
	}
	srv := grpcserver.New(log, svc.Auth, svc.Audit, guards, grpcOpts...)
	grpcSrv, health := srv.GRPC, srv.Health
	svc.Register(srv)
	health.SetServingStatus(svc.Name, healthpb.HealthCheckResponse_SERVING)

	gwCtx, stopGateway := context.WithCancel(context.WithoutCancel(ctx))
	defer stopGateway()
	gwOpts := svc.Gateway
	gwOpts.Limits = restfacade.Limits{MaxInFlight: limits.MaxInFlight, BodyGrace: limits.BodyGrace, MinBodyRate: limits.MinBodyRate,
		Budget: budget, Bodies: bodies}
	var draining atomic.Bool
	gwOpts.Ready = readiness(&draining, svc.Ready)
	gwOpts.NoMetrics = l.Metrics != nil
	if gwOpts.Service == "" {
		gwOpts.Service = svc.Name
	}
	if gwOpts.Log == nil {
		gwOpts.Log = log
	}
	handler, err := restfacade.New(gwCtx, srv.Local, gwOpts)
	if err != nil {
		return err
	}
	httpSrv := newHTTPServer(log, closeWhenDraining(&draining, handler), limits, limits.ReadHeaderTimeout+limits.BodyGrace+restfacade.MaxBody*time.Second/time.Duration(limits.MinBodyRate))
	refusal := func(msg string) []byte {
		body, _ := json.Marshal(svc.Gateway.ErrorBody(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/"}}, http.StatusServiceUnavailable, []string{msg}))
		return rawResponse(http.StatusServiceUnavailable, http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}}, body)
	}
	httpL := l.capped(l.HTTP, limits,
		refusal("server busy: too many connections, retry later"), refusal("server busy: too many connections from your address, retry later"))
	grpcL := newCapListener(l.GRPC, limits.MaxConns, limits.MaxConnsPerIP, nil, nil)
	aux := auxServers(log, l, svc, limits)

	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); followReadiness(watchCtx, log, svc, health) }()
	defer func() { stopWatch(); <-watched }()

	failed := make(chan error, 2+len(aux))
	go func() { failed <- grpcSrv.Serve(grpcL) }()
	for _, s := range append(aux, httpServer{httpSrv, httpL}) {
		go func() {
			if err := s.srv.Serve(s.l); !errors.Is(err, http.ErrServerClosed) {
				failed <- err
			}
		}()
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-failed:
		log.Error("server failed", "err", serveErr)
	}

	stopWatch()
	<-watched
	draining.Store(true)
	health.Shutdown() // every status NOT_SERVING, for good
	if serveErr == nil && svc.ShutdownDelay > 0 {
		log.Info("shutting down: /readyz and gRPC health NOT_SERVING; serving on for the shutdown delay", "shutdown_delay", svc.ShutdownDelay)
		select {
		case <-time.After(svc.ShutdownDelay):
		case serveErr = <-failed:
			log.Error("server failed", "err", serveErr)
		}
	}
	drain(log, grpcSrv, append(aux, httpServer{httpSrv, httpL}))
	return serveErr
}

// readiness is /readyz's check: the service's own, and not ready once the
// service drains.
func readiness(draining *atomic.Bool, ready func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if draining.Load() {
			return restfacade.ErrShuttingDown
		}
		if ready == nil {
			return nil
		}
		return ready(ctx)
	}
}

// drain lets the calls and requests in progress finish, within
// HTTPDrainTimeout and GRPCDrainTimeout, then closes what is left.
func drain(log *slog.Logger, grpcSrv *grpc.Server, servers []httpServer) {
	log.Info("shutting down: listeners closed, draining", "http_drain", HTTPDrainTimeout, "grpc_drain", GRPCDrainTimeout)
	drainHTTP := make(chan struct{})
	go func() {
		defer close(drainHTTP)
		drain, cancel := context.WithTimeout(context.Background(), HTTPDrainTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for _, s := range servers {
			wg.Go(func() {
				if err := s.srv.Shutdown(drain); err != nil {
					log.Warn("HTTP drain budget spent: closing the remaining connections", "err", err)
					s.srv.Close()
				}
			})
		}
		wg.Wait()
	}()
	stopped := make(chan struct{})
	go func() { grpcSrv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(GRPCDrainTimeout):
		log.Warn("gRPC drain budget spent: closing the remaining calls")
		grpcSrv.Stop()
		<-stopped
	}
	<-drainHTTP
}

// closeWhenDraining answers Connection: close once the service drains, so
// that a client opens a new connection for its next request, which a
// balancer no longer sends here. (http.Server.SetKeepAlivesEnabled(false)
// would also close the idle connections at once, racing the requests their
// clients are sending on them.)
func closeWhenDraining(draining *atomic.Bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// followReadiness sets the service's gRPC health status from svc.Ready
// every ReadyInterval until ctx ends: NOT_SERVING while the store does not
// answer. The server's overall status ("") stays SERVING: it is the
// liveness probe's, and a store outage is no reason to restart.
func followReadiness(ctx context.Context, log *slog.Logger, svc Service, health *health.Server) {
	if svc.Ready == nil {
		return
	}
	tick := time.NewTicker(ReadyInterval)
	defer tick.Stop()
	ready := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		check, cancel := context.WithTimeout(ctx, restfacade.ReadyTimeout)
		err := svc.Ready(check)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if now := err == nil; now != ready {
			ready = now
			st := healthpb.HealthCheckResponse_SERVING
			if !ready {
				st = healthpb.HealthCheckResponse_NOT_SERVING
				log.Warn("store does not answer: gRPC health NOT_SERVING", "err", err)
			} else {
				log.Info("store answers again: gRPC health SERVING")
			}
			health.SetServingStatus(svc.Name, st)
		}
	}
}
