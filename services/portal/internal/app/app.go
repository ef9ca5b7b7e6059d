// Package app assembles the portal service: store, bootstrap credential,
// gRPC API, REST facade (/portal-api) and the public pages (the site
// listener, --site-addr, CONTRACT §3).
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/gatehouse/gatehouse/gen/openapi"
	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/backup"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/kv/kvopen"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/pkg/server"
	"github.com/gatehouse/gatehouse/services/portal/internal/api"
	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
	"github.com/gatehouse/gatehouse/services/portal/internal/devsite"
	"github.com/gatehouse/gatehouse/services/portal/internal/management"
	"github.com/gatehouse/gatehouse/services/portal/internal/site"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// Defaults are the portal's built-in addresses and store file (CONTRACT §0).
var Defaults = config.Defaults{HTTPAddr: "127.0.0.1:3001", GRPCAddr: "127.0.0.1:9001", DBPath: "data/portal.db", SiteAddr: "127.0.0.1:3002", Consumers: true}

// Serve opens the store (the engine --store names), ensures the bootstrap
// admin key and serves on l until ctx ends; the engine is closed after both
// servers have stopped.
func Serve(ctx context.Context, log *slog.Logger, l *server.Listeners, cfg config.Config) error {
	engine, err := kvopen.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer engine.Close()
	auditLog, err := audit.New(engine, audit.Options{Service: "portal", OpenAPI: openapi.Portal, Limits: cfg.Audit, Log: log})
	if err != nil {
		err = fmt.Errorf("%s: %w", kvopen.Describe(cfg), err)
		return err
	}
	st, err := store.Open(ctx, audit.Engine(engine))
	if err != nil {
		return fmt.Errorf("%s: %w", kvopen.Describe(cfg), err)
	}
	defer auditLog.Start(ctx)() // expiry ends before the engine closes
	keys, closeKeys, err := managementKeys(cfg.Consumers)
	if err != nil {
		return err
	}
	defer closeKeys()
	cons := consumers.New(st, consumers.Options{Signup: cfg.Consumers.DeveloperSignup, Keys: keys, Log: log})
	srv := api.New(st, cons, log, auditLog)
	pages, err := site.New(st, log)
	if err != nil {
		return err
	}
	public := http.NewServeMux()
	dev := devsite.New(cons, log)
	for _, pattern := range devsite.Routes {
		public.Handle(pattern, dev)
	}
	public.Handle("/", pages)
	marshaler := api.NewMarshaler()
	// The facade's mux, known once Register runs (before any request), so
	// that the precheck middleware answers through the facade's error handler.
	var mux *runtime.ServeMux
	fail := func(w http.ResponseWriter, r *http.Request, err error) {
		runtime.HTTPError(r.Context(), mux, marshaler, w, r, err)
	}
	return server.Serve(ctx, log, l, server.Service{
		Name:          portalv1.PortalService_ServiceDesc.ServiceName,
		Limits:        cfg.Limits,
		ShutdownDelay: cfg.ShutdownDelay,
		Init: func(ctx context.Context, log *slog.Logger) error {
			if err := credential.Bootstrap(ctx, st, cfg.BootstrapToken, log, auditLog.BootstrapRetired); err != nil {
				return err
			}
			go reconcile(ctx, cons, log)
			go sweepSessions(ctx, cons, log)
			go pages.RenderStored(ctx) // pages stored before they were rendered when written
			return nil
		},
		Auth:     srv.Authenticate,
		Audit:    auditLog.Interceptor(),
		Ready:    st.Ready,
		Site:     public,
		Register: func(g grpc.ServiceRegistrar) { portalv1.RegisterPortalServiceServer(g, srv) },
		Door:     srv.FrontDoor(),
		// the operations that carry API definitions, OAS documents, migration requests or page content
		LargeBodies: []string{"CreateTutorialPage", "UpdateTutorialPage"},
		Gateway: restfacade.Options{
			Register: func(ctx context.Context, m *runtime.ServeMux, conn grpc.ClientConnInterface) error {
				mux = m
				return portalv1.RegisterPortalServiceHandlerClient(ctx, m, portalv1.NewPortalServiceClient(conn))
			},
			OpenAPI:      openapi.Portal,
			Marshal:      api.MarshalOptions,
			ErrorBody:    errorBody,
			QueryInt:     api.QueryInt,
			RequestError: api.RequestError,
			Authenticate: auditLog.REST(srv.AuthenticateREST),
			Plain:        backup.Routes("/portal-api", backup.Options{Service: "portal", Engine: engine, Admin: srv.AuthenticateREST, Audit: auditLog, Log: log}),
			MuxOptions:   []runtime.ServeMuxOption{runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler)},
			Middlewares:  []runtime.Middleware{srv.Precheck(fail)},
		},
	})
}

// errorBody is the portal error shape: {"errors":[<sentence>, ...]}.
func errorBody(_ *http.Request, _ int, msgs []string) any {
	return struct {
		Errors []string `json:"errors"`
	}{Errors: msgs}
}

// managementKeys is the management client the consumer side calls, or nil
// without --management-grpc-addr (the routes that need it answer 503).
func managementKeys(c config.Consumers) (consumers.Keys, func(), error) {
	if c.ManagementGRPCAddr == "" {
		return nil, func() {}, nil
	}
	cl, err := management.Dial(c.ManagementGRPCAddr, c.ManagementKey, management.TLS{CAFile: c.ManagementCAFile, CertFile: c.ManagementCertFile, KeyFile: c.ManagementKeyFile})
	if err != nil {
		return nil, nil, err
	}
	return cl, func() { cl.Close() }, nil
}

// reconcile repairs keys and credentials at start (consumers.Reconcile),
// trying again every reconcileRetry while management does not answer.
func reconcile(ctx context.Context, cons *consumers.Service, log *slog.Logger) {
	for {
		err := cons.Reconcile(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		log.Warn("consumer keys not reconciled; trying again", "err", err, "in", reconcileRetry)
		select {
		case <-time.After(reconcileRetry):
		case <-ctx.Done():
			return
		}
	}
}

const reconcileRetry = 30 * time.Second

// sweepSessions removes idle developer sessions every consumers.SweepEvery.
func sweepSessions(ctx context.Context, cons *consumers.Service, log *slog.Logger) {
	t := time.NewTicker(consumers.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := cons.ExpireSessions(ctx); err != nil && ctx.Err() == nil {
				log.Warn("idle sessions not removed", "err", err)
			}
		case <-ctx.Done():
			return
		}
	}
}
