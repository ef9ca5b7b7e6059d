// Package api implements gatehouse.portal.v1.PortalService: the API
// products, tutorial pages, tags and categories of CONTRACT §3, over gRPC
// and, through the shared facade, REST (/portal-api).
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/liststream"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// TimeLayout is how the portal writes CreatedAt and UpdatedAt, always in UTC.
const TimeLayout = "2006-01-02 15:04"

// Paging defaults: Tyk's portal pages by 20; a page holds at most 1000.
const (
	defaultPerPage = 20
	maxPerPage     = 1000
)

var (
	errInternal = rest.Error(codes.Internal, http.StatusInternalServerError, "internal error")
	errBadPage  = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "page must be a positive integer")
	errBadSize  = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "per_page must be a positive integer")
)

// idKind names the errors of one kind of path ID.
type idKind struct {
	param            string // path template variable
	invalid, missing error
}

var (
	productID = idKind{"product_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid product ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "Product not found")}
	docID = idKind{"doc_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid tutorial page ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "Tutorial page not found")}
	tagID = idKind{"tag_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid tag ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "Tag not found")}
	categoryID = idKind{"category_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid category ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "Category not found")}
	pathIDs = []idKind{productID, docID, tagID, categoryID, planID, userID, appID, credentialID, requestID}
)

// Server serves PortalService from a store.
type Server struct {
	portalv1.UnimplementedPortalServiceServer
	store *store.Store
	cons  *consumers.Service
	audit *audit.Log
	log   *slog.Logger
	now   func() time.Time
}

// New returns a server over st and the consumer side cons, answering GET
// /portal-api/audit-logs from auditLog.
func New(st *store.Store, cons *consumers.Service, log *slog.Logger, auditLog *audit.Log) *Server {
	return &Server{store: st, cons: cons, audit: auditLog, log: log.With("component", "api"), now: time.Now}
}

// storeError maps the portal store's sentinels to the status a caller sees:
// the one place where they become answers. Validation errors made inside a
// store transaction pass through, and so does any other error, to the gRPC
// server's one map (grpcserver.CallerError): the kv engine's errors, and
// unexpected failures, logged and answered without their text.
func (s *Server) storeError(err error, notFound error) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if taken, ok := errors.AsType[*store.PathTakenError](err); ok {
		return invalid([]string{fmt.Sprintf("Path %s is already the path of tutorial page %d of this product", quote(taken.Path), taken.By)})
	}
	return err // the store's own and unexpected errors: grpcserver.CallerError
}

var decimal = regexp.MustCompile(`^[0-9]+$`)

// parseID reads an ID written in a path or a body. ok is false unless it is
// a positive decimal integer; exists is false for one that no record can
// have (above the uint32 range), which is answered as not found.
func parseID(s string) (id uint32, ok, exists bool) {
	if !decimal.MatchString(s) {
		return 0, false, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil { // digits, out of range: a positive integer no record has
		return 0, true, false
	}
	return uint32(n), n != 0, n != 0
}

// pathID reads a path ID of kind k: 400 unless a positive integer, 404 when
// no record can have it.
func pathID(s string, k idKind) (uint32, error) {
	id, ok, exists := parseID(s)
	switch {
	case !ok:
		return 0, k.invalid
	case !exists:
		return 0, k.missing
	}
	return id, nil
}

// paging turns page (from 1, default 1) and per_page (default 20, clamped
// to 1000) into an offset and a limit; a page past the end is empty.
func paging(pageN, perPageN *int64) (offset, limit int, err error) {
	page, size := int64(1), int64(defaultPerPage)
	if pageN != nil {
		if page = *pageN; page < 1 {
			return 0, 0, errBadPage
		}
	}
	if perPageN != nil {
		if size = *perPageN; size < 1 {
			return 0, 0, errBadSize
		}
	}
	limit = int(min(size, maxPerPage))
	page = min(page, 1<<32) // keeps the offset computable; such a page is empty
	return int(page-1) * limit, limit, nil
}

// QueryInt reads the REST query's page and per_page as the contract does:
// only decimal digits, a positive value, one too large for an int clamped.
func QueryInt(name, text string) (string, error) {
	if text == "" {
		return "", nil
	}
	n, err := positive(text)
	if err != nil {
		if name == "per_page" {
			return "", errBadSize
		}
		return "", errBadPage
	}
	return strconv.Itoa(n), nil
}

// positive reads a positive decimal integer; one too large for an int is
// clamped (it names a page past every record).
func positive(s string) (int, error) {
	if !decimal.MatchString(s) {
		return 0, strconv.ErrSyntax
	}
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) {
		return 1 << 40, nil
	}
	if err != nil || n < 1 {
		return 0, strconv.ErrSyntax
	}
	return n, nil
}

func formatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// invalid answers 422 with one message per problem.
func invalid(msgs []string) error {
	return rest.Errors(codes.InvalidArgument, http.StatusUnprocessableEntity, msgs)
}

// deleted answers a removal: 200 {"status":"ok"}.
const deleted = "ok"

// streamAll answers a REST request for a whole list whose answer is the
// bare array as it is read, not held (pkg/liststream): each calls item per
// record from one snapshot; a failure is answered through fail (the
// service's error mapping). It reports false for a gRPC call, which gets
// the whole message.
func (s *Server) streamAll(ctx context.Context, fail func(err, notFound error) error, each func(item func(proto.Message) error) error) bool {
	return liststream.Stream(ctx, func(w *liststream.Writer) error {
		err := w.Begin(nil, "", true)
		if err == nil {
			err = each(w.Item)
		}
		if err == nil {
			err = w.End()
		}
		if err != nil {
			return fail(err, errInternal)
		}
		return nil
	})
}
