package app

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

func (in *instance) auditLogs(query string) ([]audit.Entry, int) {
	in.t.Helper()
	r := in.admin("GET", "/api/audit-logs"+query, nil)
	expect(in.t, "GET /api/audit-logs"+query, r, 200, "")
	var v struct {
		Logs  []audit.Entry `json:"logs"`
		Pages int           `json:"pages"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		in.t.Fatal(err)
	}
	return v.Logs, v.Pages
}

// TestAuditLog: accepted and refused writes are recorded with who, what
// and the answer; reads and anonymous requests are not; a write whose
// transaction rolled back is recorded with its refusal, never as a
// success; paging and filters; the audit_logs area; and nothing secret is
// stored.
func TestAuditLog(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	in := start(t, db)
	mgrID, mgr := in.createUser(`{"users":"write","audit_logs":"read"}`) // admin: POST /api/users 200
	api := "0123456789abcdef0123456789abcdef"
	steps := []struct {
		method, path, key, body string
		status                  int
	}{
		{"POST", "/api/apis/oas", adminToken, oasDoc(api, "Audited", "/audited/"), 200},
		{"POST", "/api/apis/oas", adminToken, oasDoc(api, "Again", "/again/"), 409}, // rolled back
		{"GET", "/api/apis/oas/" + api, adminToken, "", 200},                        // a read
		{"DELETE", "/api/apis/oas/" + api, mgr, "", 403},                            // refused before the body
		{"POST", "/api/users", mgr, `{"email_address":"x@y.test","user_permissions":{"IsAdmin":"admin"}}`, 403},
		{"PUT", "/api/users/" + mgrID + "/actions/key/reset", adminToken, "", 200},
		{"DELETE", "/api/apis/oas/" + api, "nope", "", 401}, // anonymous
		{"PUT", "/api/apis/oas/" + api + "/categories", adminToken, `{"categories":["a"]}`, 200},
	}
	start := time.Now()
	secrets := []string{mgr}
	for _, s := range steps {
		r := in.do(s.method, s.path, s.key, nilIfEmpty(s.body))
		expect(t, s.method+" "+s.path, r, s.status, "")
		if k, ok := r.json(t)["access_key"].(string); ok {
			secrets = append(secrets, k)
		}
	}
	mgr = secrets[1] // reset
	got, pages := in.auditLogs("")
	want := []struct {
		user, action, object string
		status               int
	}{
		{"admin", "PUT /api/apis/oas/{api_id}/categories", api, 200},
		{"admin", "PUT /api/users/{user_id}/actions/key/reset", mgrID, 200},
		{mgrID, "POST /api/users", "", 403},
		{mgrID, "DELETE /api/apis/oas/{api_id}", api, 403},
		{"admin", "POST /api/apis/oas", "", 409},  // refused: no object created
		{"admin", "POST /api/apis/oas", api, 200}, // a create names what it created
		{"admin", "POST /api/users", mgrID, 200},
	}
	if len(got) != len(want) || pages != 1 {
		t.Fatalf("%d entries, %d pages; want %d, 1: %+v", len(got), pages, len(want), got)
	}
	adminID := in.userByEmail("bootstrap-admin@gatehouse.invalid")["id"].(string)
	for i, w := range want {
		g, user := got[i], w.user
		if user == "admin" {
			user = adminID
		}
		if g.UserID != user || g.Action != w.action || g.Status != w.status || g.ObjectID != w.object ||
			g.RemoteAddr != "127.0.0.1" || g.ID == "" || g.Time.Before(start.Add(-time.Second)) {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}
	if got[2].UserEmail == "" || got[0].UserEmail != "bootstrap-admin@gatehouse.invalid" {
		t.Errorf("e-mails %q, %q", got[2].UserEmail, got[0].UserEmail)
	}

	// filters and paging, as the audit_logs reader
	if only, _ := in.auditLogs("?user_id=" + mgrID); len(only) != 2 {
		t.Errorf("user_id filter: %d entries, want 2", len(only))
	}
	if only, _ := in.auditLogs("?action=POST%20/api/apis/oas"); len(only) != 2 || only[0].Status != 409 {
		t.Errorf("action filter: %+v", only)
	}
	if none, _ := in.auditLogs("?to=" + start.Add(-time.Hour).UTC().Format(time.RFC3339)); len(none) != 0 {
		t.Errorf("to an hour ago: %d entries", len(none))
	}
	if all, _ := in.auditLogs("?from=" + start.Add(-time.Minute).UTC().Format(time.RFC3339) + "&p=0"); len(all) != len(want) {
		t.Errorf("from a minute ago: %d entries", len(all))
	}
	expect(t, "bad from", in.admin("GET", "/api/audit-logs?from=yesterday", nil), 400, "")
	expect(t, "the reader reads", in.do("GET", "/api/audit-logs?p=1", mgr, nil), 200, "")
	_, noAudit := in.createUser(`{"users":"read"}`)
	expect(t, "without audit_logs", in.do("GET", "/api/audit-logs", noAudit, nil), 403,
		mgmtErr("access denied: You do not have permission to access /api/audit-logs"))
	for range 13 { // 8 entries so far, 21 with these
		in.admin("PUT", "/api/apis/oas/"+api+"/categories", `{"categories":["b"]}`)
	}
	if page2, pages := in.auditLogs("?p=2"); pages != 3 || len(page2) != 10 {
		t.Errorf("page 2: %d entries of %d pages, want 10 of 3", len(page2), pages)
	}
	// The address is the connection's, whatever forwarding headers a client sends.
	in.do("PUT", "/api/apis/oas/"+api+"/categories", adminToken, `{"categories":["c"]}`,
		"X-Forwarded-For", "6.6.6.6", "Grpc-Metadata-X-Forwarded-For", "7.7.7.7", "X-Real-Ip", "8.8.8.8")
	if latest, _ := in.auditLogs("?p=1"); latest[0].RemoteAddr != "127.0.0.1" {
		t.Errorf("remote_addr %q with forwarding headers, want 127.0.0.1", latest[0].RemoteAddr)
	}
	if m := in.do("GET", "/metrics", "", nil); !strings.Contains(string(m.body), `gatehouse_auth_failures_total{service="management"}`) {
		t.Error("no gatehouse_auth_failures_total for management in /metrics")
	}

	// Nothing secret was stored: no key, no bootstrap token, no body.
	in.stop()
	e, err := boltkv.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	secrets = append(secrets, adminToken, "Audited", `"categories"`, "IsAdmin")
	err = e.View(context.Background(), func(r kv.ReadTx) error {
		return r.Scan(audit.Prefix, nil, func(k, v []byte) error {
			for _, s := range secrets {
				if strings.Contains(string(v), s) {
					t.Errorf("audit entry %s holds %q: %s", k, s, v)
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAuditLimits: --audit-max-entries is applied at start (and every
// minute): after a restart only the newest entries remain.
func TestAuditLimits(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	limit := func(c *config.Config) { c.Audit = config.Audit{MaxEntries: 3} }
	in := servertest.Start(t, Serve, db, adminToken, limit)
	inst := &instance{t: t, base: in.Base}
	for i := range 6 {
		inst.admin("PUT", "/api/apis/oas/missing/categories", fmt.Sprintf(`{"categories":["c%d"]}`, i))
	}
	if logs, _ := inst.auditLogs("?p=0"); len(logs) < 3 {
		t.Fatalf("%d entries before the restart", len(logs))
	}
	in.Stop()
	in = servertest.Start(t, Serve, db, adminToken, limit)
	inst = &instance{t: t, base: in.Base}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		logs, _ := inst.auditLogs("?p=0")
		if len(logs) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d entries after a restart with --audit-max-entries 3", len(logs))
		}
	}
}

// TestAuditRefusedBounded (issue 32): a key without the permission stores at
// most audit.RefusedPerCaller refusals in any minute, however it spreads
// them, and an id over 256 bytes is refused 400 before anything is stored.
func TestAuditRefusedBounded(t *testing.T) {
	in := start(t, "")
	readerID, reader := in.createUser(`{"apis":"read"}`)
	for i := range audit.RefusedPerCaller + 50 {
		expect(t, "refused delete", in.do("DELETE", fmt.Sprintf("/api/apis/%032d", i), reader, nil), 403, "")
	}
	if logs, _ := in.auditLogs("?p=0&user_id=" + readerID); len(logs) != audit.RefusedPerCaller {
		t.Errorf("%d refusals stored, want %d", len(logs), audit.RefusedPerCaller)
	}
	long := strings.Repeat("x", 257)
	expect(t, "long path id", in.do("DELETE", "/api/apis/"+long, adminToken, nil), 400, mgmtErr("api_id must be at most 256 bytes"))
	expect(t, "long path id, refused key", in.do("DELETE", "/api/users/"+long, reader, nil), 400, mgmtErr("user_id must be at most 256 bytes"))
	expect(t, "256 bytes is an id", in.do("DELETE", "/api/apis/"+long[1:], adminToken, nil), 404, "")
	if logs, _ := in.auditLogs("?p=1"); logs[0].ObjectID != long[1:] {
		t.Errorf("latest entry %+v, want the 256-byte id's", logs[0])
	}
}

// TestAuditCreatesNameTheirObject (issue 32): a policy's and an asset's
// create record the new document's db id, as their answers give it.
func TestAuditCreatesNameTheirObject(t *testing.T) {
	in := start(t, "")
	pol := in.admin("POST", "/api/portal/policies", policyBody("audited"))
	expect(t, "policy", pol, 200, "")
	asset := in.admin("POST", "/api/assets", `{"kind":"oas-template","name":"audited","data":{}}`)
	expect(t, "asset", asset, 201, "")
	logs, _ := in.auditLogs("?p=1")
	if len(logs) < 2 {
		t.Fatalf("%d audit entries", len(logs))
	}
	if got, want := logs[1].ObjectID, pol.json(t)["Message"]; got != want || logs[1].Action != "POST /api/portal/policies" {
		t.Errorf("policy create audited as %+v, want object %v", logs[1], want)
	}
	if got, want := logs[0].ObjectID, asset.json(t)["Meta"]; got != want || logs[0].Action != "POST /api/assets" {
		t.Errorf("asset create audited as %+v, want object %v", logs[0], want)
	}
}
