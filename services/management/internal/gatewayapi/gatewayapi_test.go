package gatewayapi_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
	"github.com/gatehouse/gatehouse/services/management/internal/gatewayapi"
)

const secret = "gateway-secret-for-tests"

// TestClientAgainstTheDouble: create, get, update and delete through the
// gateway double's key routes, the secret in x-tyk-authorization and the
// hash in every later call.
func TestClientAgainstTheDouble(t *testing.T) {
	gw, err := tykgwtest.StartKeyAPI(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	c, err := gatewayapi.New(gw.URL+"/", secret)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	created, err := c.Create(ctx, []byte(`{"org_id":"org1","apply_policies":["p"]}`))
	if err != nil || !strings.HasPrefix(created.Key, "org1") || created.Hash != gatewayapi.Hash(created.Key) || created.Hash != tykgwtest.KeyHash(created.Key) {
		t.Fatalf("create: %+v %v", created, err)
	}
	if got, err := c.Get(ctx, created.Hash); err != nil || !strings.Contains(string(got), `"apply_policies":["p"]`) {
		t.Fatalf("get: %s %v", got, err)
	}
	if err := c.Update(ctx, created.Hash, []byte(`{"org_id":"org1","apply_policies":["q"]}`), true); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, created.Hash); err != nil {
		t.Fatal(err)
	}
	var refusal *gatewayapi.Refusal
	if err := c.Delete(ctx, created.Hash); !errors.As(err, &refusal) || refusal.Status != 404 || refusal.Message != "There is no such key found" {
		t.Fatalf("second delete: %v", err)
	}
	for _, call := range gw.Calls()[1:] {
		if !strings.Contains(call, "hashed=true") || strings.Contains(call, created.Key) {
			t.Errorf("call %q: want the hash with hashed=true", call)
		}
	}
	custom, err := c.CreateCustom(ctx, "mine", []byte(`{"org_id":"org1"}`))
	if err != nil || custom.Key != "org1mine" || custom.Hash != gatewayapi.Hash("org1mine") {
		t.Fatalf("custom: %+v %v", custom, err)
	}

	wrong, _ := gatewayapi.New(gw.URL, "wrong")
	if _, err := wrong.Create(ctx, []byte(`{}`)); !errors.As(err, &refusal) || refusal.Status != 403 {
		t.Fatalf("wrong secret: %v", err)
	}
}

// TestClientUnreachable: a gateway that does not answer, or answers with
// something that is not the gateway API, is ErrUnreachable, and no error
// text holds the URL's path, the secret or a key.
func TestClientUnreachable(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	c, _ := gatewayapi.New("http://"+addr+"/base-path", secret)
	_, err := c.CreateCustom(context.Background(), "the-custom-key", []byte(`{}`))
	if !errors.Is(err, gatewayapi.ErrUnreachable) {
		t.Fatalf("closed port: %v", err)
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html>bad gateway</html>"))
	}))
	defer proxy.Close()
	c, _ = gatewayapi.New(proxy.URL, secret)
	_, err = c.CreateCustom(context.Background(), "the-custom-key", []byte(`{}`))
	if !errors.Is(err, gatewayapi.ErrUnreachable) {
		t.Fatalf("a proxy's 502 page: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, "the-custom-key") || strings.Contains(msg, "base-path") {
		t.Fatalf("error text %q", msg)
	}
	if _, err := gatewayapi.New("ftp://x", secret); err == nil {
		t.Fatal("an ftp URL was accepted")
	}
}

// TestHash holds Hash to what a Tyk Gateway v5.11.1 answered as key_hash
// (hash_keys on, default hash_key_function: a legacy key, org id + 32 hex,
// hashed with the gateways' murmur32, whose digest is not the textbook
// MurmurHash3's), and to the algorithm a base64 JSON token names.
func TestHash(t *testing.T) {
	if h := gatewayapi.Hash("6b0a3389b1d430af3c6c2db349ff90b91f5e462dbdba7abb885e565b"); h != "a3d077ff" {
		t.Errorf("legacy key: %q, the gateway answered a3d077ff", h)
	}
	token := "eyJvcmciOiJvcmcxIiwiaWQiOiJhYmMiLCJoIjoic2hhMjU2In0=" // {"org":"org1","id":"abc","h":"sha256"}
	if h := gatewayapi.Hash(token); h != "1f7575c95fcab9f406c6d37c0a5d0904372cd4f96932136145b6b8aa19d82903" {
		t.Errorf("sha256 token: %q", h)
	}
	m64 := "eyJvcmciOiJvcmcxIiwiaWQiOiJhYmMiLCJoIjoibXVybXVyNjQifQ==" // {"org":"org1","id":"abc","h":"murmur64"}
	if h := gatewayapi.Hash(m64); len(h) != 16 || h == gatewayapi.Hash("x"+m64) {
		t.Errorf("murmur64 token: %q", h)
	}
}
