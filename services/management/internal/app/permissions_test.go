package app

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
)

// areaOfPath restates CONTRACT §2's table of permission areas by REST path
// prefix, apart from the service's own (the rules of api/auth.go, by RPC), so that the matrix
// checks the service against the contract rather than against itself.
var areaOfPath = []struct{ prefix, area string }{
	{"/api/apis", "apis"},
	{"/api/users", "users"},
	{"/api/portal/policies", "policy"},
	{"/api/audit-logs", "audit_logs"},
	{"/api/assets", "assets"},
	{"/api/system/nodes", "system"},
	{"/api/keys", "keys"},
}

// keysUnderAPIs are the key routes under /api/apis (CONTRACT §2 "Keys":
// area keys, not apis).
var keysUnderAPIs = regexp.MustCompile(`^/api/apis/(keys|[^/]+/keys(/.*)?)$`)

func contractArea(path string) string {
	if keysUnderAPIs.MatchString(path) {
		return "keys"
	}
	for _, a := range areaOfPath {
		if path == a.prefix || strings.HasPrefix(path, a.prefix+"/") {
			return a.area
		}
	}
	return ""
}

// roleShapes are the permission objects the matrix tries: every admin
// form, IsAdmin false, read and write of every area, and a deny.
func roleShapes() []map[string]string {
	shapes := []map[string]string{{}, {"IsAdmin": "admin"}, {"IsAdmin": "true"}, {"IsAdmin": "false"}, {"apis": "deny", "users": "read"}}
	for _, a := range areaOfPath {
		shapes = append(shapes, map[string]string{a.area: "read"}, map[string]string{a.area: "write"})
	}
	return shapes
}

// contractAllows is the Dashboard's rule: admins may do anything; others
// need read for GET and HEAD and write for the rest, in the path's area.
func contractAllows(perms map[string]string, area, method string) bool {
	if len(perms) == 0 || perms["IsAdmin"] == "admin" || perms["IsAdmin"] == "true" {
		return true
	}
	switch perms[area] {
	case "write":
		return true
	case "read":
		return method == "GET" || method == "HEAD"
	}
	return false
}

type route struct{ method, pattern, operation string }

