package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// TestHostileRequests sends malformed JSON, wrong types for every field,
// trailing data, duplicate keys, deep nesting, huge values, numbers at and
// past every bound, invalid UTF-8 in paths, queries, headers and bodies, and
// bodies at the 16 MiB boundary: no answer is a 5xx, every wrong body is
// refused, and a refused request leaves the store byte for byte unchanged.
func TestHostileRequests(t *testing.T) {
	p := newPortal(t)
	h := &servertest.Hostile{T: t, Base: p.base, Auth: token, Snapshot: []string{
		"/portal-api/products?per_page=1000", "/portal-api/tags", "/portal-api/categories", "/portal-api/products/1/docs?per_page=1000"}}
	product := `{"Name":"p","DisplayName":"P","Description":"d","Path":"/p","Content":"c"}`
	doc := `{"Title":"t","Content":"c","MarkdownEnabled":true,"Status":"draft","Lede":"l","Path":"/d","Categories":["1"],"Tags":["1"],"MarkdownContent":"m","PreviewContent":"v"}`
	h.Do("POST", "/portal-api/products", []byte(product))
	h.Do("POST", "/portal-api/tags", []byte(`{"Name":"tag"}`))
	h.Do("POST", "/portal-api/categories", []byte(`{"Name":"cat"}`))
	h.Do("POST", "/portal-api/products/1/docs", []byte(doc))
	h.Begin()
	undo := func(prefix string) func(*servertest.Hostile, http.Header, []byte) {
		return func(h *servertest.Hostile, _ http.Header, body []byte) {
			var c struct{ ID int }
			json.Unmarshal(body, &c)
			h.Do("DELETE", fmt.Sprint(prefix, c.ID), nil)
		}
	}
	for _, route := range []struct {
		method, path, body string
		undo               func(*servertest.Hostile, http.Header, []byte)
	}{
		{"POST", "/portal-api/products", strings.Replace(product, `"/p"`, `"/q"`, 1), undo("/portal-api/products/")},
		{"PUT", "/portal-api/products/1", product, nil},
		{"POST", "/portal-api/tags", `{"Name":"other"}`, undo("/portal-api/tags/")},
		{"PUT", "/portal-api/tags/1", `{"Name":"tag"}`, nil},
		{"POST", "/portal-api/categories", `{"Name":"other"}`, undo("/portal-api/categories/")},
		{"PUT", "/portal-api/categories/1", `{"Name":"cat"}`, nil},
		{"POST", "/portal-api/products/1/docs", strings.Replace(doc, `"/d"`, `"/e"`, 1), undo("/portal-api/products/1/docs/")},
		{"PUT", "/portal-api/products/1/docs/1", doc, nil},
		{"POST", "/portal-api/products/1/docs/reorder", `[1]`, nil},
	} {
		for _, m := range servertest.Mutations(route.body) {
			h.Send(servertest.Request{Name: route.method + " " + route.path + " " + m.Name, Method: route.method, Path: route.path,
				Body: m.Body, MustRefuse: m.Wrong, Undo: route.undo})
		}
	}
	for _, seg := range servertest.BadPathSegments {
		for _, r := range []struct{ method, path string }{
			{"GET", "/portal-api/products/" + seg}, {"PUT", "/portal-api/products/" + seg}, {"DELETE", "/portal-api/products/" + seg},
			{"GET", "/portal-api/tags/" + seg}, {"PUT", "/portal-api/tags/" + seg}, {"DELETE", "/portal-api/tags/" + seg},
			{"GET", "/portal-api/categories/" + seg}, {"DELETE", "/portal-api/categories/" + seg},
			{"GET", "/portal-api/products/" + seg + "/docs"}, {"POST", "/portal-api/products/" + seg + "/docs"},
			{"GET", "/portal-api/products/1/docs/" + seg}, {"PUT", "/portal-api/products/1/docs/" + seg},
			{"DELETE", "/portal-api/products/1/docs/" + seg}, {"POST", "/portal-api/products/" + seg + "/docs/reorder"},
		} {
			h.Send(servertest.Request{Name: "path " + seg, Method: r.method, Path: r.path, Body: []byte(`{"Name":"x","Title":"x"}`), MustRefuse: true})
		}
	}
	for _, v := range servertest.BadQueryValues {
		for _, q := range []string{"/portal-api/products?page=" + v, "/portal-api/products?per_page=" + v, "/portal-api/products/1/docs?page=" + v, "/portal-api/products/1/docs?per_page=" + v, "/portal-api/tags?" + v + "=1"} {
			h.Send(servertest.Request{Name: "query", Method: "GET", Path: q})
		}
	}
	for _, hd := range servertest.BadHeaders {
		h.Send(servertest.Request{Name: "header on a list", Method: "GET", Path: "/portal-api/products", Header: hd})
		h.Send(servertest.Request{Name: "header on an update", Method: "PUT", Path: "/portal-api/products/1/docs/1", Header: hd, Body: []byte(doc)})
	}
	h.Send(servertest.Request{Name: "key with invalid UTF-8", Method: "GET", Path: "/portal-api/tags", Header: http.Header{"Authorization": {"\xff\xfe"}}, Want: http.StatusUnauthorized})

	pad := func(total int) []byte {
		head, tail := `{"zz_pad":"`, `","Name":"p"}`
		return []byte(head + strings.Repeat("p", total-len(head)-len(tail)) + tail)
	}
	h.Send(servertest.Request{Name: "body of exactly 1 MiB", Method: "PUT", Path: "/portal-api/products/1", Body: pad(bodylimit.Small), Want: http.StatusOK})
	h.Send(servertest.Request{Name: "body of 1 MiB + 1", Method: "PUT", Path: "/portal-api/products/1", Body: pad(bodylimit.Small + 1), Want: http.StatusRequestEntityTooLarge})
	t.Logf("%d hostile requests, %d refused", h.Sent, h.Refused)
}
