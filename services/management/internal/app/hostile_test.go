package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// TestHostileRequests sends malformed JSON, wrong types for every field the
// service reads, trailing data, duplicate keys, deep nesting, huge values,
// numbers at and past every bound, invalid UTF-8 in paths, queries, headers
// and bodies, and bodies at the 16 MiB boundary: no answer is a 5xx, every
// wrong body is refused, and a refused request leaves the store byte for
// byte unchanged. Definitions are stored verbatim, so their members may
// take any type; they must still be one JSON value.
func TestHostileRequests(t *testing.T) {
	in := start(t, "")
	h := &servertest.Hostile{T: t, Base: in.base, Auth: adminToken,
		Snapshot: []string{"/api/apis?p=0", "/api/users", "/api/apis/categories"}}
	const classicID, oasID = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	classic := `{"api_definition":{"api_id":"` + classicID + `","name":"Orders #shop","proxy":{"listen_path":"/orders/","target_url":"http://orders.internal"},"use_keyless":true,"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}}}}`
	oas := `{"openapi":"3.0.3","info":{"title":"O","version":"1"},"paths":{},"x-tyk-api-gateway":{"info":{"id":"` + oasID + `","name":"O","state":{"active":true}},"upstream":{"url":"http://u.test/"},"server":{"listenPath":{"value":"/o/"}}}}`
	user := `{"first_name":"H","last_name":"X","email_address":"hostile@example.com","user_permissions":{"apis":"read"}}`
	h.Do("POST", "/api/apis", []byte(classic))
	h.Do("POST", "/api/apis/oas", []byte(oas))
	var created struct{ ID string }
	json.Unmarshal(h.Do("POST", "/api/users", []byte(strings.Replace(user, "hostile@", "target@", 1))), &created)
	userPath := "/api/users/" + created.ID
	h.Begin()

	undo := func(prefix string) func(*servertest.Hostile, http.Header, []byte) {
		return func(h *servertest.Hostile, _ http.Header, body []byte) {
			var c struct{ ID string }
			json.Unmarshal(body, &c)
			h.Do("DELETE", prefix+c.ID, nil)
		}
	}
	oasFree := []string{"openapi", "info", "paths", "x-tyk-api-gateway", "zz_unknown"}
	for _, route := range []struct {
		method, path, body string
		free               []string
		undo               func(*servertest.Hostile, http.Header, []byte)
	}{
		{"POST", "/api/users", user, nil, undo("/api/users/")},
		{"PUT", userPath, user, nil, nil},
		{"POST", "/api/apis", strings.Replace(classic, classicID, "cccccccccccccccccccccccccccccccc", 1), []string{"api_definition", "zz_unknown"}, undo("/api/apis/")},
		{"PUT", "/api/apis/" + classicID, classic, []string{"api_definition", "zz_unknown"}, nil},
		{"POST", "/api/apis/oas", strings.Replace(oas, oasID, "dddddddddddddddddddddddddddddddd", 1), oasFree, undo("/api/apis/oas/")},
		{"PUT", "/api/apis/oas/" + oasID, oas, oasFree, nil},
		{"PUT", "/api/apis/oas/" + oasID + "/categories", `{"categories":["a","b"]}`, nil, nil},
		{"POST", "/api/apis/migrate", `{"mode":"dryRun","apiIDs":["` + classicID + `"],"all":false,"abortOnFailure":false,"overrideStaged":false}`, nil, nil},
	} {
		for _, m := range servertest.Mutations(route.body, route.free...) {
			h.Send(servertest.Request{Name: route.method + " " + route.path + " " + m.Name, Method: route.method, Path: route.path,
				Body: m.Body, MustRefuse: m.Wrong, Undo: route.undo})
		}
	}
	for _, seg := range servertest.BadPathSegments {
		for _, r := range []struct{ method, path string }{
			{"GET", "/api/apis/" + seg}, {"PUT", "/api/apis/" + seg}, {"DELETE", "/api/apis/" + seg},
			{"GET", "/api/apis/oas/" + seg}, {"PUT", "/api/apis/oas/" + seg}, {"DELETE", "/api/apis/oas/" + seg},
			{"GET", "/api/apis/oas/" + seg + "/categories"}, {"PUT", "/api/apis/oas/" + seg + "/categories"},
			{"GET", "/api/apis/oas/" + seg + "/export"}, {"GET", "/api/users/" + seg}, {"PUT", "/api/users/" + seg},
			{"DELETE", "/api/users/" + seg}, {"PUT", "/api/users/" + seg + "/actions/key/reset"},
		} {
			body := []byte(`{"api_definition":{"name":"x"},"categories":["a"],"email_address":"e@x.io"}`)
			h.Send(servertest.Request{Name: "path " + seg, Method: r.method, Path: r.path, Body: body, MustRefuse: true})
		}
	}
	for _, v := range servertest.BadQueryValues {
		for _, p := range []string{"/api/apis?p=" + v, "/api/apis?category=" + v, "/api/users?p=" + v, "/api/apis/oas/" + oasID + "/export?mode=" + v, "/api/apis?" + v + "=1"} {
			h.Send(servertest.Request{Name: "query", Method: "GET", Path: p})
		}
	}
	for _, hd := range servertest.BadHeaders {
		for _, p := range []string{"/api/apis", "/api/apis/oas/" + oasID, "/api/apis/oas/" + oasID + "/export"} {
			h.Send(servertest.Request{Name: "header", Method: "GET", Path: p, Header: hd})
		}
		h.Send(servertest.Request{Name: "header on a create", Method: "POST", Path: "/api/apis/oas", Header: hd, Body: []byte(oas), MustRefuse: true}) // the ID exists
	}
	h.Send(servertest.Request{Name: "key with invalid UTF-8", Method: "GET", Path: "/api/apis", Header: http.Header{"Authorization": {"\xff\xfe"}}, Want: http.StatusUnauthorized})

	// The 1 MiB boundary (an operation without a document), padding in an unknown member of a categories update.
	pad := func(total int) []byte {
		head, tail := `{"zz_pad":"`, `","categories":["a","b"]}`
		return []byte(head + strings.Repeat("p", total-len(head)-len(tail)) + tail)
	}
	path := "/api/apis/oas/" + oasID + "/categories"
	h.Send(servertest.Request{Name: "body of exactly 1 MiB", Method: "PUT", Path: path, Body: pad(bodylimit.Small), Want: http.StatusOK})
	h.Send(servertest.Request{Name: "body of 1 MiB + 1", Method: "PUT", Path: path, Body: pad(bodylimit.Small + 1), Want: http.StatusRequestEntityTooLarge})
	h.Send(servertest.Request{Name: "definition of 16 MiB + 1", Method: "PUT", Path: "/api/apis/" + classicID, Body: pad(restfacade.MaxBody + 1), Want: http.StatusRequestEntityTooLarge})
	t.Logf("%d hostile requests, %d refused", h.Sent, h.Refused)
}
