// Package api implements gatehouse.studio.v1.StudioService: the LLM settings
// records and studio users of CONTRACT §1, over gRPC and, through the shared
// facade, REST.
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/studio/internal/store"
)

const (
	llmType   = "llm-settings"
	userType  = "users"
	llmPrefix = "/api/v1/llm-settings/"
)

// Errors with the contract's exact messages.
var (
	errInvalidLlmID = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid LLM Settings ID")
	errLlmNotFound  = rest.Error(codes.NotFound, http.StatusNotFound, "LLM Settings not found")
	errInvalidUser  = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid user ID")
	errUserNotFound = rest.Error(codes.NotFound, http.StatusNotFound, "User not found")
	errBadPage      = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid page number")
)

// Server serves StudioService from a store.
type Server struct {
	studiov1.UnimplementedStudioServiceServer
	store *store.Store
	audit *audit.Log
	log   *slog.Logger
}

// New returns a server over st, answering GET /api/v1/audit-logs from auditLog.
func New(st *store.Store, log *slog.Logger, auditLog *audit.Log) *Server {
	return &Server{store: st, audit: auditLog, log: log.With("component", "api")}
}

// status maps the service's own errors (a request check, a missing record)
// to the status a caller sees, in one place: notFound is the resource's 404
// (nil where a missing record is unexpected). Any other error goes on as it
// is, to the gRPC server's one map (grpcserver.CallerError): the store's
// errors, and unexpected failures, logged and answered without their text.
func (s *Server) status(err error, notFound error) error {
	var inv *invalidError
	switch {
	case errors.As(err, &inv):
		return rest.Error(codes.InvalidArgument, http.StatusBadRequest, inv.msg)
	case errors.Is(err, store.ErrNotFound) && notFound != nil:
		return notFound
	}
	return err // the store's own and unexpected errors: grpcserver.CallerError
}

var decimal = regexp.MustCompile(`^[0-9]+$`)

// parseID reads a path id: decimal digits, 1 to 4294967295.
func parseID(s string) (uint32, bool) {
	if !decimal.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, false
	}
	return uint32(n), true
}

func (s *Server) CreateLlmSettings(ctx context.Context, req *studiov1.CreateLlmSettingsRequest) (*studiov1.CreateLlmSettingsResponse, error) {
	var rec store.LlmSettings
	if err := applyChanges(&rec, req.GetData().GetAttributes()); err != nil {
		return nil, s.status(err, nil)
	}
	rec, err := s.store.CreateLlmSettings(ctx, rec)
	if err != nil {
		return nil, s.status(err, nil)
	}
	rest.SetStatus(ctx, http.StatusCreated)
	rest.SetHeader(ctx, "Location", llmPrefix+strconv.FormatUint(uint64(rec.ID), 10))
	return &studiov1.CreateLlmSettingsResponse{Data: llmRecord(rec)}, nil
}

func (s *Server) ListLlmSettings(ctx context.Context, req *studiov1.ListLlmSettingsRequest) (*studiov1.ListLlmSettingsResponse, error) {
	page, size, err := paging(req.Page, req.PageSize)
	if err != nil {
		return nil, err
	}
	recs, total, err := s.store.ListLlmSettings(ctx, int((page-1)*size), int(size))
	if err != nil {
		return nil, s.status(err, nil)
	}
	rest.SetHeader(ctx, "X-Total-Count", strconv.Itoa(total))
	rest.SetHeader(ctx, "X-Total-Pages", strconv.Itoa((total+int(size)-1)/int(size)))
	resp := &studiov1.ListLlmSettingsResponse{Data: make([]*studiov1.LlmSettings, 0, len(recs))}
	for _, r := range recs {
		resp.Data = append(resp.Data, llmRecord(r))
	}
	return resp, nil
}

// paging reads page (≥ 1, default 1) and page_size (clamped to 1–100,
// default 10).
func paging(pageN, sizeN *int64) (page, size int64, err error) {
	page = 1
	if pageN != nil {
		if page = *pageN; page < 1 {
			return 0, 0, errBadPage
		}
	}
	size = 10
	if sizeN != nil {
		size = min(max(*sizeN, 1), 100)
	}
	// Keep the offset computable: a page past every possible record is simply empty.
	page = min(page, 1<<32)
	return page, size, nil
}

// QueryInt reads the REST query's page and page_size as the contract does:
// a page that is not a number is refused like one below 1, a page_size
// that is not a number means the default.
func QueryInt(name, text string) (string, error) {
	if text == "" {
		return "", nil
	}
	n, err := strconv.ParseInt(text, 10, 64)
	switch {
	case err == nil:
		return strconv.FormatInt(n, 10), nil
	case name == "page":
		return "", errBadPage
	default:
		return "", nil
	}
}

