package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// processes wraps running binaries as instances, for the REST helpers.
func processes(t *testing.T, ps ...*binproc.Process) []*instance {
	out := make([]*instance, len(ps))
	for i, p := range ps {
		out[i] = &instance{t: t, base: "http://" + p.HTTPAddr}
	}
	return out
}

// tokenUserID is the id of the user the bootstrap token belongs to: the
// caller of the newest audit entry after a write made with the token.
func (in *instance) tokenUserID() string {
	in.t.Helper()
	in.admin("PUT", "/api/apis/oas/nothing-here/categories", `{"categories":[]}`) // 404, audited
	logs, _ := in.auditLogs("?p=1")
	if len(logs) == 0 {
		in.t.Fatal("no audit entry for the token's write")
	}
	return logs[0].UserID
}

// bootstrapMutations are what a second admin can do to the bootstrap
// user; after each, a restart must give the token back as an active admin.
var bootstrapMutations = []struct{ name, method, path, body string }{
	{"re-keyed", "PUT", "/api/users/%s/actions/key/reset", ""},
	{"demoted", "PUT", "/api/users/%s", `{"user_permissions":{"apis":"read"}}`},
	{"deactivated", "PUT", "/api/users/%s", `{"active":false}`},
	{"deleted", "DELETE", "/api/users/%s", ""},
}

// checkBootstrapSurvives runs every mutation, restarting between them
// (restart stops every replica and starts them again), and checks on every
// replica that the token is an active admin: it lists users and changes
// another admin, which only an admin may do. The token's user never carries
// the token's hash in its e-mail.
func checkBootstrapSurvives(t *testing.T, restart func() []*instance) {
	insts := restart()
	secondID, second := insts[0].createUser(`{"IsAdmin":"admin"}`)
	hashHex := sha256.Sum256([]byte(adminToken))
	for _, m := range bootstrapMutations {
		uid := insts[0].tokenUserID()
		r := insts[0].do(m.method, fmt.Sprintf(m.path, uid), second, nilIfEmpty(m.body))
		expect(t, m.name+": the other admin changes the bootstrap user", r, 200, "")
		if m.name != "demoted" {
			expect(t, m.name+": the token is refused until the restart", insts[len(insts)-1].admin("GET", "/api/users", nil), 401, "")
		}
		insts = restart()
		for i, in := range insts {
			what := fmt.Sprintf("%s, restarted, replica %d", m.name, i)
			expect(t, what+": the token lists users", in.admin("GET", "/api/users?p=0", nil), 200, "")
			expect(t, what+": the token changes an admin", in.admin("PUT", "/api/users/"+secondID, `{"last_name":"`+m.name+`"}`), 200, "")
		}
		u := insts[0].admin("GET", "/api/users/"+insts[0].tokenUserID(), nil).json(t)
		email, _ := u["email_address"].(string)
		if u["active"] != true || !strings.HasPrefix(email, "bootstrap-admin") || strings.Contains(email, hex.EncodeToString(hashHex[:6])) {
			t.Errorf("%s: the token's user after the restart: %v", m.name, u)
		}
	}
}

// TestBootstrapSurvivesRestarts on bbolt: the bootstrap user re-keyed,
// demoted, deactivated or deleted; at the next start the token is an active
// admin again, and the service starts (the re-keyed case made it exit at
// every start before: conflict on the bootstrap e-mail).
func TestBootstrapSurvivesRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and restarts it")
	}
	t.Parallel() // its own store, a process on 127.0.0.1:0
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "management.db")
	var p *binproc.Process
	checkBootstrapSurvives(t, func() []*instance {
		if p != nil {
			p.Stop(t, 15*time.Second)
		}
		p = startBinary(t, bin, db)
		return processes(t, p)
	})
}

// TestBootstrapSurvivesRestartsOnEtcd: the same with two replicas on one
// etcd prefix, both restarted together after each change.
func TestBootstrapSurvivesRestartsOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs etcd")
	}
	t.Parallel() // its own etcd, processes on 127.0.0.1:0
	c := etcdtest.Start(t, 1)
	bin := buildBinary(t)
	const prefix = "/gatehouse-test/bootstrap/"
	var ps []*binproc.Process
	checkBootstrapSurvives(t, func() []*instance {
		for _, p := range ps {
			p.Stop(t, 15*time.Second)
		}
		ps = []*binproc.Process{startEtcdBinary(t, bin, c.Endpoints(), prefix), startEtcdBinary(t, bin, c.Endpoints(), prefix)}
		return processes(t, ps...)
	})
}

// TestDeactivationOnEveryReplica: a user deactivated through one replica is
// refused by the other at once, and reactivated through the other works on
// the first at once, with the same key.
func TestDeactivationOnEveryReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs etcd")
	}
	t.Parallel() // its own etcd, processes on 127.0.0.1:0
	c := etcdtest.Start(t, 1)
	bin := buildBinary(t)
	const prefix = "/gatehouse-test/deactivation/"
	insts := processes(t, startEtcdBinary(t, bin, c.Endpoints(), prefix), startEtcdBinary(t, bin, c.Endpoints(), prefix))
	a, b := insts[0], insts[1]
	id, key := a.createUser(`{"apis":"read"}`)
	for round := range 5 {
		expect(t, fmt.Sprint("round ", round, ": works on b"), b.do("GET", "/api/apis", key, nil), 200, "")
		expect(t, "deactivate on a", a.admin("PUT", "/api/users/"+id, `{"active":false}`), 200, "")
		expect(t, "refused on b at once", b.do("GET", "/api/apis", key, nil), 401, mgmtErr("Not authorised"))
		expect(t, "refused on a", a.do("GET", "/api/apis", key, nil), 401, "")
		expect(t, "reactivate on b", b.admin("PUT", "/api/users/"+id, `{"active":true}`), 200, "")
		expect(t, "works on a at once", a.do("GET", "/api/apis", key, nil), 200, "")
	}
}

// TestBootstrapRotation (issue 32): a restart with a new --bootstrap-token
// retires the previous token's credential (401 from then on), audited; the
// same token again retires nothing.
func TestBootstrapRotation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	const newToken = "rotated-admin-token-0123456789abcdef"
	for _, token := range []string{adminToken, adminToken, newToken} {
		servertest.Start(t, Serve, db, token).Stop()
	}
	in := &instance{t: t, base: servertest.Start(t, Serve, db, newToken).Base}
	expect(t, "the old token", in.do("GET", "/api/users", adminToken, nil), 401, "")
	r := in.do("GET", "/api/audit-logs?p=0&user_id=service", newToken, nil)
	expect(t, "audit log", r, 200, "")
	if n := strings.Count(string(r.body), "RETIRE bootstrap credential"); n != 1 {
		t.Errorf("%d retirements audited, want 1: %s", n, r.body)
	}
	var users struct {
		Users []struct {
			Email string `json:"email_address"`
		} `json:"users"`
	}
	json.Unmarshal(in.do("GET", "/api/users?p=0", newToken, nil).body, &users)
	if len(users.Users) != 1 {
		t.Errorf("users after a rotation: %+v, want the new bootstrap admin alone", users.Users)
	}
}
