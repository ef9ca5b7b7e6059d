package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Areas of the Tyk Dashboard permission model.
const (
	areaAPIs     = "apis"
	areaUsers    = "users"
	areaPolicies = "policy"
	areaAssets   = "assets"
	areaSystem   = "system"
	areaKeys     = "keys"
)

// rule is what one RPC needs: an area, read or write access, and the REST
// path it stands for (named in a 403).
type rule struct {
	area  string
	write bool
	path  string // with {api_id} / {user_id} placeholders
}

// rules covers every RPC of ManagementService; an RPC missing here is refused.
var rules = map[string]rule{
	"CreateUser":          {areaUsers, true, "/api/users"},
	"ListUsers":           {areaUsers, false, "/api/users"},
	"ListAuditLogs":       {"audit_logs", false, "/api/audit-logs"},
	"GetUser":             {areaUsers, false, "/api/users/{user_id}"},
	"UpdateUser":          {areaUsers, true, "/api/users/{user_id}"},
	"DeleteUser":          {areaUsers, true, "/api/users/{user_id}"},
	"ResetUserKey":        {areaUsers, true, "/api/users/{user_id}/actions/key/reset"},
	"CreateAPI":           {areaAPIs, true, "/api/apis"},
	"ListAPIs":            {areaAPIs, false, "/api/apis"},
	"GetAPI":              {areaAPIs, false, "/api/apis/{api_id}"},
	"SearchAPIs":          {areaAPIs, false, "/api/apis/search"},
	"UpdateAPI":           {areaAPIs, true, "/api/apis/{api_id}"},
	"DeleteAPI":           {areaAPIs, true, "/api/apis/{api_id}"},
	"CreateOASAPI":        {areaAPIs, true, "/api/apis/oas"},
	"GetOASAPI":           {areaAPIs, false, "/api/apis/oas/{api_id}"},
	"UpdateOASAPI":        {areaAPIs, true, "/api/apis/oas/{api_id}"},
	"DeleteOASAPI":        {areaAPIs, true, "/api/apis/oas/{api_id}"},
	"PatchOASAPI":         {areaAPIs, true, "/api/apis/oas/{api_id}"},
	"ImportOASAPI":        {areaAPIs, true, "/api/apis/oas/import"},
	"DryRunOASAPI":        {areaAPIs, true, "/api/apis/oas/dry-run"},
	"ListCategories":      {areaAPIs, false, "/api/apis/categories"},
	"GetAPICategories":    {areaAPIs, false, "/api/apis/oas/{api_id}/categories"},
	"ListOASAPIVersions":  {areaAPIs, false, "/api/apis/oas/{api_id}/versions"},
	"UpdateAPICategories": {areaAPIs, true, "/api/apis/oas/{api_id}/categories"},
	"ExportOASAPI":        {areaAPIs, false, "/api/apis/oas/{api_id}/export"},
	"Migrate":             {areaAPIs, true, "/api/apis/migrate"},
	"CreatePolicy":        {areaPolicies, true, "/api/portal/policies"},
	"ListPolicies":        {areaPolicies, false, "/api/portal/policies"},
	"GetPolicy":           {areaPolicies, false, "/api/portal/policies/{policy_id}"},
	"SearchPolicies":      {areaPolicies, false, "/api/portal/policies/search"},
	"UpdatePolicy":        {areaPolicies, true, "/api/portal/policies/{policy_id}"},
	"DeletePolicy":        {areaPolicies, true, "/api/portal/policies/{policy_id}"},
	"CreateAsset":         {areaAssets, true, "/api/assets"},
	"ListAssets":          {areaAssets, false, "/api/assets"},
	"GetAsset":            {areaAssets, false, "/api/assets/{asset_id}"},
	"UpdateAsset":         {areaAssets, true, "/api/assets/{asset_id}"},
	"DeleteAsset":         {areaAssets, true, "/api/assets/{asset_id}"},
	"ListNodes":           {areaSystem, false, "/api/system/nodes"},
	"CreateKey":           {areaKeys, true, "/api/keys"},
	"CreateCustomKey":     {areaKeys, true, "/api/keys/{key_id}"},
	"GetKey":              {areaKeys, false, "/api/keys/{key_id}"},
	"UpdateKey":           {areaKeys, true, "/api/keys/{key_id}"},
	"DeleteKey":           {areaKeys, true, "/api/keys/{key_id}"},
	"ListKeysDetailed":    {areaKeys, false, "/api/keys/detailed"},
	"PreviewKey":          {areaKeys, true, "/api/keys/preview"},
	"ListKeys":            {areaKeys, false, "/api/apis/keys"},
	"ListAPIKeys":         {areaKeys, false, "/api/apis/{api_id}/keys"},
	"SearchAPIKeys":       {areaKeys, false, "/api/apis/{api_id}/keys/search"},
	"GetAPIKey":           {areaKeys, false, "/api/apis/{api_id}/keys/{key_id}"},
	"UpdateAPIKey":        {areaKeys, true, "/api/apis/{api_id}/keys/{key_id}"},
	"DeleteAPIKey":        {areaKeys, true, "/api/apis/{api_id}/keys/{key_id}"},
}

