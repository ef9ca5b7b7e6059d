package app

import (
	"encoding/json"
	"regexp"
	"testing"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/restfacade/restfacadetest"
)

// TestDirect: every route the facade serves itself (restfacade's direct
// path) answers exactly as grpc-gateway does, accepted and refused, with
// the same audit entry and counts in the metrics (restfacadetest.Compare).
func TestDirect(t *testing.T) {
	s := startTemp(t)
	admin := "Bearer " + token
	var ids, users [2]string
	var user string
	for range 4 { // the ways' settings ids apart from the users' (1-3)
		s.do(t, "POST", "/api/v1/llm-settings", llm(`{"model_name":"before"}`)).expect(t, "create", 201, "")
	}
	for i := range restfacadetest.Ways {
		r := s.do(t, "POST", "/api/v1/llm-settings", llm(full))
		r.expect(t, "create", 201, "")
		var created struct{ Data struct{ ID string } }
		json.Unmarshal([]byte(r.body), &created)
		ids[i] = created.Data.ID
		r = s.do(t, "POST", "/api/v1/users", `{"data":{"type":"users","attributes":{"email":"u@x","name":"U","is_admin":false}}}`)
		r.expect(t, "create user", 201, "")
		var u struct {
			Data struct {
				ID         string
				Attributes struct {
					APIKey string `json:"api_key"`
				}
			}
		}
		json.Unmarshal([]byte(r.body), &u)
		users[i], user = u.Data.ID, "Bearer "+u.Data.Attributes.APIKey
	}
	s.do(t, "POST", "/api/v1/llm-settings", llm(`{"model_name":"kept"}`)).expect(t, "create kept", 201, "")

	type request = restfacadetest.Request
	requests := []request{
		{Pattern: "GET /api/v1/llm-settings", Method: "GET", Path: "/api/v1/llm-settings", Key: admin},
		{Pattern: "GET /api/v1/llm-settings", Method: "HEAD", Path: "/api/v1/llm-settings?page=1&page_size=2", Key: admin},
		{Pattern: "GET /api/v1/llm-settings", Method: "GET", Path: "/api/v1/llm-settings?page=abc", Key: admin, Headers: []string{"TE", "trailers"}},
		{Pattern: "GET /api/v1/llm-settings", Method: "GET", Path: "/api/v1/llm-settings?%zz", Key: admin},
		{Pattern: "GET /api/v1/llm-settings", Method: "GET", Path: "/api/v1/llm-settings", Key: user},
		{Pattern: "GET /api/v1/llm-settings", Method: "GET", Path: "/api/v1/llm-settings"},
		{Pattern: "GET /api/v1/llm-settings/{id}", Method: "GET", Path: "/api/v1/llm-settings/7", Key: admin, Body: `{"x":1}`},
		{Pattern: "GET /api/v1/llm-settings/{id}", Method: "GET", Path: "/api/v1/llm-settings/99", Key: admin},
		{Pattern: "GET /api/v1/llm-settings/{id}", Method: "GET", Path: "/api/v1/llm-settings/abc", Key: admin},
		{Pattern: "GET /api/v1/users", Method: "GET", Path: "/api/v1/users", Key: admin},
		{Pattern: "GET /api/v1/users", Method: "GET", Path: "/api/v1/users", Key: "Bearer wrong"},
		{Pattern: "GET /api/v1/audit-logs", Method: "GET", Path: "/api/v1/audit-logs?page=1&page_size=3", Key: admin},
		{Pattern: "GET /api/v1/audit-logs", Method: "GET", Path: "/api/v1/audit-logs?page=0", Key: admin},
		{Pattern: "DELETE /api/v1/llm-settings/{id}", Method: "DELETE", Path: "/api/v1/llm-settings/{id}", Key: user},
		{Pattern: "DELETE /api/v1/llm-settings/{id}", Method: "DELETE", Path: "/api/v1/llm-settings/{id}", Key: admin, Headers: []string{"X-Forwarded-For", "192.0.2.7"}},
		{Pattern: "DELETE /api/v1/llm-settings/{id}", Method: "DELETE", Path: "/api/v1/llm-settings/{id}", Key: admin},
		{Pattern: "DELETE /api/v1/llm-settings/{id}", Method: "DELETE", Path: "/api/v1/llm-settings/abc?x=1", Key: admin},
		{Pattern: "DELETE /api/v1/users/{id}", Method: "DELETE", Path: "/api/v1/users/{user}", Key: admin},
		{Pattern: "DELETE /api/v1/users/{id}", Method: "DELETE", Path: "/api/v1/users/99", Key: admin},
	}
	volatile := regexp.MustCompile(`"(id|time)":"[^"]*"`)
	restfacadetest.Compare(t, restfacadetest.Service{
		Base: s.base,
		Name: studiov1.StudioService_ServiceDesc.ServiceName,
		Vars: map[string][2]string{"{id}": ids, "{user}": users},
		Audit: func() string {
			r := s.do(t, "GET", "/api/v1/audit-logs?page_size=1", "")
			return volatile.ReplaceAllString(r.body, "")
		},
	}, requests)
}
