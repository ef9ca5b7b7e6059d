package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"google.golang.org/grpc/codes"
)

// TestJourney walks a user's path through the three services, REST and gRPC,
// with a restart of each in the middle. The services are independent, so
// their journeys run in parallel.
func TestJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the three services; skipped with -short")
	}
	begin := time.Now()
	binary(t, "studio") // build once, before the parallel subtests
	t.Logf("built the binaries in %v", time.Since(begin).Round(time.Millisecond))
	t.Run("studio", func(t *testing.T) { t.Parallel(); studioJourney(t) })
	t.Run("management", func(t *testing.T) { t.Parallel(); managementJourney(t) })
	t.Run("portal", func(t *testing.T) { t.Parallel(); portalJourney(t) })
	t.Run("gateway", func(t *testing.T) { t.Parallel(); gatewayJourney(t) })
}

// studioJourney: LLM settings are created, read, and deleted over REST and
// gRPC; ids are never reused, even across a restart.
func studioJourney(t *testing.T) {
	s := newService(t, "studio")
	admin := "Bearer " + s.token

	s.expectJSON(t, http.StatusUnauthorized, `{"errors":[{"title":"Unauthorized","detail":"missing or invalid API key"}]}`,
		"GET", "/api/v1/llm-settings", "", "")

	// Three settings: one to delete over REST, one over gRPC, one to keep.
	record := func(id, model string) string {
		return fmt.Sprintf(`{"data":{"type":"llm-settings","id":%q,"attributes":{"model_name":%q,
			"max_length":0,"max_tokens":512,"min_length":0,"seed":0,"top_k":0,"temperature":0.7,"top_p":0,
			"repetition_penalty":0,"stop_words":["END"],"metadata":{"a":1,"team":"docs"},"system_prompt":"Be brief."}}}`, id, model)
	}
	for i, model := range []string{"gpt-4o", "claude-3", "mistral-large"} {
		id := fmt.Sprint(i + 1)
		r := s.expectJSON(t, http.StatusCreated, record(id, model), "POST", "/api/v1/llm-settings", admin,
			`{"data":{"type":"llm-settings","attributes":{"model_name":"`+model+`","max_tokens":512,"temperature":0.7,
			"stop_words":["END"],"metadata":{"team":"docs","a":1},"system_prompt":"Be brief."}}}`)
		if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/api/v1/llm-settings/"+id) {
			t.Errorf("create %s: Location %q, want …/api/v1/llm-settings/%s", model, loc, id)
		}
	}
	list := s.expect(t, http.StatusOK, "GET", "/api/v1/llm-settings?page=1&page_size=2", admin, "")
	if c, p := list.header.Get("X-Total-Count"), list.header.Get("X-Total-Pages"); c != "3" || p != "2" {
		t.Errorf("list: X-Total-Count %q, X-Total-Pages %q, want 3 and 2", c, p)
	}

	// DELETE over REST: 204 with no body, then 404 for GET and a second DELETE.
	del := s.expect(t, http.StatusNoContent, "DELETE", "/api/v1/llm-settings/1", admin, "")
	if len(del.body) != 0 {
		t.Errorf("DELETE /api/v1/llm-settings/1: body %q, want none", del.body)
	}
	notFound := `{"errors":[{"title":"Not Found","detail":"LLM Settings not found"}]}`
	s.expectJSON(t, http.StatusNotFound, notFound, "GET", "/api/v1/llm-settings/1", admin, "")
	s.expectJSON(t, http.StatusNotFound, notFound, "DELETE", "/api/v1/llm-settings/1", admin, "")
	badID := `{"errors":[{"title":"Bad Request","detail":"Invalid LLM Settings ID"}]}`
	for _, id := range []string{"0", "abc", "4294967296"} {
		s.expectJSON(t, http.StatusBadRequest, badID, "DELETE", "/api/v1/llm-settings/"+id, admin, "")
	}

	// A non-admin studio user may not delete.
	u := s.expect(t, http.StatusCreated, "POST", "/api/v1/users", admin,
		`{"data":{"type":"users","attributes":{"email":"ana@example.com","name":"Ana","is_admin":false}}}`)
	userKey, _ := at(t, decode[any](t, u.body), "data", "attributes", "api_key").(string)
	if userKey == "" {
		t.Fatalf("POST /api/v1/users: no api_key in %s", u.body)
	}
	s.expectJSON(t, http.StatusForbidden, `{"errors":[{"title":"Forbidden","detail":"admin role required"}]}`,
		"DELETE", "/api/v1/llm-settings/2", "Bearer "+userKey, "")

	// DELETE over gRPC, with the same credentials and messages.
	studio := studiov1.NewStudioServiceClient(s.conn)
	_, err := studio.DeleteLlmSettings(authorized(t, "Bearer "+userKey), &studiov1.DeleteLlmSettingsRequest{Id: "2"})
	wantStatus(t, "gRPC DeleteLlmSettings as a non-admin", err, codes.PermissionDenied, "admin role required")
	if _, err := studio.DeleteLlmSettings(authorized(t, "Bearer "+s.token), &studiov1.DeleteLlmSettingsRequest{Id: "2"}); err != nil {
		t.Fatalf("gRPC DeleteLlmSettings 2: %v", err)
	}
	_, err = studio.GetLlmSettings(authorized(t, "Bearer "+s.token), &studiov1.GetLlmSettingsRequest{Id: "2"})
	wantStatus(t, "gRPC GetLlmSettings after delete", err, codes.NotFound, "LLM Settings not found")
	s.expectJSON(t, http.StatusNotFound, notFound, "GET", "/api/v1/llm-settings/2", admin, "")

	// A restart keeps record 3 and forgets 1 and 2; the next id is 4.
	before := s.expect(t, http.StatusOK, "GET", "/api/v1/llm-settings/3", admin, "")
	s.restart(t)
	s.expectJSON(t, http.StatusOK, string(before.body), "GET", "/api/v1/llm-settings/3", admin, "")
	sameJSON(t, "record 3 after restart", before.body, []byte(record("3", "mistral-large")))
	s.expectJSON(t, http.StatusNotFound, notFound, "GET", "/api/v1/llm-settings/1", admin, "")
	r := s.expect(t, http.StatusCreated, "POST", "/api/v1/llm-settings", admin,
		`{"data":{"type":"llm-settings","attributes":{"model_name":"gpt-4o-mini"}}}`)
	if id := at(t, decode[any](t, r.body), "data", "id"); id != "4" {
		t.Errorf("first record after restart: id %v, want 4 (ids are never reused)", id)
	}
	list = s.expect(t, http.StatusOK, "GET", "/api/v1/llm-settings", admin, "")
	if c := list.header.Get("X-Total-Count"); c != "2" {
		t.Errorf("list after restart: X-Total-Count %q, want 2", c)
	}
	s.stop(t)
}