type callerKey struct{}

// Caller returns the user a call was authenticated as.
func Caller(ctx context.Context) (store.User, bool) {
	u, ok := ctx.Value(callerKey{}).(store.User)
	return u, ok
}

// Authenticate is the grpcserver auth hook, run before any handler on REST
// and gRPC: it finds the caller from `authorization` metadata — the bare key
// or `Bearer <key>` — (401 otherwise), then authorizes the call.
//
// The call serving a REST request takes the caller AuthenticateREST found
// from the same Authorization header (restfacade.Caller): authenticated
// once, authorized by the same rule at both steps.
func (s *Server) Authenticate(ctx context.Context, fullMethod string, req any) (context.Context, error) {
	_, method, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	c, ok := restCaller(ctx, method)
	if ok {
		u := c.(store.User)
		auditctx.SetCaller(ctx, u.ID, u.Email) // the call's own audit entry
	} else {
		u, err := s.caller(ctx, incomingAll(ctx, "authorization"))
		if err != nil {
			return nil, err
		}
		c = u
	}
	ctx = context.WithValue(ctx, callerKey{}, c)
	return ctx, authorize(ctx, method, req)
}

// restCaller is the caller (a store.User) the REST door admitted to
// method, if ctx is the call serving that REST request: as the door kept
// it, so that the call's context takes the same value without a copy.
func restCaller(ctx context.Context, method string) (any, bool) {
	c, ok := restfacade.Caller(ctx, method)
	if !ok {
		return nil, false
	}
	_, ok = c.(store.User)
	return c, ok
}

// AuthenticateREST refuses a REST request before the facade reads its body
// (restfacade.Options.Authenticate): without a valid key 401, and without
// the permission of the RPC its route maps to (the one table, rules) 403,
// whatever the body holds. The hook above authorizes the call again, by
// the same rule, once the facade has made it, with the caller found here.
func (s *Server) AuthenticateREST(r *http.Request) error {
	u, err := s.caller(r.Context(), r.Header.Values("Authorization"))
	if err != nil {
		return err
	}
	method, routed := restfacade.Operation(r.Context())
	if !routed {
		return nil // no RPC serves it: the facade answers 404 or 405
	}
	rule, known := rules[method]
	if known && allowed(u.Permissions, rule.area, rule.write) {
		restfacade.SetCaller(r.Context(), u)
		return nil
	}
	return forbidden(concealKey(r.URL.EscapedPath(), rule.path))
}

// concealKey shows the key of a key route's concrete path (template ends in
// {key_id}: the key is its last segment) as its hash, the same key's other
// name and what the audit log records: no key is ever written in an error
// body (CONTRACT §0).
func concealKey(path, template string) string {
	i := strings.LastIndexByte(path, '/')
	if !strings.HasSuffix(template, "/{key_id}") || i < 0 || i == len(path)-1 {
		return path
	}
	key, err := url.PathUnescape(path[i+1:])
	if err != nil {
		key = path[i+1:]
	}
	return path[:i+1] + keys.ObjectID(key)
}

// AuthenticateAdminREST admits an active admin only (the store backup):
// 401 without a valid key, 403 for any other user.
func (s *Server) AuthenticateAdminREST(r *http.Request) error {
	u, err := s.caller(r.Context(), r.Header.Values("Authorization"))
	if err != nil {
		return err
	}
	if !u.ActiveAdmin() {
		return forbidden(r.URL.EscapedPath())
	}
	return nil
}

// dummyHash stands in for a missing user's key hash, so that an unknown
// key costs the comparison a known one does.
var dummyHash = credential.Hash("gatehouse: no such key")

