// Package api implements gatehouse.management.v1.ManagementService: users
// and permissions, classic and Tyk OAS API definitions, categories and
// export (CONTRACT §2), over gRPC and, through the shared facade, REST.
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
	"github.com/gatehouse/gatehouse/services/management/internal/migration"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Messages and statuses of CONTRACT §2.
var (
	errUnauthorized      = rest.Error(codes.Unauthenticated, http.StatusUnauthorized, "Not authorised")
	errAPINotFound       = rest.Error(codes.NotFound, http.StatusNotFound, "API not found")
	errMalformedAPI      = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Malformed API data")
	errNameRequired      = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "API name is required")
	errClassicIsOAS      = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "api_definition.is_oas: a classic API definition cannot be is_oas true; create a Tyk OAS API at /api/apis/oas")
	errSameID            = rest.Error(codes.AlreadyExists, http.StatusConflict, "Found API with the same ID")
	errUseOAS            = rest.Error(codes.FailedPrecondition, http.StatusBadRequest, "Use the OAS API endpoints for this API")
	errNoExtension       = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "The payload should contain x-tyk-api-gateway")
	errCategoriesCorrupt = rest.Error(codes.Internal, http.StatusInternalServerError, "Failed to marshal categories payload.")
	errNoExport          = rest.Error(codes.FailedPrecondition, http.StatusBadRequest, "Could not retrieve API detail.")
	errUserExists        = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "User email already exists")
	errUserInvalid       = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "User object validation failed.")
	errUserNotFound      = rest.Error(codes.NotFound, http.StatusNotFound, "User not found")
	errBadPage           = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "p must be an integer")
	errInternal          = rest.Error(codes.Internal, http.StatusInternalServerError, "internal error")
)

func badRequest(msg string) error {
	return rest.Error(codes.InvalidArgument, http.StatusBadRequest, msg)
}

// Metadata grpc-gateway forwards itself.
const (
	contentTypeKey = "grpcgateway-content-type"
	acceptKey      = "grpcgateway-accept"
)

// Server serves ManagementService from a store.
type Server struct {
	managementv1.UnimplementedManagementServiceServer
	store     *store.Store
	records   *apirecord.Maker
	migration *migration.Engine
	audit     *audit.Log
	keys      *keys.Service
	log       *slog.Logger

	categoriesJSON kv.Memo[[]byte] // ListCategories' REST answer, by store revision
}

// New returns a server over st, whose API records records makes, whose
// migrations keep up to migrationWrites per-API write transactions open at
// once (see migration.New), answering GET /api/audit-logs from auditLog and
// the key routes through keySvc.
func New(st *store.Store, records *apirecord.Maker, log *slog.Logger, migrationWrites int, auditLog *audit.Log, keySvc *keys.Service) *Server {
	return &Server{store: st, records: records, migration: migration.New(st, records, log, migrationWrites), audit: auditLog, keys: keySvc, log: log.With("component", "api")}
}

// storeError is the one place where the domain's errors (the store's
// sentinels, the migration engine's refusals) become the statuses a caller
// sees. notFound is the call's answer for an API it cannot find, which
// includes an API of the other kind on the OAS endpoints. Any other error
// goes on as it is, to the gRPC server's one map (grpcserver.CallerError):
// the kv engine's errors, and unexpected failures, logged and answered
// without their text.
func (s *Server) storeError(err error, notFound error) error {
	var reqErr *migration.RequestError
	var otherAPI *otherAPIError
	if st, ok := status.FromError(err); ok {
		if _, _, ours := rest.Detail(st); ours {
			return err // a handler's own refusal, made inside a transaction
		}
	}
	switch {
	case errors.Is(err, store.ErrLastAdmin):
		return errLastAdmin
	case errors.As(err, &reqErr):
		return badRequest(reqErr.Msg)
	case errors.As(err, &otherAPI):
		return badRequest(otherAPI.Error())
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrNotOAS):
		return notFound
	case errors.Is(err, store.ErrNotClassic):
		return errUseOAS
	case errors.Is(err, store.ErrAlreadyExists):
		return errSameID
	case errors.Is(err, store.ErrConflict):
		return errUserExists
	}
	return err // the kv engine's errors and unexpected ones: grpcserver.CallerError
}

// incoming returns the last value of an incoming metadata key.
func incoming(ctx context.Context, key string) string {
	v := metadata.ValueFromIncomingContext(ctx, key)
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// pageSize is the page length of every list.
const pageSize = 10

// paging reads p: unset means 1, 0 or negative means everything.
func paging(p *int64) (offset, limit int, err error) { return pagingBy(p, pageSize) }

// pagingBy is paging with pages of size.
func pagingBy(p *int64, size int) (offset, limit int, err error) {
	if p == nil {
		return 0, size, nil
	}
	n := *p
	if n <= 0 {
		return 0, -1, nil
	}
	return (int(min(n, 1<<30)) - 1) * size, size, nil
}

// QueryInt reads the REST query's p (and the API search's page_size) as
// the contract does: surrounding spaces are ignored and text that is not
// an integer is refused, naming the parameter.
func QueryInt(name, text string) (string, error) {
	if text == "" {
		return "", nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(text))
	switch {
	case err != nil && name != "p":
		return "", badRequest(name + " must be an integer")
	case err != nil:
		return "", errBadPage
	}
	return strconv.Itoa(n), nil
}

func pages(total int) int32 { return pagesOf(total, pageSize) }

// pagesOf is how many pages of size total items fill.
func pagesOf(total, size int) int32 { return int32((total + size - 1) / size) }

// checkAPIID refuses API IDs that a REST path cannot carry back: empty,
// over 255 bytes, not UTF-8, or holding /, ?, #, %, quotes, backslashes,
// spaces or control characters.
func checkAPIID(field, id string) error { return checkID(field, id, `/?#%"\`) }

// checkDocumentID is checkAPIID for policy and asset ids, which may hold a
// slash as Tyk accepts them (default/jwt-policy, written by Kubernetes
// tooling): the REST path addresses one as default%2Fjwt-policy.
func checkDocumentID(field, id string) error { return checkID(field, id, `?#%"\`) }

// checkID refuses an empty id, one over 255 bytes, not UTF-8, or holding
// spaces, control characters or any rune of refused.
func checkID(field, id, refused string) error {
	switch {
	case id == "":
		return badRequest(field + " must not be empty")
	case len(id) > 255:
		return badRequest(field + " must be at most 255 bytes")
	case !utf8.ValidString(id):
		return badRequest(field + " must be UTF-8 text")
	}
	for _, r := range id {
		if strings.ContainsRune(refused, r) || unicode.IsSpace(r) || unicode.IsControl(r) {
			return badRequest(field + " must not contain spaces, control characters or any of " + strings.Join(strings.Split(refused, ""), " "))
		}
	}
	return nil
}

// incomingAll returns every value of an incoming metadata key.
func incomingAll(ctx context.Context, key string) []string {
	return metadata.ValueFromIncomingContext(ctx, key)
}
