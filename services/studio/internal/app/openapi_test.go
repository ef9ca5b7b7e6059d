package app

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// count reports the number of records in a {"data":[..]} body.
func count(want int) func([]byte) string {
	return func(body []byte) string {
		var v struct{ Data []json.RawMessage }
		if err := json.Unmarshal(body, &v); err != nil || len(v.Data) != want {
			return fmt.Sprintf("%d records (%v), want %d: %s", len(v.Data), err, want, body)
		}
		return ""
	}
}

// TestOpenAPIMatchesService checks the served description against real
// answers: success status, 204 without body, JSON names, query names, 401
// and the BearerAuth security scheme.
func TestOpenAPIMatchesService(t *testing.T) {
	s := startTemp(t)
	d := servertest.OpenAPI(t, s.base)
	d.CheckSecurity(t, "BearerAuth")
	auth := "Bearer " + token
	const one = `{"data":{"type":"llm-settings","attributes":{"model_name":"m"}}}`
	for _, c := range []servertest.Call{
		{Method: "POST", Path: "/api/v1/llm-settings", URL: "/api/v1/llm-settings", Body: one},
		{Method: "POST", Path: "/api/v1/llm-settings", URL: "/api/v1/llm-settings", Body: one},
		{Method: "POST", Path: "/api/v1/llm-settings", URL: "/api/v1/llm-settings", Body: one},
		{Method: "GET", Path: "/api/v1/llm-settings", URL: "/api/v1/llm-settings?page=2&page_size=2", Effect: count(1)},
		{Method: "GET", Path: "/api/v1/llm-settings/{id}", URL: "/api/v1/llm-settings/1"},
		{Method: "PATCH", Path: "/api/v1/llm-settings/{id}", URL: "/api/v1/llm-settings/1", Body: `{"data":{"attributes":{"seed":3}}}`},
		{Method: "DELETE", Path: "/api/v1/llm-settings/{id}", URL: "/api/v1/llm-settings/1"},
		{Method: "POST", Path: "/api/v1/users", URL: "/api/v1/users", Body: `{"data":{"type":"users","attributes":{"email":"a@b.c","name":"A"}}}`},
		{Method: "GET", Path: "/api/v1/users", URL: "/api/v1/users"},
	} {
		d.Check(t, auth, c)
	}
	d.CheckQueriesExercised(t)
}
