// Package app assembles the studio service: store, bootstrap credential,
// gRPC API and REST facade.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gatehouse/gatehouse/gen/openapi"
	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/backup"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/kv/kvopen"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/pkg/server"
	"github.com/gatehouse/gatehouse/services/studio/internal/api"
	"github.com/gatehouse/gatehouse/services/studio/internal/store"
)

// Defaults are the studio's built-in addresses and store file (CONTRACT §0).
var Defaults = config.Defaults{HTTPAddr: "127.0.0.1:8080", GRPCAddr: "127.0.0.1:9080", DBPath: "data/studio.db"}

// Serve opens the store (the engine --store names), ensures the bootstrap
// admin and serves on l until ctx ends; the engine is closed after both
// servers have stopped.
func Serve(ctx context.Context, log *slog.Logger, l *server.Listeners, cfg config.Config) error {
	engine, err := kvopen.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer engine.Close()
	auditLog, err := audit.New(engine, audit.Options{Service: "studio", OpenAPI: openapi.Studio, Limits: cfg.Audit, Log: log})
	if err != nil {
		err = fmt.Errorf("%s: %w", kvopen.Describe(cfg), err)
		return err
	}
	st, err := store.Open(ctx, audit.Engine(engine))
	if err != nil {
		return fmt.Errorf("%s: %w", kvopen.Describe(cfg), err)
	}
	defer auditLog.Start(ctx)() // expiry ends before the engine closes
	srv := api.New(st, log, auditLog)
	return server.Serve(ctx, log, l, server.Service{
		Name:          studiov1.StudioService_ServiceDesc.ServiceName,
		Limits:        cfg.Limits,
		ShutdownDelay: cfg.ShutdownDelay,
		Init: func(ctx context.Context, log *slog.Logger) error {
			return credential.Bootstrap(ctx, st, cfg.BootstrapToken, log, auditLog.BootstrapRetired)
		},
		Auth:     srv.Authenticate,
		Audit:    auditLog.Interceptor(),
		Door:     srv.FrontDoor(),
		Ready:    st.Ready,
		Register: func(g grpc.ServiceRegistrar) { studiov1.RegisterStudioServiceServer(g, srv) },
		Gateway: restfacade.Options{
			Register: func(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
				return studiov1.RegisterStudioServiceHandlerClient(ctx, mux, studiov1.NewStudioServiceClient(conn))
			},
			OpenAPI:      openapi.Studio,
			Marshal:      protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			ErrorBody:    errorBody,
			QueryInt:     api.QueryInt,
			Authenticate: auditLog.REST(srv.AuthenticateREST),
			Plain:        backup.Routes("/api/v1", backup.Options{Service: "studio", Engine: engine, Admin: srv.AuthenticateREST, Audit: auditLog, Log: log}),
		},
	})
}

// errorBody is the studio error shape: {"errors":[{"title","detail"}]}.
func errorBody(_ *http.Request, status int, msgs []string) any {
	type item struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	out := struct {
		Errors []item `json:"errors"`
	}{}
	for _, m := range msgs {
		out.Errors = append(out.Errors, item{Title: http.StatusText(status), Detail: m})
	}
	return out
}
