package backup

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/pkg/kv/kvobserve"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

var errNotAdmin = rest.Error(codes.PermissionDenied, http.StatusForbidden, "admin role required")

func admin(r *http.Request) error {
	if r.Header.Get("Authorization") != "admin" {
		return errNotAdmin
	}
	return nil
}

// serve runs the route for one request and returns the recorder and the
// error the facade would answer.
func serve(t *testing.T, e kv.Engine, method, auth string) (*httptest.ResponseRecorder, error) {
	t.Helper()
	var h func(http.ResponseWriter, *http.Request) error
	for _, rt := range Routes("/api", Options{Service: "svc", Engine: e, Admin: admin}) {
		if rt.Path == "/api/admin/backup" && rt.Method == method {
			h = rt.Serve
		}
	}
	if h == nil {
		t.Fatalf("no %s route at /api/admin/backup", method)
	}
	req := httptest.NewRequest(method, "/api/admin/backup", nil)
	req.Header.Set("Authorization", auth)
	w := httptest.NewRecorder()
	return w, h(w, req)
}

func statusOf(err error) int {
	code, _, _ := rest.Detail(status.Convert(err))
	return code
}

// TestBackupOfBbolt: an admin gets the store file, which opens as a store
// holding what was written; HEAD gives its length only; a non-admin is
// refused before anything is read.
func TestBackupOfBbolt(t *testing.T) {
	ctx := context.Background()
	b, err := boltkv.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	e := kvobserve.Wrap(b, nil) // as kvopen returns it: the snapshotter is found inside
	if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}

	w, err := serve(t, e, http.MethodGet, "admin")
	if err != nil || w.Code != 200 {
		t.Fatalf("GET by an admin: %d, %v", w.Code, err)
	}
	if got := w.Header().Get("Content-Length"); got == "" || got != strings.TrimSpace(got) || w.Body.Len() == 0 {
		t.Errorf("Content-Length %q for a %d-byte body", got, w.Body.Len())
	}
	if cd := w.Header().Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="svc-`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	restored := filepath.Join(t.TempDir(), "restored.db")
	if err := os.WriteFile(restored, w.Body.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := boltkv.Open(restored)
	if err != nil {
		t.Fatalf("the backup does not open as a store: %v", err)
	}
	defer r.Close()
	var got []byte
	if err := r.View(ctx, func(tx kv.ReadTx) error {
		v, err := tx.Get([]byte("k"))
		got = bytes.Clone(v)
		return err
	}); err != nil || string(got) != "v" {
		t.Errorf("restored k = %q, %v; want v", got, err)
	}

	head, err := serve(t, e, http.MethodHead, "admin")
	if err != nil || head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") != w.Header().Get("Content-Length") {
		t.Errorf("HEAD: %d, %v, body %d bytes, length %q", head.Code, err, head.Body.Len(), head.Header().Get("Content-Length"))
	}
	if w, err := serve(t, e, http.MethodGet, "someone"); !errors.Is(err, errNotAdmin) || w.Body.Len() != 0 {
		t.Errorf("GET by a non-admin: %v, %d bytes written; want the admin check's error and nothing", err, w.Body.Len())
	}
}

// TestBackupOnEtcdIs409: etcd is backed up with etcdctl snapshot save; the
// answer says so, and only to an admin.
func TestBackupOnEtcdIs409(t *testing.T) {
	ctx := context.Background()
	c := etcdtest.Start(t, 1)
	e, err := etcdkv.Open(ctx, etcdkv.Config{Endpoints: c.Endpoints(), Prefix: "/backup/"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := serve(t, e, http.MethodGet, "someone"); !errors.Is(err, errNotAdmin) {
		t.Errorf("non-admin on etcd: %v, want the admin check's error first", err)
	}
	_, err = serve(t, e, http.MethodGet, "admin")
	if statusOf(err) != http.StatusConflict || !strings.Contains(status.Convert(err).Message(), "etcdctl snapshot save") {
		t.Errorf("GET on etcd: %v, want 409 naming etcdctl snapshot save", err)
	}
}
