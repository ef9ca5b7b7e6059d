package app

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// TestAuditLog: the studio keeps the audit log of its writes: accepted
// ones with their status, a non-admin's refusal (403, before the body),
// none for reads or a missing key; newest first, in the studio's paging
// style.
func TestAuditLog(t *testing.T) {
	s := startTemp(t)
	r := s.do(t, "POST", "/api/v1/users", `{"data":{"type":"users","attributes":{"email":"u@x","name":"U","is_admin":false}}}`)
	var created struct {
		Data struct {
			Attributes struct {
				APIKey string `json:"api_key"`
			}
		}
	}
	json.Unmarshal([]byte(r.body), &created)
	user := "Bearer " + created.Data.Attributes.APIKey
	s.do(t, "POST", "/api/v1/llm-settings", llm(`{"model_name":"m"}`)).expect(t, "create", 201, "")
	if created := s.do(t, "GET", "/api/v1/audit-logs?page_size=1", ""); !strings.Contains(created.body, `"object_id":"1"`) {
		t.Errorf("the create's entry does not name record 1: %s", created.body)
	}
	s.do(t, "GET", "/api/v1/llm-settings/1", "").expect(t, "read", 200, "")
	s.do(t, "DELETE", "/api/v1/llm-settings/1", "{", user).expect(t, "non-admin delete", 403, errBody(403, "admin role required"))
	s.do(t, "DELETE", "/api/v1/llm-settings/1", "", "Bearer nope").expect(t, "anonymous", 401, "")
	s.do(t, "DELETE", "/api/v1/llm-settings/1", "").expect(t, "delete", 204, "")
	s.do(t, "DELETE", "/api/v1/llm-settings/1", "").expect(t, "delete again", 404, "")

	list := s.do(t, "GET", "/api/v1/audit-logs?page=1&page_size=3", "")
	list.expect(t, "list", 200, "")
	var page struct {
		Data []struct {
			Type, ID   string
			Attributes struct {
				UserEmail string `json:"user_email"`
				Action    string
				ObjectID  string `json:"object_id"`
				Status    int
			}
		}
	}
	if err := json.Unmarshal([]byte(list.body), &page); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		email, action, object string
		status                int
	}{
		{"bootstrap-admin@gatehouse.invalid", "DELETE /api/v1/llm-settings/{id}", "1", 404},
		{"bootstrap-admin@gatehouse.invalid", "DELETE /api/v1/llm-settings/{id}", "1", 204},
		{"u@x", "DELETE /api/v1/llm-settings/{id}", "1", 403},
	}
	if len(page.Data) != 3 || list.header.Get("X-Total-Count") != "5" || list.header.Get("X-Total-Pages") != "2" {
		t.Fatalf("page: %s (X-Total-Count %s, X-Total-Pages %s)", list.body, list.header.Get("X-Total-Count"), list.header.Get("X-Total-Pages"))
	}
	for i, w := range want {
		g := page.Data[i]
		if g.Type != "audit-logs" || g.ID == "" || g.Attributes.UserEmail != w.email || g.Attributes.Action != w.action ||
			g.Attributes.ObjectID != w.object || g.Attributes.Status != w.status {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}
	s.do(t, "GET", "/api/v1/audit-logs", "", user).expect(t, "non-admin reads", 403, errBody(403, "admin role required"))
	s.do(t, "GET", "/api/v1/audit-logs?page=0", "").expect(t, "page 0", 400, errBody(400, "Invalid page number"))
}

// TestBootstrapSurvivesDeletion: the studio's bootstrap user deleted (the
// one change the studio's API can make to it) is an admin again after a
// restart, and the restart does not fail.
func TestBootstrapSurvivesDeletion(t *testing.T) {
	db := filepath.Join(t.TempDir(), "studio.db")
	s := start(t, db)
	var users struct{ Data []struct{ ID string } }
	json.Unmarshal([]byte(s.do(t, "GET", "/api/v1/users", "").body), &users)
	if len(users.Data) != 1 {
		t.Fatalf("users: %+v", users)
	}
	s.do(t, "DELETE", "/api/v1/users/"+users.Data[0].ID, "").expect(t, "delete the bootstrap user", 204, "")
	s.do(t, "GET", "/api/v1/users", "").expect(t, "the token is gone", 401, "")
	s.stop()
	s = start(t, db)
	s.do(t, "POST", "/api/v1/llm-settings", llm(`{"model_name":"m"}`)).expect(t, "the token is an admin again", 201, "")
}

// TestBootstrapRotation (issue 32): a restart with a new --bootstrap-token
// retires the previous token's user (401 from then on), audited once.
func TestBootstrapRotation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "studio.db")
	const newToken = "rotated-bootstrap-token-0123456789abcdef"
	start(t, db).stop()
	start(t, db).stop()
	servertest.Start(t, Serve, db, newToken).Stop()
	s := start(t, db) // the old token again: it is re-created, and the rotated one retired
	s.do(t, "GET", "/api/v1/users", "", "Bearer "+newToken).expect(t, "the rotated-out token", 401, "")
	r := s.do(t, "GET", "/api/v1/audit-logs", "")
	if n := strings.Count(r.body, "RETIRE bootstrap credential"); n != 2 {
		t.Errorf("%d retirements audited after two rotations, want 2: %s", n, r.body)
	}
	var users struct{ Data []struct{ ID string } }
	json.Unmarshal([]byte(s.do(t, "GET", "/api/v1/users", "").body), &users)
	if len(users.Data) != 1 {
		t.Errorf("users after rotations: %+v, want the bootstrap admin alone", users.Data)
	}
}
