package app

import (
	"bytes"
	"encoding/json"
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
	s := startTemp(t)
	h := &servertest.Hostile{T: t, Base: s.base, Auth: "Bearer " + token,
		Snapshot: []string{"/api/v1/llm-settings?page_size=100", "/api/v1/users"}}
	setting := `{"data":{"type":"llm-settings","attributes":{"model_name":"m","max_length":10,"max_tokens":20,"min_length":1,"seed":7,"top_k":3,"temperature":0.5,"top_p":0.5,"repetition_penalty":1.1,"stop_words":["END"],"metadata":{"k":"v"},"system_prompt":"s"}}}`
	user := `{"data":{"type":"users","attributes":{"email":"hostile@example.com","name":"H","is_admin":false}}}`
	h.Do("POST", "/api/v1/llm-settings", []byte(setting))
	h.Begin()
	deleteCreated := func(h *servertest.Hostile, header http.Header, body []byte) {
		var created struct {
			Data struct{ ID string } `json:"data"`
		}
		json.Unmarshal(body, &created)
		h.Do("DELETE", strings.TrimPrefix(header.Get("Location"), h.Base), nil)
	}
	deleteUser := func(h *servertest.Hostile, _ http.Header, body []byte) {
		var created struct {
			Data struct{ ID string } `json:"data"`
		}
		json.Unmarshal(body, &created)
		h.Do("DELETE", "/api/v1/users/"+created.Data.ID, nil)
	}
	for _, route := range []struct {
		method, path, body string
		free               []string
		undo               func(*servertest.Hostile, http.Header, []byte)
	}{
		{"POST", "/api/v1/llm-settings", setting, []string{"data.attributes.metadata", "data.type"}, deleteCreated},
		{"PATCH", "/api/v1/llm-settings/1", setting, []string{"data.attributes.metadata", "data.type"}, nil},
		{"POST", "/api/v1/users", user, []string{"data.type"}, deleteUser},
	} {
		for _, m := range servertest.Mutations(route.body, route.free...) {
			h.Send(servertest.Request{Name: route.method + " " + route.path + " " + m.Name, Method: route.method, Path: route.path,
				Body: m.Body, MustRefuse: m.Wrong, Undo: route.undo})
		}
	}
	for _, seg := range servertest.BadPathSegments {
		for _, m := range []string{"GET", "PATCH", "DELETE"} {
			h.Send(servertest.Request{Name: "llm-settings id " + seg, Method: m, Path: "/api/v1/llm-settings/" + seg, Body: []byte(setting), Want: http.StatusBadRequest})
		}
		h.Send(servertest.Request{Name: "users id " + seg, Method: "DELETE", Path: "/api/v1/users/" + seg, MustRefuse: true})
	}
	for _, v := range servertest.BadQueryValues {
		for _, q := range []string{"page=" + v, "page_size=" + v, v + "=1"} {
			h.Send(servertest.Request{Name: "query " + q, Method: "GET", Path: "/api/v1/llm-settings?" + q})
		}
	}
	for _, hd := range servertest.BadHeaders {
		h.Send(servertest.Request{Name: "header on a list", Method: "GET", Path: "/api/v1/llm-settings", Header: hd})
		h.Send(servertest.Request{Name: "header on a patch", Method: "PATCH", Path: "/api/v1/llm-settings/1", Header: hd, Body: []byte(setting)})
	}
	h.Send(servertest.Request{Name: "bad key with invalid UTF-8", Method: "GET", Path: "/api/v1/llm-settings", Header: http.Header{"Authorization": {"Bearer \xff\xfe"}}, Want: http.StatusUnauthorized})

	// The 1 MiB boundary (an operation without a document): padding in an unknown member.
	pad := func(total int) []byte {
		head := `{"zz_pad":"`
		tail := `",` + setting[1:]
		return []byte(head + strings.Repeat("p", total-len(head)-len(tail)) + tail)
	}
	if b := pad(bodylimit.Small); len(b) != bodylimit.Small || !bytes.HasSuffix(b, []byte("}}}")) {
		t.Fatalf("padding is %d bytes", len(b))
	}
	h.Send(servertest.Request{Name: "body of exactly 1 MiB", Method: "PATCH", Path: "/api/v1/llm-settings/1", Body: pad(bodylimit.Small), Want: http.StatusOK})
	h.Send(servertest.Request{Name: "body of 1 MiB + 1", Method: "PATCH", Path: "/api/v1/llm-settings/1", Body: pad(bodylimit.Small + 1), Want: http.StatusRequestEntityTooLarge})
	t.Logf("%d hostile requests, %d refused", h.Sent, h.Refused)
}