// servedRoutes lists every operation of the OpenAPI description the
// service serves, so that routes added later are in the matrix too.
func servedRoutes(t *testing.T, in *instance) []route {
	t.Helper()
	r := in.do("GET", "/openapi.json", "", nil)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &doc) != nil {
		t.Fatalf("GET /openapi.json: %d %.200s", r.status, r.body)
	}
	var out []route
	for p, ops := range doc.Paths {
		for m, raw := range ops {
			var op struct {
				OperationID string `json:"operationId"`
			}
			json.Unmarshal(raw, &op)
			if m = strings.ToUpper(m); m != "PARAMETERS" {
				out = append(out, route{m, p, op.OperationID})
				if m == "GET" {
					out = append(out, route{"HEAD", p, ""})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b route) int { return strings.Compare(a.pattern+a.method, b.pattern+b.method) })
	return out
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// anyID stands for every path parameter in TestPermissionMatrix.
const anyID = "ffffffffffffffffffffffff"

// TestPermissionMatrix: every role shape × every route the service
// describes, on REST and on gRPC. A caller without the route's permission gets 403 naming the
// path, before any lookup and before its body is decoded (the write cells
// send a malformed body, and ids that name nothing); a caller with it gets
// past authorization.
func TestPermissionMatrix(t *testing.T) {
	in := start(t, "")
	routes := servedRoutes(t, in)
	if len(routes) < 20 {
		t.Fatalf("only %d routes in the served description", len(routes))
	}
	for _, perms := range roleShapes() {
		raw, _ := json.Marshal(perms)
		_, key := in.createUser(string(raw))
		for _, rt := range routes {
			area := contractArea(rt.pattern)
			if area == "" {
				t.Errorf("%s %s: no permission area in the contract's table", rt.method, rt.pattern)
				continue
			}
			path := pathParam.ReplaceAllString(rt.pattern, anyID)
			var body any
			if rt.method != "GET" && rt.method != "HEAD" && rt.method != "DELETE" {
				body = `{"malformed":`
			}
			r := in.do(rt.method, path, key, body)
			// a key in the path is named by its hash (no key in an error body)
			shown := path
			if strings.HasSuffix(rt.pattern, "/{key_id}") {
				shown = strings.TrimSuffix(path, anyID) + keys.ObjectID(anyID)
			}
			denial := "access denied: You do not have permission to access " + shown
			what := string(raw) + " " + rt.method + " " + rt.pattern
			if !contractAllows(perms, area, rt.method) {
				if r.status != 403 || (rt.method != "HEAD" && message(r) != denial) {
					t.Errorf("%s: %d %.200s, want 403 %q", what, r.status, r.body, denial)
				}
				continue
			}
			if r.status == 401 || (r.status == 403 && message(r) == denial) {
				t.Errorf("%s: %d %.200s, want past authorization", what, r.status, r.body)
			}
		}
		checkGRPCMatrix(t, in, key, string(raw), perms, routes)
		// gRPC decides alike, naming the path the request stands for.
		_, err := in.client.UpdateAPICategories(grpcCtx(key), &managementv1.UpdateAPICategoriesRequest{ApiId: "a b", Categories: []string{"x"}})
		if !contractAllows(perms, "apis", "PUT") {
			want := "access denied: You do not have permission to access /api/apis/oas/" + url.PathEscape("a b") + "/categories"
			if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != want {
				t.Errorf("%s: gRPC UpdateAPICategories: %v, want PermissionDenied %q", raw, err, want)
			}
		} else if status.Code(err) != codes.NotFound {
			t.Errorf("%s: gRPC UpdateAPICategories of a missing API: %v, want NotFound", raw, err)
		}
	}
	// migrate answers 403 in its own shape
	_, key := in.createUser(`{"apis":"read"}`)
	expect(t, "migrate 403", in.do("POST", "/api/apis/migrate?x=1", key, `{"mode":"dryRun","all":true}`), 403,
		`{"ID":"","Message":"access denied: You do not have permission to access /api/apis/migrate","Meta":null,"Status":"Error"}`)
}

// checkGRPCMatrix calls every RPC the description names (its first
// binding: operationId ManagementService_<Method>) over gRPC with an empty
// request, as the matrix's caller: refused with PermissionDenied exactly
// where REST refuses.
func checkGRPCMatrix(t *testing.T, in *instance, key, what string, perms map[string]string, routes []route) {
	t.Helper()
	svc := managementv1.File_gatehouse_management_v1_management_proto.Services().ByName("ManagementService")
	calls := 0
	for _, rt := range routes {
		name, ok := strings.CutPrefix(rt.operation, "ManagementService_")
		m := svc.Methods().ByName(protoreflect.Name(name))
		if !ok || m == nil {
			continue // a further binding of an RPC (ResetUserKey2)
		}
		calls++
		err := in.conn.Invoke(grpcCtx(key), "/"+string(svc.FullName())+"/"+name, dynamicpb.NewMessage(m.Input()), dynamicpb.NewMessage(m.Output()))
		denied := status.Code(err) == codes.PermissionDenied &&
			strings.HasPrefix(status.Convert(err).Message(), "access denied: You do not have permission to access /api/")
		switch allow := contractAllows(perms, contractArea(rt.pattern), rt.method); {
		case !allow && !denied:
			t.Errorf("%s: gRPC %s: %v, want PermissionDenied", what, name, err)
		case allow && (denied || status.Code(err) == codes.Unauthenticated):
			t.Errorf("%s: gRPC %s: %v, want past authorization", what, name, err)
		}
	}
	if calls != svc.Methods().Len() {
		t.Errorf("%d of the %d RPCs have a route in the description", calls, svc.Methods().Len())
	}
}

// message is the Message of a management error body.
func message(r resp) string {
	var v struct{ Message string }
	json.Unmarshal(r.body, &v)
	return v.Message
}

// userByEmail returns the user with that e-mail as GET /api/users lists it, or nil.
func (in *instance) userByEmail(email string) map[string]any {
	in.t.Helper()
	r := in.admin("GET", "/api/users?p=0", nil)
	expect(in.t, "list users", r, 200, "")
	for _, u := range r.json(in.t)["users"].([]any) {
		if m := u.(map[string]any); m["email_address"] == email {
			return m
		}
	}
	return nil
}

// TestLeastPrivilege: the escalations a user manager could make on the
// old code (issue 19, item 1), each refused, and what it may do allowed.
func TestLeastPrivilege(t *testing.T) {
	in := start(t, "")
	bootstrap := in.userByEmail("bootstrap-admin@gatehouse.invalid")
	if bootstrap == nil {
		t.Fatal("no bootstrap-admin@gatehouse.invalid user")
	}
	admin := bootstrap["id"].(string)
	mgrID, mgr := in.createUser(`{"users":"write"}`)
	otherID, _ := in.createUser(`{"users":"read"}`)
	higherID, _ := in.createUser(`{"users":"read","apis":"write"}`)
	api := "0123456789abcdef0123456789abcdef"
	expect(t, "create API", in.admin("POST", "/api/apis/oas", oasDoc(api, "LP", "/lp/")), 200, "")

	grant := mgmtErr("access denied: cannot grant permissions you do not hold")
	higher := mgmtErr("access denied: cannot change a user who holds permissions you do not hold")
	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string // body, "" to check the status only
	}{
		{"create an admin (IsAdmin)", "POST", "/api/users", `{"email_address":"a1@x.test","user_permissions":{"IsAdmin":"admin"}}`, 403, grant},
		{"create an admin ({})", "POST", "/api/users", `{"email_address":"a2@x.test","user_permissions":{}}`, 403, grant},
		{"create an admin (no permissions)", "POST", "/api/users", `{"email_address":"a3@x.test"}`, 403, grant},
		{"create an API writer", "POST", "/api/users", `{"email_address":"a4@x.test","user_permissions":{"users":"read","apis":"write"}}`, 403, grant},
		{"promote itself", "PUT", "/api/users/" + mgrID, `{"user_permissions":{"IsAdmin":"admin"}}`, 403, ""},
		{"give itself apis", "PUT", "/api/users/" + mgrID, `{"user_permissions":{"users":"write","apis":"write"}}`, 403, ""},
		{"give another apis", "PUT", "/api/users/" + otherID, `{"user_permissions":{"apis":"read"}}`, 403, grant},
		{"reset the admin's key", "PUT", "/api/users/" + admin + "/actions/key/reset", "", 403, ""},
		{"reset the admin's key (POST)", "POST", "/api/users/" + admin + "/actions/key/reset", "", 403, ""},
		{"reset another's key", "PUT", "/api/users/" + otherID + "/actions/key/reset", "", 403, ""},
		{"demote the admin", "PUT", "/api/users/" + admin, `{"user_permissions":{"users":"read"}}`, 403, ""},
		{"rename the admin", "PUT", "/api/users/" + admin, `{"first_name":"Mallory"}`, 403, ""},
		{"deactivate the admin", "PUT", "/api/users/" + admin, `{"active":false}`, 403, ""},
		{"delete the admin", "DELETE", "/api/users/" + admin, "", 403, ""},
		{"still no API writes", "DELETE", "/api/apis/oas/" + api, "", 403, ""},
		// a user who holds more than the manager is out of its reach too
		{"deactivate an API writer", "PUT", "/api/users/" + higherID, `{"active":false}`, 403, higher},
		{"rename an API writer", "PUT", "/api/users/" + higherID, `{"first_name":"Mallory"}`, 403, higher},
		{"delete an API writer", "DELETE", "/api/users/" + higherID, "", 403, higher},
		// what a user manager may do
		{"create a user with less", "POST", "/api/users", `{"email_address":"ok1@x.test","user_permissions":{"users":"read"}}`, 200, ""},
		{"create a user with the same", "POST", "/api/users", `{"email_address":"ok2@x.test","user_permissions":{"users":"write","apis":"deny"}}`, 200, ""},
		{"give another less", "PUT", "/api/users/" + otherID, `{"user_permissions":{"users":"write"}}`, 200, ""},
		{"rename itself", "PUT", "/api/users/" + mgrID, `{"first_name":"Manager","user_permissions":{"users":"write"}}`, 200, ""},
		{"reset its own key", "PUT", "/api/users/" + mgrID + "/actions/key/reset", "", 200, ""},
	}
	for _, c := range cases {
		r := in.do(c.method, c.path, mgr, nilIfEmpty(c.body))
		expect(t, c.name, r, c.status, c.want)
		if c.name == "reset its own key" {
			mgr = r.json(t)["access_key"].(string)
		}
	}
	// The admin is intact and its key works.
	if u := in.userByEmail("bootstrap-admin@gatehouse.invalid"); u["active"] != true || len(u["user_permissions"].(map[string]any)) != 1 {
		t.Errorf("the admin changed: %v", u)
	}
	expect(t, "the API is still there", in.admin("GET", "/api/apis/oas/"+api, nil), 200, "")

	// Admins: nobody changes its own permissions; the last active admin stays.
	last := mgmtErr("at least one admin must remain")
	expect(t, "admin demotes itself", in.admin("PUT", "/api/users/"+admin, `{"user_permissions":{"apis":"write"}}`), 403,
		mgmtErr("access denied: cannot change your own permissions"))
	expect(t, "last admin deactivates itself", in.admin("PUT", "/api/users/"+admin, `{"active":false}`), 409, last)
	expect(t, "last admin deletes itself", in.admin("DELETE", "/api/users/"+admin, nil), 409, last)
	secondID, second := in.createUser(`{"IsAdmin":"admin"}`)
	expect(t, "an admin demotes the other", in.do("PUT", "/api/users/"+admin, second, `{"user_permissions":{"apis":"write"}}`), 200, "")
	expect(t, "the demoted one cannot demote the admin", in.admin("PUT", "/api/users/"+secondID, `{"user_permissions":{"apis":"write"}}`), 403, "")
	expect(t, "nor deleted", in.do("DELETE", "/api/users/"+secondID, second, nil), 409, last)
	expect(t, "a former admin cannot restore itself", in.admin("PUT", "/api/users/"+admin, `{"user_permissions":{}}`), 403, "")
	expect(t, "an admin may reset another's key", in.do("PUT", "/api/users/"+mgrID+"/actions/key/reset", second, nil), 200, "")
	expect(t, "the old key stops working", in.do("GET", "/api/users", mgr, nil), 401, mgmtErr("Not authorised"))
}

// TestAuthorizationBeforeBody: a caller without permission gets 403 for
// any body, malformed or too deep, on REST.
func TestAuthorizationBeforeBody(t *testing.T) {
	in := start(t, "")
	_, key := in.createUser(`{"apis":"read"}`)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/users", `{"email_address":`},
		{"POST", "/api/users", `{"email_address":5}`},
		{"PUT", "/api/users/x", `[`},
		{"POST", "/api/apis", `not json`},
		{"POST", "/api/apis/oas", `{"openapi":`},
		{"PUT", "/api/apis/oas/x/categories", `{"categories":"x"}`},
		{"POST", "/api/apis/migrate", `{"mode":5}`},
	} {
		r := in.do(c.method, c.path, key, c.body)
		if r.status != 403 || !strings.HasPrefix(message(r), "access denied: You do not have permission to access ") {
			t.Errorf("%s %s with a bad body: %d %s, want 403", c.method, c.path, r.status, r.body)
		}
	}
}

