package app

import (
	"bytes"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
	"github.com/gatehouse/gatehouse/services/portal/internal/site"
)

// startAttacked builds and runs the portal binary on a fresh store and
// returns the attack harness aimed at it: ReorderTutorialPages, whose
// order.doc_ids (fields 2, 1) is a repeated string, 2 bytes on the wire
// and 16 decoded for an empty one.
func startAttacked(t *testing.T, env ...string) *servertest.Attack {
	t.Helper()
	return servertest.StartAttack(t, filepath.Join("..", "..", "..", ".."), "portal", token,
		servertest.Attack{Auth: token, Method: "/gatehouse.portal.v1.PortalService/ReorderTutorialPages", Nest: []protowire.Number{2}, Amplify: func(n int) []byte { return bytes.Repeat([]byte{0x0a, 0x00}, n/2) }}, env...)
}

// TestHostileBinary reproduces issue 18's rows against the real binary,
// in seconds (see the studio's for what each part checks).
func TestHostileBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and attacks the binary")
	}
	a := startAttacked(t)
	t.Run("unauthenticated gRPC", func(t *testing.T) { a.T = t; a.Unauthenticated(16) })
	t.Run("message over the method's limit", func(t *testing.T) { a.T = t; a.MessageLimit(bodylimit.Small) })
	t.Run("connections per address", func(t *testing.T) { a.T = t; a.ConnsPerIP(64, "/portal-api/products") })
	t.Run("ids of 1 MB", func(t *testing.T) {
		a.T = t
		a.LongIDs(a.Auth, "/gatehouse.portal.v1.PortalService/DeleteTag", 150, "DELETE", "/portal-api/tags/", 1)
	})
	t.Run("8 parallel GETs of the largest page", func(t *testing.T) {
		a.T = t
		post(t, a, "/portal-api/products", `{"Name":"big"}`, http.StatusCreated)
		// the largest HTML a page may show (site.MaxHTML), less the room the sanitiser's rel attributes take
		html := `<p>` + strings.Repeat("<a href='/x'>x</a> ", (site.MaxHTML-4096)/48) + `</p>`
		post(t, a, "/portal-api/products/1/docs", `{"Title":"big","Status":"published","Content":"`+html+`"}`, http.StatusCreated)
		post(t, a, "/portal-api/products/1/docs", `{"Title":"over","Status":"published","Content":"`+html+html+`"}`, http.StatusUnprocessableEntity)
		a.ParallelGETs("http://"+a.SiteAddr+"/products/1/docs/1", 8, 5, 64)
	})
}

// post sends body to path with the admin key and wants status.
func post(t *testing.T, a *servertest.Attack, path, body string, status int) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+a.HTTPAddr+path, strings.NewReader(body))
	req.Header.Set("Authorization", token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != status {
		t.Fatalf("POST %s: %d %.300s, want %d", path, res.StatusCode, answer, status)
	}
}

// TestHostileLong is make test-hostile's part for the portal: 1,000 held
// streams, and 32 clients posting 15 MiB pages at once.
func TestHostileLong(t *testing.T) {
	servertest.Long(t)
	a := startAttacked(t, servertest.PodEnv...)
	req, _ := http.NewRequest("POST", "http://"+a.HTTPAddr+"/portal-api/products", strings.NewReader(`{"Name":"big"}`))
	req.Header.Set("Authorization", token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create product: %v %v", res, err)
	}
	res.Body.Close()
	// 15 MiB of Markdown the site does not show (Markdown is off): the body's
	// cost, not a rendering's (a page's HTML is at most 4 MiB)
	page := `{"Title":"big","Content":"c","MarkdownContent":"` + strings.Repeat("c", 15<<20) + `"}`
	t.Run("32 pages of 15 MiB at once", func(t *testing.T) {
		a.T = t
		a.ConcurrentBodies(32, "POST", "/portal-api/products/1/docs", []byte(page), servertest.PodLimitMiB)
	})
	t.Run("1,000 held streams", func(t *testing.T) { a.T = t; a.HeldStreams(10, 100, 256) })
}
