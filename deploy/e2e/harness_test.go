package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// repoRoot is the workspace root (go.work), two folders up.
const repoRoot = "../.."

// shutdownTimeout is how long a service may drain after SIGTERM (CONTRACT §0)
// plus a margin.
const shutdownTimeout = 15 * time.Second

var (
	binOnce sync.Once
	binDir  string
	bins    map[string]string
	binErr  error
)

// binary builds the three services once per test binary, as the Dockerfile
// does, and returns svc's binary.
func binary(t *testing.T, svc string) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "gatehouse-e2e-bin-")
		if binErr == nil {
			bins, binErr = binproc.Build(repoRoot, binDir, []string{"studio", "management", "portal"})
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	bin, ok := bins[svc]
	if !ok {
		t.Fatalf("services/%s/cmd/%s does not exist", svc, svc)
	}
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// service is one Gatehouse service with its own store and admin token, as a
// user runs it: started, stopped and started again on the same --db.
type service struct {
	name  string
	bin   string
	dir   string // working folder
	db    string
	token string   // the --bootstrap-token secret, an admin credential
	env   []string // added to the environment (KEY=value)
	proc  *binproc.Process
	conn  *grpc.ClientConn
}

func newService(t *testing.T, name string, env ...string) *service {
	t.Helper()
	dir := t.TempDir()
	s := &service{
		name:  name,
		bin:   binary(t, name),
		dir:   dir,
		db:    filepath.Join(dir, "store", name+".db"), // the service creates the folder
		token: binproc.RandomToken(t),
		env:   env,
	}
	s.start(t)
	return s
}

// start runs the binary on loopback port 0 and dials its gRPC address.
func (s *service) start(t *testing.T) {
	t.Helper()
	s.proc = binproc.Start(t, s.bin, []string{
		"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--db", s.db, "--bootstrap-token", s.token,
	}, append(os.Environ(), s.env...), nil, s.dir)
	conn, err := grpc.NewClient("passthrough:///"+s.proc.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	s.conn = conn
}

// restart stops the service with SIGTERM (exit status 0 expected) and starts
// it again on the same store.
func (s *service) restart(t *testing.T) {
	t.Helper()
	s.stop(t)
	s.start(t)
}

func (s *service) stop(t *testing.T) {
	t.Helper()
	s.conn.Close()
	took := s.proc.Stop(t, shutdownTimeout)
	t.Logf("%s stopped %v after SIGTERM", s.name, took.Round(time.Millisecond))
}

// url is the REST address of path (which starts with /).
func (s *service) url(path string) string { return "http://" + s.proc.HTTPAddr + path }

// response is one REST answer, body read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// call sends one REST request; auth is the Authorization header (none when
// empty), extra holds header name/value pairs.
func (s *service) call(t *testing.T, method, path, auth, body string, extra ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url(path), rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// expect sends a request and fails the test at once unless the answer has
// the given status.
func (s *service) expect(t *testing.T, wantStatus int, method, path, auth, body string, extra ...string) response {
	t.Helper()
	r := s.call(t, method, path, auth, body, extra...)
	if r.status != wantStatus {
		t.Fatalf("%s %s: status %d, want %d; body: %s", method, path, r.status, wantStatus, r.body)
	}
	return r
}

// expectJSON sends a request and checks both the status and the whole body,
// compared as JSON documents with want.
func (s *service) expectJSON(t *testing.T, wantStatus int, want, method, path, auth, body string, extra ...string) response {
	t.Helper()
	r := s.expect(t, wantStatus, method, path, auth, body, extra...)
	sameJSON(t, method+" "+path, r.body, []byte(want))
	return r
}

// sameJSON fails unless got and want are the same JSON document.
func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: body is not JSON (%v): %s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: the expected body is not JSON (%v): %s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got  %s\n want %s", what, compact(got), compact(want))
	}
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// decode unmarshals a JSON body into v, failing the test if it cannot.
func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

// object is a JSON object, for walking documents.
type object = map[string]any

// at walks a decoded JSON document along keys (object members) and indexes
// (ints, array elements), failing the test when the path does not exist.
func at(t *testing.T, doc any, path ...any) any {
	t.Helper()
	cur := doc
	for i, step := range path {
		switch k := step.(type) {
		case string:
			o, ok := cur.(object)
			if !ok {
				t.Fatalf("%v: not an object at %v", path, path[:i])
			}
			if cur, ok = o[k]; !ok {
				t.Fatalf("%v: no member %q", path, k)
			}
		case int:
			a, ok := cur.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no element %d", path, k)
			}
			cur = a[k]
		}
	}
	return cur
}

// authorized is a context whose gRPC calls carry key in the authorization
// metadata, as REST carries it in the Authorization header.
func authorized(t *testing.T, key string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, "authorization", key)
}

// wantStatus fails unless err is a gRPC status with code and message.
func wantStatus(t *testing.T, what string, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || st.Message() != msg {
		t.Fatalf("%s: got %v %q, want %v %q", what, st.Code(), st.Message(), code, msg)
	}
}
