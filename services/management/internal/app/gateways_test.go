package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/pkg/redistest"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
	"github.com/gatehouse/gatehouse/services/management/internal/gateways"
)

const nodeSecret = "node-secret-for-tests-0123456789"

// startGateways runs the service with the node secret and, when redis is
// not empty, reload notifications to that Redis.
func startGateways(t testing.TB, db, redis string) *instance {
	t.Helper()
	if db == "" {
		db = t.TempDir() + "/management.db"
	}
	in := servertest.Start(t, Serve, db, adminToken, func(c *config.Config) {
		c.Gateways = config.Gateways{NodeSecret: nodeSecret, Redis: redis}
	})
	return &instance{t: t, db: db, base: in.Base, conn: in.Conn, stop: in.Stop}
}

func TestGatewayRoutesNeedTheSecret(t *testing.T) {
	off := start(t, "")
	for _, p := range []string{"/register/node", "/register/ping", "/system/apis", "/system/policies"} {
		r := off.do("GET", p, nodeSecret, nil)
		if r.status != 404 {
			t.Errorf("without --node-secret: GET %s: %d, want 404", p, r.status)
		}
	}

	in := startGateways(t, "", "")
	failures := authFailures(t, in)
	for _, p := range []string{"/register/node", "/register/ping", "/system/apis", "/system/policies"} {
		for _, key := range []string{"", "wrong", "Bearer " + nodeSecret, adminToken} {
			r := in.do("GET", p, key, nil, "x-tyk-nodeid", "solo-1", "x-tyk-nonce", "n")
			if r.status != 403 || strings.Contains(strings.ToLower(string(r.body)), "nonce") || strings.Contains(string(r.body), "No node ID Found") {
				t.Errorf("GET %s with authorization %q: %d %s; want 403 without nonce words", p, key, r.status, r.body)
			}
		}
	}
	r := in.do("POST", "/register/node", nodeSecret, strings.Repeat("x", 1<<20))
	if r.status != 405 || r.header.Get("Allow") != "GET" {
		t.Errorf("POST /register/node: %d, Allow %q", r.status, r.header.Get("Allow"))
	}

	// register, beat, list, de-register
	reg := in.do("GET", "/register/node", nodeSecret, nil, "x-tyk-hostname", "gw-1", "x-tyk-session-id", "s-1")
	expect(t, "register", reg, 200, "")
	v := reg.json(t)
	id, _ := v["Message"].(map[string]any)["NodeID"].(string)
	if v["Status"] != "ok" || len(id) != 24 || v["Nonce"] == "" {
		t.Fatalf("register: %s", reg.body)
	}
	again := in.do("GET", "/register/node", nodeSecret, nil, "x-tyk-hostname", "gw-1", "x-tyk-session-id", "s-1").json(t)
	if again["Message"].(map[string]any)["NodeID"] != id || again["Nonce"] == v["Nonce"] {
		t.Fatalf("re-registration of one process: %v, want node %s and a fresh nonce", again, id)
	}
	ping := in.do("GET", "/register/ping", nodeSecret, nil, "x-tyk-nodeid", id, "x-tyk-nonce", "anything")
	expect(t, "ping", ping, 200, "")
	if m, ok := ping.json(t)["Message"].(map[string]any); !ok || len(m) != 0 {
		t.Fatalf("ping Message must be an empty object: %s", ping.body)
	}
	nodes := in.admin("GET", "/api/system/nodes", nil).json(t)["nodes"].([]any)
	if len(nodes) != 1 || nodes[0].(map[string]any)["id"] != id || nodes[0].(map[string]any)["hostname"] != "gw-1" {
		t.Fatalf("nodes: %v", nodes)
	}
	if m := metric(t, in, "gatehouse_gateway_nodes"); m != "1" {
		t.Errorf("gatehouse_gateway_nodes %q, want 1", m)
	}
	expect(t, "de-register", in.do("DELETE", "/system/node", nodeSecret, nil, "x-tyk-nodeid", id), 200, "")
	expect(t, "nodes after", in.admin("GET", "/api/system/nodes", nil), 200, `{"nodes":[]}`)
	expect(t, "empty apis", in.do("GET", "/system/apis", nodeSecret, nil), 200, "")

	// Registrations and de-registrations are audited (issue 32), as the gateway's.
	logs, _ := in.auditLogs("?p=0&user_id=gateway")
	var actions []string
	for _, e := range logs {
		if e.ObjectID != id || e.Status != 200 {
			t.Errorf("gateway audit entry %+v, want node %s and 200", e, id)
		}
		actions = append(actions, e.Action)
	}
	if got, want := strings.Join(actions, ", "), "DELETE /system/node, GET /register/node, GET /register/node"; got != want {
		t.Errorf("gateway audit entries %s, want %s", got, want)
	}
	// Wrong secrets are counted; past gateways.WrongFree from one address, slowed.
	if n := authFailures(t, in) - failures; n < 16 { // other tests may count theirs meanwhile
		t.Errorf("16 wrong node secrets counted %d times in gatehouse_auth_failures_total", n)
	}
	for range gateways.WrongFree - 16 {
		in.do("GET", "/register/ping", "wrong", nil)
	}
	begin := time.Now()
	expect(t, "a wrong secret past the free ones", in.do("GET", "/register/ping", "wrong", nil), 403, "")
	if took := time.Since(begin); took < gateways.WrongDelay {
		t.Errorf("wrong secret %d from one address answered in %v, want after %v", gateways.WrongFree+1, took, gateways.WrongDelay)
	}
}

