package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

const token = "test-admin-key"

// portal is one running service: real REST and gRPC servers on 127.0.0.1:0.
type portal struct {
	t      testing.TB
	base   string // http://host:port of the REST facade
	site   string // http://host:port of the public site
	client portalv1.PortalServiceClient
	stop   func()
	key    string // the admin key, when not token
}

// start serves a portal on db until the test ends (or stop is called).
func start(t testing.TB, db string) *portal {
	t.Helper()
	in := servertest.Start(t, Serve, db, token, servertest.WithSite)
	return &portal{t: t, base: in.Base, site: in.Site, client: portalv1.NewPortalServiceClient(in.Conn), stop: in.Stop}
}

func newPortal(t testing.TB) *portal {
	return start(t, filepath.Join(t.TempDir(), "portal.db"))
}

// reply is one REST answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// withAuth sends the given Authorization values instead of the admin key (none: no header).
type withAuth []string

// do sends a REST request with the admin key unless a withAuth is given.
func (p *portal) do(method, path, body string, opts ...any) reply {
	p.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if p.key != "" {
		req.Header.Set("Authorization", p.key)
	} else {
		req.Header.Set("Authorization", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		if auth, ok := o.(withAuth); ok {
			req.Header.Del("Authorization")
			for _, v := range auth {
				req.Header.Add("Authorization", v)
			}
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return reply{res.StatusCode, res.Header, b}
}

// expect checks the status and returns the decoded body (numbers kept exact).
func (p *portal) expect(r reply, status int, what string) any {
	p.t.Helper()
	if r.status != status {
		p.t.Fatalf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
	}
	if len(r.body) == 0 {
		return nil
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		p.t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	return decode(p.t, r.body)
}

func decode(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return v
}

// errorsOf checks a portal error body and returns its messages.
func (p *portal) errorsOf(r reply, status int, what string) []string {
	p.t.Helper()
	v := p.expect(r, status, what)
	m, _ := v.(map[string]any)
	list, ok := m["errors"].([]any)
	if len(m) != 1 || !ok || len(list) == 0 {
		p.t.Fatalf("%s: want {\"errors\":[...]}, got %s", what, r.body)
	}
	var out []string
	for _, e := range list {
		s, ok := e.(string)
		if !ok || s == "" {
			p.t.Fatalf("%s: errors must be sentences, got %s", what, r.body)
		}
		out = append(out, s)
	}
	return out
}

// id reads the numeric ID of a created record (a JSON number, not a string).
func (p *portal) id(v any) string {
	p.t.Helper()
	n, ok := v.(map[string]any)["ID"].(json.Number)
	if !ok {
		p.t.Fatalf("ID is not a JSON number: %v", v)
	}
	return n.String()
}

func (p *portal) product(name string) string {
	p.t.Helper()
	return p.id(p.expect(p.do("POST", "/portal-api/products", `{"Name":"`+name+`"}`), 201, "create product"))
}

func (p *portal) label(kind, name string) string {
	p.t.Helper()
	return p.id(p.expect(p.do("POST", "/portal-api/"+kind, `{"Name":"`+name+`"}`), 201, "create "+kind))
}

func (p *portal) page(product, body string) (string, map[string]any) {
	p.t.Helper()
	v := p.expect(p.do("POST", "/portal-api/products/"+product+"/docs", body), 201, "create page")
	return p.id(v), v.(map[string]any)
}

// rpc returns a context carrying the admin key for gRPC calls.
func rpc(key ...string) context.Context {
	if len(key) == 0 {
		key = []string{token}
	}
	ctx := context.Background()
	for _, k := range key {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", k)
	}
	return ctx
}

func docPath(product, doc string) string { return "/portal-api/products/" + product + "/docs/" + doc }

// call returns a gRPC call with the admin key that ignores its response, for tables.
func call[Req, Resp any](f func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) func() error {
	return func() error {
		_, err := f(rpc(), req)
		return err
	}
}

// TestBootstrapRotation (issue 32): a restart with a new --bootstrap-token
// retires the previous token's admin key (401 from then on), audited.
func TestBootstrapRotation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "portal.db")
	const newToken = "rotated-admin-key-0123456789abcdef"
	start(t, db).stop()
	servertest.Start(t, Serve, db, newToken, servertest.WithSite).Stop()
	p := start(t, db) // the first token again: the rotated one is retired
	if r := p.do("GET", "/portal-api/audit-logs", "", withAuth{newToken}); r.status != 401 {
		t.Errorf("the rotated-out key: %d, want 401", r.status)
	}
	if r := p.do("GET", "/portal-api/audit-logs", ""); r.status != 200 || strings.Count(string(r.body), "RETIRE bootstrap credential") != 2 {
		t.Errorf("audit log after two rotations: %d %s, want two retirements", r.status, r.body)
	}
}
