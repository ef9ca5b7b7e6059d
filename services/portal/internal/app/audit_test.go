package app

import (
	"encoding/json"
	"testing"
)

// TestAuditLog: the portal keeps the audit log of its writes (its keys are
// admin keys: user_id "admin"), none for reads or an unknown key; newest
// first, a bare array paged by page and per_page.
func TestAuditLog(t *testing.T) {
	p := newPortal(t)
	prod := p.product("audited")
	p.expect(p.do("GET", "/portal-api/products/"+prod, ""), 200, "read")
	p.expect(p.do("PUT", "/portal-api/products/"+prod, `{"Name":"renamed"}`, withAuth{"nope"}), 401, "anonymous")
	p.expect(p.do("PUT", "/portal-api/products/"+prod, `{"Name":"renamed"}`), 200, "update")
	p.expect(p.do("DELETE", "/portal-api/products/999", ""), 404, "delete a missing product")

	r := p.do("GET", "/portal-api/audit-logs?page=1&per_page=2", "")
	p.expect(r, 200, "list")
	var logs []struct {
		ID       string `json:"id"`
		UserID   string `json:"user_id"`
		Action   string `json:"action"`
		ObjectID string `json:"object_id"`
		Status   int    `json:"status"`
	}
	if err := json.Unmarshal(r.body, &logs); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	if len(logs) != 2 || logs[0].Action != "DELETE /portal-api/products/{product_id}" || logs[0].Status != 404 || logs[0].ObjectID != "999" ||
		logs[1].Action != "PUT /portal-api/products/{product_id}" || logs[1].Status != 200 || logs[1].UserID != "admin" || logs[1].ID == "" {
		t.Fatalf("page 1: %s", r.body)
	}
	r = p.do("GET", "/portal-api/audit-logs?page=2&per_page=2", "")
	if err := json.Unmarshal(r.body, &logs); err != nil || len(logs) != 1 || logs[0].Action != "POST /portal-api/products" || logs[0].Status != 201 || logs[0].ObjectID != prod {
		t.Fatalf("page 2: %s", r.body)
	}
	p.expect(p.do("GET", "/portal-api/audit-logs?action=POST%20/portal-api/products&from=2000-01-01T00:00:00Z", ""), 200, "filtered")
	p.expect(p.do("GET", "/portal-api/audit-logs?from=soon", ""), 400, "bad from")
}