// caller finds the active user of an Authorization value: the bare key or
// `Bearer <key>`; 401 otherwise. A key that exists and one that does not
// take the same steps (a lookup by hash, then a constant-time comparison).
func (s *Server) caller(ctx context.Context, vals []string) (store.User, error) {
	key, ok := keyOf(vals)
	if !ok {
		return store.User{}, errUnauthorized
	}
	hash := credential.Hash(key)
	u, err := credential.Lookup(ctx, hash, func() (store.User, error) { return s.store.UserByKeyHash(ctx, hash) })
	switch {
	case errors.Is(err, store.ErrNotFound):
		credential.Equal(dummyHash, hash)
		return store.User{}, errUnauthorized
	case err != nil:
		return store.User{}, s.storeError(err, errUnauthorized)
	case !credential.Equal(u.KeyHash, hash) || u.Inactive:
		return store.User{}, errUnauthorized
	}
	auditctx.SetCaller(ctx, u.ID, u.Email)
	return u, nil
}

// keyOf reads the key of an Authorization value: the bare key or
// `Bearer <key>`.
func keyOf(vals []string) (string, bool) {
	if len(vals) != 1 {
		return "", false
	}
	key := strings.TrimSpace(vals[0])
	if scheme, rest, ok := strings.Cut(key, " "); ok && strings.EqualFold(scheme, "Bearer") {
		key = strings.TrimSpace(rest)
	}
	return key, key != ""
}

// authorize decides whether the caller may make this call, before the
// handler runs and so before any lookup: a caller without permission learns
// nothing about which APIs or users exist.
func authorize(ctx context.Context, method string, req any) error {
	r, known := rules[method]
	u, ok := Caller(ctx)
	if !ok {
		return errUnauthorized
	}
	if known && allowed(u.Permissions, r.area, r.write) {
		return nil
	}
	return forbidden(requestPath(ctx, r.path, req))
}

// forbidden is the 403 of a caller without the permission a path needs.
func forbidden(path string) error {
	return rest.Error(codes.PermissionDenied, http.StatusForbidden, "access denied: You do not have permission to access "+path)
}

// allowed applies the Tyk Dashboard model: admins may do anything; others
// need "<area>":"read" to read and "<area>":"write" for anything else.
func allowed(perms map[string]string, area string, write bool) bool {
	if store.IsAdmin(perms) {
		return true
	}
	switch perms[area] {
	case "write":
		return true
	case "read":
		return !write
	}
	return false
}

// requestPath is the REST path of the call: the routed REST request's
// (restfacade.Path), or, for a gRPC caller, the rule's path filled from the
// request.
func requestPath(ctx context.Context, template string, req any) string {
	if p, ok := restfacade.Path(ctx); ok {
		return concealKey(p, template)
	}
	if r, ok := req.(interface{ GetKeyId() string }); ok {
		template = strings.ReplaceAll(template, "{key_id}", keys.ObjectID(r.GetKeyId()))
	}
	if r, ok := req.(interface{ GetApiId() string }); ok {
		template = strings.ReplaceAll(template, "{api_id}", url.PathEscape(r.GetApiId()))
	}
	if r, ok := req.(interface{ GetUserId() string }); ok {
		template = strings.ReplaceAll(template, "{user_id}", url.PathEscape(r.GetUserId()))
	}
	if r, ok := req.(interface{ GetPolicyId() string }); ok {
		template = strings.ReplaceAll(template, "{policy_id}", url.PathEscape(r.GetPolicyId()))
	}
	if r, ok := req.(interface{ GetAssetId() string }); ok {
		template = strings.ReplaceAll(template, "{asset_id}", url.PathEscape(r.GetAssetId()))
	}
	return template
}

// FrontDoor is the gRPC front door's view of the same keys: the hash of
// the key caller reads, live when a user holds it (authorization is still
// decided per call above).
func (s *Server) FrontDoor() *grpcserver.FrontDoor {
	return &grpcserver.FrontDoor{
		Key: keyOf,
		Known: func(ctx context.Context, hash []byte) (bool, error) {
			u, err := s.store.UserByKeyHash(ctx, hash)
			found, err := credential.Found(err, store.ErrNotFound)
			return found && !u.Inactive, err // a deactivated key's message is never read
		},
		Refusal: errUnauthorized,
		Refused: func() { metrics.CountAuthFailure("management") },
	}
}