// authFailures reads gatehouse_auth_failures_total{service="management"}.
func authFailures(t *testing.T, in *instance) int {
	t.Helper()
	const name = `gatehouse_auth_failures_total{service="management"} `
	for _, line := range strings.Split(string(in.do("GET", "/metrics", "", nil).body), "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// metric reads one unlabelled sample from /metrics.
func metric(t *testing.T, in *instance, name string) string {
	t.Helper()
	for line := range strings.SplitSeq(string(in.do("GET", "/metrics", "", nil).body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// TestGatewayDouble: a gateway double (registering, beating, verifying
// signatures, loading as the gateway does) runs from the service: it loads
// a classic API and a policy, is notified within 1 s of changes, sees a
// burst as a handful of notifications, and gets the changes made while
// Redis was down once it is back.
func TestGatewayDouble(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server and waits for heartbeats")
	}
	rd := redistest.Start(t)
	in := startGateways(t, "", "redis://"+rd.Addr)
	api := "9a7e0000000000000000000000000001"
	expect(t, "classic", in.admin("POST", "/api/apis", classicBody(api, "Gatewayed")), 200, "")
	r := in.admin("POST", "/api/portal/policies", `{"id":"gold","name":"Gold","rate":10,"per":1,"access_rights":{"`+api+`":{"api_id":"`+api+`","versions":["Default"]}}}`)
	expect(t, "policy", r, 200, "")

	gw := tykgwtest.Start(tykgwtest.Config{Dashboard: in.base, NodeSecret: nodeSecret, Redis: rd.Addr, RegisterRetry: 100 * time.Millisecond})
	defer gw.Stop()
	loaded := func(g *tykgwtest.Gateway) bool { return g.APIs()[api].Definition != nil && g.Policies()["gold"] != nil }
	if err := gw.WaitFor(10*time.Second, loaded); err != nil {
		t.Fatalf("the double did not load the API and the policy: %v %+v", err, gw.Stats())
	}
	def := gw.APIs()[api].Definition
	if fmt.Sprint(def["big"]) != "9007199254740993" || def["is_oas"] != nil {
		t.Fatalf("loaded definition: %v", def)
	}

	// a Tyk OAS API: the derived classic definition, is_oas true, beside the document
	oas := "9a7e0000000000000000000000000002"
	expect(t, "oas", in.admin("POST", "/api/apis/oas", oasDoc(oas, "OAS gatewayed", "/oas-gw/")), 200, "")
	if err := gw.WaitFor(5*time.Second, func(g *tykgwtest.Gateway) bool { return g.APIs()[oas].OAS != nil }); err != nil {
		t.Fatalf("the OAS API was not loaded: %+v", gw.Stats())
	}
	if d := gw.APIs()[oas].Definition; d["is_oas"] != true || d["name"] != "OAS gatewayed" || d["proxy"].(map[string]any)["listen_path"] != "/oas-gw/" {
		t.Fatalf("derived definition: %v", d)
	}

	// a change is announced and loaded within 1 s (plus the double's 1 s reload tick)
	changed := time.Now()
	expect(t, "update", in.admin("PUT", "/api/apis/"+api, classicBody(api, "Renamed")), 200, "")
	if err := gw.WaitFor(5*time.Second, func(g *tykgwtest.Gateway) bool { return g.APIs()[api].Definition["name"] == "Renamed" }); err != nil {
		t.Fatalf("the update was not loaded: %+v", gw.Stats())
	}
	notes := gw.Stats().Notifications
	if len(notes) == 0 || notes[len(notes)-1].Sub(changed) > time.Second {
		t.Errorf("notification %v after the commit, want within 1 s", notes[len(notes)-1].Sub(changed))
	}

	// a burst of 300 writes: a handful of notifications
	before := len(gw.Stats().Notifications)
	for i := range 300 {
		expect(t, "burst", in.admin("POST", "/api/apis", classicBody(fmt.Sprintf("b%031d", i), "Burst")), 200, "")
	}
	if err := gw.WaitFor(10*time.Second, func(g *tykgwtest.Gateway) bool { return len(g.APIs()) == 302 }); err != nil {
		t.Fatalf("burst not loaded: %d APIs", len(gw.APIs()))
	}
	time.Sleep(2 * time.Second) // the last round
	n := len(gw.Stats().Notifications) - before
	t.Logf("a burst of 300 writes: %d notifications", n)
	if n == 0 || n > 40 {
		t.Errorf("a burst of 300 writes sent %d notifications, want a handful", n)
	}

	// Redis down: writes succeed; the change is announced once Redis is back
	rd.Stop()
	expect(t, "policy while Redis is down", in.admin("PUT", "/api/portal/policies/gold", `{"id":"gold","name":"Gold while down"}`), 200, "")
	time.Sleep(500 * time.Millisecond)
	rd.Restart(t)
	if err := gw.WaitFor(20*time.Second, func(g *tykgwtest.Gateway) bool { return g.Policies()["gold"]["name"] == "Gold while down" }); err != nil {
		t.Fatalf("the change made while Redis was down never reached the double: %+v", gw.Stats())
	}
	if m := metric(t, in, `gatehouse_gateway_notifications_total{outcome="failed"}`); m == "" || m == "0" {
		t.Errorf("failed notifications not counted: %q", m)
	}

	st := gw.Stats()
	if st.BadSignatures != 0 || len(st.Pitfalls) != 0 {
		t.Fatalf("double: %d bad signatures, pitfalls %v", st.BadSignatures, st.Pitfalls)
	}
	for _, e := range st.Errors {
		if !strings.Contains(e, "connection refused") {
			t.Errorf("double error: %s", e)
		}
	}
	if id := gw.NodeID(); len(id) != 24 {
		t.Fatalf("node id %q", id)
	}
	if r := in.admin("GET", "/api/system/nodes", nil); !strings.Contains(string(r.body), gw.NodeID()) {
		t.Fatalf("nodes: %s", r.body)
	}
}

// TestGatewayNotificationsOnEtcdReplicas: two replicas on one etcd prefix,
// each with the node secret and the Redis: a write on either is announced
// once, by the replica that committed it, and either replica serves the
// other's writes to gateways.
func TestGatewayNotificationsOnEtcdReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd and redis-server")
	}
	t.Parallel() // its own etcd and Redis on free ports; mostly waits (3 s per replica for a second notification)
	c := etcdtest.Start(t, 1)
	rd := redistest.Start(t)
	onEtcd := func(cfg *config.Config) {
		cfg.Store, cfg.DBPath = config.StoreEtcd, ""
		cfg.Etcd = config.Etcd{Endpoints: c.Endpoints(), Prefix: "/gatehouse/management/"}
		cfg.Gateways = config.Gateways{NodeSecret: nodeSecret, Redis: "redis://" + rd.Addr}
	}
	var replicas []*instance
	for range 2 {
		in := servertest.Start(t, Serve, "", adminToken, onEtcd)
		replicas = append(replicas, &instance{t: t, base: in.Base, conn: in.Conn, stop: in.Stop})
	}
	sub := redis.NewClient(&redis.Options{Addr: rd.Addr})
	defer sub.Close()
	ps := sub.Subscribe(context.Background(), gateways.Channel)
	defer ps.Close()
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, in := range replicas {
		id := fmt.Sprintf("e7cd%028d", i)
		expect(t, "create on replica", in.admin("POST", "/api/apis", classicBody(id, "On replica")), 200, "")
		var got []string
		deadline := time.After(3 * time.Second)
	collect:
		for {
			select {
			case m := <-ps.Channel():
				var n gateways.Notification
				json.Unmarshal([]byte(m.Payload), &n)
				got = append(got, n.Command)
			case <-deadline:
				break collect
			}
		}
		if len(got) != 1 || got[0] != "ApiAdded" {
			t.Errorf("a create on replica %d was announced as %v, want one ApiAdded", i, got)
		}
		other := replicas[1-i]
		if r := other.do("GET", "/system/apis", nodeSecret, nil); !strings.Contains(string(r.body), id) {
			t.Errorf("replica %d does not serve replica %d's API to gateways", 1-i, i)
		}
	}
}
