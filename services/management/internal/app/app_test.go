package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

const adminToken = "test-admin-token-0123456789abcdef"

// instance is one running management service on loopback ports.
type instance struct {
	t      testing.TB
	db     string
	base   string
	conn   *grpc.ClientConn
	client managementv1.ManagementServiceClient
	stop   func()
}

// start runs the service on 127.0.0.1:0 with a store in db ("" for a new temp file).
func start(t testing.TB, db string) *instance {
	t.Helper()
	if db == "" {
		db = filepath.Join(t.TempDir(), "management.db")
	}
	in := servertest.Start(t, Serve, db, adminToken)
	return &instance{t: t, db: db, base: in.Base, conn: in.Conn, client: managementv1.NewManagementServiceClient(in.Conn), stop: in.Stop}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return v
}

// do sends a request with the key (bare unless it already has a scheme) and optional headers as name, value pairs.
func (in *instance) do(method, path, key string, body any, headers ...string) resp {
	in.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, in.base+path, rd)
	if err != nil {
		in.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

func (in *instance) admin(method, path string, body any, headers ...string) resp {
	in.t.Helper()
	return in.do(method, path, adminToken, body, headers...)
}

// grpcCtx returns a context carrying key as gRPC authorization metadata.
func grpcCtx(key string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", key)
}

// expect checks the status and, when want is not empty, that the body is
// that JSON (compared structurally).
func expect(t testing.TB, what string, r resp, status int, want string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
	}
	if want == "" {
		return
	}
	var got, exp any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("%s: body not JSON: %s", what, r.body)
	}
	json.Unmarshal([]byte(want), &exp)
	g, _ := json.Marshal(got)
	e, _ := json.Marshal(exp)
	if !bytes.Equal(g, e) {
		t.Fatalf("%s: body %s, want %s", what, r.body, want)
	}
}

func mgmtErr(msg string) string {
	m, _ := json.Marshal(msg)
	return `{"Status":"Error","Message":` + string(m) + `,"Meta":null}`
}

func oasDoc(id, name, listen string) string {
	return fmt.Sprintf(`{"openapi":"3.0.3","info":{"title":%q,"version":"1.0.0"},"paths":{},`+
		`"x-tyk-api-gateway":{"info":{"id":%q,"name":%q,"state":{"active":true}},`+
		`"upstream":{"url":"http://upstream.test/"},"server":{"listenPath":{"value":%q,"strip":true}}}}`, name, id, name, listen)
}

func classicBody(id, name string) string {
	return fmt.Sprintf(`{"api_definition":{"api_id":%q,"name":%q,"proxy":{"listen_path":"/%s/","target_url":"http://u.test"},"big":9007199254740993,"ratio":1.50}}`, id, name, id)
}

// createUser makes a user with the permissions (JSON object) and returns its id and key.
func (in *instance) createUser(perms string) (id, key string) {
	in.t.Helper()
	email := fmt.Sprintf("u%d@example.test", time.Now().UnixNano())
	r := in.admin("POST", "/api/users", `{"first_name":"T","last_name":"U","email_address":"`+email+`","user_permissions":`+perms+`}`)
	expect(in.t, "create user", r, 200, "")
	v := r.json(in.t)
	return v["ID"].(string), v["access_key"].(string)
}

// orgID is the installation's organisation id, as the users carry it.
func (in *instance) orgID() string {
	in.t.Helper()
	r := in.admin("GET", "/api/users?p=0", nil)
	expect(in.t, "list users", r, 200, "")
	return r.json(in.t)["users"].([]any)[0].(map[string]any)["org_id"].(string)
}
