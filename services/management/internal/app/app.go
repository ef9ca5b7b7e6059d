// Package app assembles the management service: store, bootstrap
// credential, gRPC API and REST facade.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gatehouse/gatehouse/gen/openapi"
	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/backup"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/kv/kvopen"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/pkg/server"
	"github.com/gatehouse/gatehouse/services/management/internal/api"
	"github.com/gatehouse/gatehouse/services/management/internal/gatewayapi"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
	"github.com/gatehouse/gatehouse/services/management/internal/migration"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
	"github.com/gatehouse/gatehouse/services/management/internal/ui"
)

// Defaults are the management service's built-in addresses and store file (CONTRACT §0).
var Defaults = config.Defaults{HTTPAddr: "127.0.0.1:3000", GRPCAddr: "127.0.0.1:9000", DBPath: "data/management.db", Gateways: true}

// Serve opens the store, ensures the bootstrap admin and serves on l until
// ctx ends; the store is closed after both servers have stopped.
func Serve(ctx context.Context, log *slog.Logger, l *server.Listeners, cfg config.Config) error {
	engine, err := kvopen.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	auditLog, err := audit.New(engine, audit.Options{Service: "management", OpenAPI: openapi.Management, Limits: cfg.Audit, Log: log,
		Conceal: map[string]func(string) string{"key_id": keys.ObjectID}})
	if err != nil {
		engine.Close()
		return err
	}
	st, err := store.Open(ctx, audit.Engine(engine))
	if err != nil {
		err = fmt.Errorf("%s: %w", kvopen.Describe(cfg), err)
		engine.Close()
		return err
	}
	defer st.Close()
	defer auditLog.Start(ctx)() // expiry ends before the store closes
	writes := migration.DefaultWrites
	if cfg.Store == config.StoreBbolt {
		writes = migration.GroupCommitWrites // many writes share one fsync
	}
	records := apiRecords(st, cfg.Gateways)
	routes, stopGateways, err := serveGateways(ctx, log, st, records, auditLog, cfg.Gateways)
	if err != nil {
		return err
	}
	defer stopGateways()
	var gwAPI *gatewayapi.Client
	if cfg.Gateways.APIURL != "" {
		if gwAPI, err = gatewayapi.New(cfg.Gateways.APIURL, cfg.Gateways.APISecret); err != nil {
			return err
		}
	}
	srv := api.New(st, records, log, writes, auditLog, keys.New(st, gwAPI, log))
	marshal := protojson.MarshalOptions{EmitUnpopulated: true}
	return server.Serve(ctx, log, l, server.Service{
		Name:          managementv1.ManagementService_ServiceDesc.ServiceName,
		Limits:        cfg.Limits,
		ShutdownDelay: cfg.ShutdownDelay,
		Init: func(ctx context.Context, log *slog.Logger) error {
			if err := credential.Bootstrap(ctx, st, cfg.BootstrapToken, log, auditLog.BootstrapRetired); err != nil {
				return err
			}
			return ensurePortalUser(ctx, st, cfg.PortalUserKey, log, auditLog)
		},
		Auth:     srv.Authenticate,
		Audit:    auditLog.Interceptor(),
		Ready:    st.Ready,
		Register: func(g grpc.ServiceRegistrar) { managementv1.RegisterManagementServiceServer(g, srv) },
		Door:     srv.FrontDoor(),
		// the operations that carry API definitions, OAS documents, migration requests or page content
		LargeBodies: []string{"CreateAPI", "UpdateAPI", "CreateOASAPI", "UpdateOASAPI", "ImportOASAPI", "PatchOASAPI", "DryRunOASAPI", "Migrate"},
		Gateway: restfacade.Options{
			Register: func(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
				return managementv1.RegisterManagementServiceHandlerClient(ctx, mux, managementv1.NewManagementServiceClient(conn))
			},
			OpenAPI:      openapi.Management,
			Marshal:      marshal,
			ErrorBody:    errorBody,
			QueryInt:     api.QueryInt,
			RequestError: requestError,
			Authenticate: auditLog.REST(srv.AuthenticateREST),
			Plain:        append(routes, backup.Routes("/api", backup.Options{Service: "management", Engine: engine, Admin: srv.AuthenticateAdminREST, Audit: auditLog, Log: log})...),
			Pages: &restfacade.Pages{Prefix: ui.Prefix, New: func(conn grpc.ClientConnInterface) http.Handler {
				return ui.New(ui.Options{Conn: conn, Identify: identify(srv), Log: log, Now: uiClock})
			}},
			// a policy or asset id with a slash (default/jwt-policy, as Kubernetes tooling names
			// policies) is addressed as default%2Fjwt-policy (documentIDs turns the %2F back)
			SlashInParams: true,
			MuxOptions:    []runtime.ServeMuxOption{runtime.WithMarshalerOption(runtime.MIMEWildcard, newMarshaler(marshal))},
			Middlewares:   []runtime.Middleware{documentIDs},
		},
	})
}

// uiSkew moves the web UI's clock forward (tests expire sessions with it).
var uiSkew atomic.Int64

func uiClock() time.Time { return time.Now().Add(time.Duration(uiSkew.Load())) }

// identify is the web UI's view of a key's user; what it may do is
// decided by the service's own permission table (api.Permits).
func identify(srv *api.Server) func(ctx context.Context, key string) (ui.Identity, error) {
	return func(ctx context.Context, key string) (ui.Identity, error) {
		u, err := srv.Identify(ctx, key)
		if err != nil {
			return ui.Identity{}, err
		}
		perms := u.Permissions
		return ui.Identity{UserID: u.ID, Email: u.Email, Permissions: perms, Admin: store.IsAdmin(perms),
			May: func(rpc string) bool { return api.Permits(perms, rpc) }}, nil
	}
}

// documentIDs turns the %2F left in a policy_id or asset_id path parameter
// (restfacade.Options.SlashInParams) into the slash it stands for. An id
// never holds a % (api.checkDocumentID), so nothing else reads as one.
func documentIDs(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		for _, k := range []string{"policy_id", "asset_id"} {
			if v, ok := params[k]; ok && strings.Contains(v, "%") {
				params[k] = strings.ReplaceAll(strings.ReplaceAll(v, "%2F", "/"), "%2f", "/")
			}
		}
		next(w, r, params)
	}
}
