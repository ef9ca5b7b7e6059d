package app

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// apisListed reports the number of APIs in a {"apis":[..]} body.
func apisListed(want int) func([]byte) string {
	return func(body []byte) string {
		var v struct{ APIs []json.RawMessage }
		if err := json.Unmarshal(body, &v); err != nil || len(v.APIs) != want {
			return fmt.Sprintf("%d APIs (%v), want %d: %s", len(v.APIs), err, want, body)
		}
		return ""
	}
}

// TestOpenAPIMatchesService checks the served description against real
// answers: success status, JSON names, query names, 401 and the bearerAuth
// security scheme.
func TestOpenAPIMatchesService(t *testing.T) {
	in := start(t, "")
	d := servertest.OpenAPI(t, in.base)
	d.CheckSecurity(t, "bearerAuth")
	const classic = `{"api_definition":{"api_id":"%s","name":"%s","proxy":{"listen_path":"/%s/"}}}`
	for _, c := range []servertest.Call{
		{Method: "POST", Path: "/api/apis", URL: "/api/apis", Body: fmt.Sprintf(classic, "a1", "one #red", "one")},
		{Method: "POST", Path: "/api/apis", URL: "/api/apis", Body: fmt.Sprintf(classic, "a2", "two #blue", "two")},
		{Method: "GET", Path: "/api/apis", URL: "/api/apis?p=1&category=red", Effect: apisListed(1)},
		{Method: "GET", Path: "/api/apis/search", URL: "/api/apis/search?q=ONE&p=1&page_size=20&kind=classic&active=false&category=red&fields=name,api_id", Effect: apisListed(1)},
		{Method: "GET", Path: "/api/apis/categories", URL: "/api/apis/categories"},
		{Method: "DELETE", Path: "/api/apis/{api_id}", URL: "/api/apis/a2?force=false"},
		{Method: "POST", Path: "/api/users", URL: "/api/users", Body: `{"first_name":"A","email_address":"a@b.c"}`},
		{Method: "GET", Path: "/api/users", URL: "/api/users?p=1"},
		{Method: "POST", Path: "/api/apis/migrate", URL: "/api/apis/migrate", Body: `{"mode":"dryRun","apiIDs":["a1"]}`},
	} {
		d.Check(t, adminToken, c)
	}
	d.CheckQueriesExercised(t)
}