// TestDeactivation: active false refuses the key at once; true restores it.
func TestDeactivation(t *testing.T) {
	in := start(t, "")
	id, key := in.createUser(`{"apis":"read"}`)
	expect(t, "active by default", in.admin("GET", "/api/users/"+id, nil), 200, "")
	if in.admin("GET", "/api/users/"+id, nil).json(t)["active"] != true {
		t.Fatal("a new user is not active")
	}
	expect(t, "deactivate", in.admin("PUT", "/api/users/"+id, `{"active":false}`), 200, "")
	expect(t, "key refused", in.do("GET", "/api/apis", key, nil), 401, mgmtErr("Not authorised"))
	if _, err := in.client.ListCategories(grpcCtx(key), &managementv1.ListCategoriesRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("gRPC with a deactivated key: %v", err)
	}
	if in.admin("GET", "/api/users/"+id, nil).json(t)["active"] != false {
		t.Error("GET does not say active false")
	}
	expect(t, "an update without active keeps it", in.admin("PUT", "/api/users/"+id, `{"first_name":"Still off"}`), 200, "")
	expect(t, "still refused", in.do("GET", "/api/apis", key, nil), 401, "")
	expect(t, "reactivate", in.admin("PUT", "/api/users/"+id, `{"active":true}`), 200, "")
	expect(t, "the same key works", in.do("GET", "/api/apis", key, nil), 200, "")
	expect(t, "active must be a boolean", in.admin("PUT", "/api/users/"+id, `{"active":"no"}`), 400, "")
}