func (s *Server) GetLlmSettings(ctx context.Context, req *studiov1.GetLlmSettingsRequest) (*studiov1.GetLlmSettingsResponse, error) {
	id, ok := parseID(req.GetId())
	if !ok {
		return nil, errInvalidLlmID
	}
	rec, err := s.store.GetLlmSettings(ctx, id)
	if err != nil {
		return nil, s.status(err, errLlmNotFound)
	}
	return &studiov1.GetLlmSettingsResponse{Data: llmRecord(rec)}, nil
}

func (s *Server) UpdateLlmSettings(ctx context.Context, req *studiov1.UpdateLlmSettingsRequest) (*studiov1.UpdateLlmSettingsResponse, error) {
	id, ok := parseID(req.GetId())
	if !ok {
		return nil, errInvalidLlmID
	}
	rec, err := s.store.UpdateLlmSettings(ctx, id, func(rec *store.LlmSettings) error {
		return applyChanges(rec, req.GetData().GetAttributes())
	})
	if err != nil {
		return nil, s.status(err, errLlmNotFound)
	}
	return &studiov1.UpdateLlmSettingsResponse{Data: llmRecord(rec)}, nil
}

func (s *Server) DeleteLlmSettings(ctx context.Context, req *studiov1.DeleteLlmSettingsRequest) (*studiov1.DeleteLlmSettingsResponse, error) {
	id, ok := parseID(req.GetId())
	if !ok {
		return nil, errInvalidLlmID
	}
	if err := s.store.DeleteLlmSettings(ctx, id); err != nil {
		return nil, s.status(err, errLlmNotFound)
	}
	rest.SetStatus(ctx, http.StatusNoContent)
	return &studiov1.DeleteLlmSettingsResponse{}, nil
}

// llmRecord is the response envelope of a stored record; metadata is always
// an object.
func llmRecord(rec store.LlmSettings) *studiov1.LlmSettings {
	attrs := &studiov1.LlmSettingsAttributes{ModelName: rec.ModelName, MaxLength: rec.MaxLength, MaxTokens: rec.MaxTokens,
		MinLength: rec.MinLength, Seed: rec.Seed, TopK: rec.TopK, Temperature: rec.Temperature, TopP: rec.TopP,
		RepetitionPenalty: rec.RepetitionPenalty, StopWords: rec.StopWords, Metadata: &structpb.Struct{}, SystemPrompt: rec.SystemPrompt}
	if len(rec.Metadata) > 0 {
		// The store holds what applyChanges marshalled from a Struct.
		_ = protojson.Unmarshal(rec.Metadata, attrs.Metadata)
	}
	return &studiov1.LlmSettings{Type: llmType, Id: strconv.FormatUint(uint64(rec.ID), 10), Attributes: attrs}
}

func (s *Server) CreateUser(ctx context.Context, req *studiov1.CreateUserRequest) (*studiov1.CreateUserResponse, error) {
	in := req.GetData().GetAttributes()
	if in.GetEmail() == "" {
		return nil, rest.Error(codes.InvalidArgument, http.StatusBadRequest, "email is required")
	}
	secret := credential.NewSecret()
	u, err := s.store.CreateUser(ctx, store.User{Email: in.GetEmail(), Name: in.GetName(), IsAdmin: in.GetIsAdmin(), KeyHash: credential.Hash(secret)})
	if err != nil {
		return nil, s.status(err, nil)
	}
	rest.SetStatus(ctx, http.StatusCreated)
	out := userRecord(u)
	out.Attributes.ApiKey = &secret
	return &studiov1.CreateUserResponse{Data: out}, nil
}

func (s *Server) ListUsers(ctx context.Context, _ *studiov1.ListUsersRequest) (*studiov1.ListUsersResponse, error) {
	users, err := s.store.ListUsers(ctx)
	if err != nil {
		return nil, s.status(err, nil)
	}
	resp := &studiov1.ListUsersResponse{Data: make([]*studiov1.User, 0, len(users))}
	for _, u := range users {
		resp.Data = append(resp.Data, userRecord(u))
	}
	return resp, nil
}

func (s *Server) DeleteUser(ctx context.Context, req *studiov1.DeleteUserRequest) (*studiov1.DeleteUserResponse, error) {
	id, ok := parseID(req.GetId())
	if !ok {
		return nil, errInvalidUser
	}
	if err := s.store.DeleteUser(ctx, id); err != nil {
		return nil, s.status(err, errUserNotFound)
	}
	rest.SetStatus(ctx, http.StatusNoContent)
	return &studiov1.DeleteUserResponse{}, nil
}

func userRecord(u store.User) *studiov1.User {
	return &studiov1.User{Type: userType, Id: strconv.FormatUint(uint64(u.ID), 10),
		Attributes: &studiov1.UserAttributes{Email: u.Email, Name: u.Name, IsAdmin: u.IsAdmin}}
}
