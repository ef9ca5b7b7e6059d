package tykgwtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse/gatehouse/pkg/redistest"
)

// TestDoubleIsStrict: the double fails as the gateway does — a whole policy
// list on one malformed _id (and then loads no APIs), an API list on one
// malformed id — records a 403 naming a nonce as a pitfall, refuses
// notifications signed with another secret, and reloads on good ones.
func TestDoubleIsStrict(t *testing.T) {
	rd := redistest.Start(t)
	var badPolicy, badAPI atomic.Bool
	badPolicy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("authorization") != "s3cret" {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte("Nonce failed"))
			return
		}
		switch r.URL.Path {
		case "/register/node":
			w.Write([]byte(`{"Status":"ok","Message":{"NodeID":"n1"},"Nonce":"a"}`))
		case "/register/ping", "/system/node":
			w.Write([]byte(`{"Status":"ok","Message":{},"Nonce":"b"}`))
		case "/system/policies":
			id := `"0123456789abcdef01234567"`
			if badPolicy.Load() {
				id = `"pol-1"`
			}
			w.Write([]byte(`{"Status":"OK","Message":[{"_id":"abcdefabcdefabcdefabcdef","id":"p0"},{"_id":` + id + `,"id":"p1"}],"Nonce":"c"}`))
		case "/system/apis":
			id := `"0123456789abcdef01234567"`
			if badAPI.Load() {
				id = `"api-1"`
			}
			w.Write([]byte(`{"Status":"OK","Message":[{"api_definition":{"api_id":"a1","id":` + id + `},"oas":null},` +
				`{"api_definition":{"api_id":"a2","is_oas":true},"oas":null}],"Nonce":"d"}`))
		}
	}))
	defer srv.Close()

	g := Start(Config{Dashboard: srv.URL, NodeSecret: "s3cret", Redis: rd.Addr, RegisterRetry: 50 * time.Millisecond})
	defer g.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for len(g.Stats().Errors) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g.Policies() != nil || g.APIs() != nil || !strings.Contains(strings.Join(g.Stats().Errors, "\n"), "invalid ObjectId") {
		t.Fatalf("a malformed policy _id: policies %v, apis %v, errors %v", g.Policies(), g.APIs(), g.Stats().Errors)
	}

	publish := func(secret string) {
		sum := Notification{Command: "ApiUpdated", Payload: "x", Algorithm: 5}
		sum.Signature = sign(sum.Command + sum.Payload + secret)
		b, _ := json.Marshal(sum)
		c := redis.NewClient(&redis.Options{Addr: rd.Addr})
		defer c.Close()
		if err := c.Publish(context.Background(), "tyk.cluster.notifications", b).Err(); err != nil {
			t.Fatal(err)
		}
	}
	publish("wrong")
	badPolicy.Store(false)
	badAPI.Store(true)
	time.Sleep(1500 * time.Millisecond)
	if st := g.Stats(); st.BadSignatures != 1 || st.Reloads != 0 {
		t.Fatalf("a notification signed with another secret: %+v", st)
	}
	publish("s3cret")
	if err := g.WaitFor(5*time.Second, func(g *Gateway) bool { return len(g.Policies()) == 2 }); err != nil {
		t.Fatalf("no reload on a good notification: %+v", g.Stats())
	}
	if g.APIs() != nil || !strings.Contains(strings.Join(g.Stats().Errors, "\n"), "invalid ObjectId in JSON: \"api-1\"") {
		t.Fatalf("a malformed API id: apis %v, errors %v", g.APIs(), g.Stats().Errors)
	}
	badAPI.Store(false)
	publish("s3cret")
	if err := g.WaitFor(5*time.Second, func(g *Gateway) bool { return g.APIs() != nil }); err != nil {
		t.Fatalf("no API list: %+v", g.Stats())
	}
	if _, skipped := g.APIs()["a2"]; skipped || g.APIs()["a1"].Definition == nil {
		t.Fatalf("loaded %v: want a1, and a2 (is_oas without its document) skipped", g.APIs())
	}

	wrong := Start(Config{Dashboard: srv.URL, NodeSecret: "other", RegisterRetry: 50 * time.Millisecond})
	time.Sleep(200 * time.Millisecond)
	wrong.Stop()
	if p := wrong.Stats().Pitfalls; len(p) == 0 {
		t.Fatal("a 403 naming a nonce was not recorded as a pitfall")
	}
}
