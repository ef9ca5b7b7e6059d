package replicas

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// createEverywhere sends n creates through each replica at once (three
// goroutines per replica) and returns every id handed out, failing on any
// answer but want or an id handed out twice.
func createEverywhere(t *testing.T, rs []*replica, path string, want, n int, body func(w, i int) string, id func(answer) string) {
	t.Helper()
	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for w := range 3 * len(rs) {
		r := rs[w%len(rs)]
		wg.Go(func() {
			for i := range n {
				a := r.call(t, "POST", path, r.token, body(w, i))
				if a.status != want {
					t.Errorf("POST %s: %d %s", path, a.status, a.body)
					return
				}
				mu.Lock()
				ids[id(a)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for id, k := range ids {
		if k > 1 {
			t.Errorf("%s: id %s handed out %d times", path, id, k)
		}
	}
	if len(ids) != 3*len(rs)*n {
		t.Errorf("%s: %d distinct ids, want %d", path, len(ids), 3*len(rs)*n)
	}
}

func field(t *testing.T, a answer, name string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(a.body), &doc); err != nil {
		t.Fatalf("%s: %v", a.body, err)
	}
	return fmt.Sprint(doc[name])
}

// TestManagementAndPortalReplicas runs two processes of management and of
// portal, each service on its own prefix of one 3-member cluster of etcd
// processes: concurrent creates through both replicas get unique ids, and a
// management user deleted on one replica is refused at once on the other.
func TestManagementAndPortalReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs a 3-member etcd cluster")
	}
	t.Parallel() // its own etcd cluster and replicas on free ports; mostly waits on etcd
	bins, etcdBin := binaries(t)
	c := startCluster(t, etcdBin, 3)
	token := binproc.RandomToken(t)
	mgmt := startReplicas(t, bins["management"], c, "/replicas/management/", token, 2)
	portal := startReplicas(t, bins["portal"], c, "/replicas/portal/", token, 2)

	t.Run("PortalConcurrentCreates", func(t *testing.T) {
		createEverywhere(t, portal, "/portal-api/products", http.StatusCreated, 5,
			func(w, i int) string { return fmt.Sprintf(`{"Name":"product-%d-%d"}`, w, i) },
			func(a answer) string { return field(t, a, "ID") })
		createEverywhere(t, portal, "/portal-api/tags", http.StatusCreated, 3,
			func(w, i int) string { return fmt.Sprintf(`{"Name":"tag-%d-%d"}`, w, i) },
			func(a answer) string { return field(t, a, "ID") })
	})

	t.Run("ManagementConcurrentCreates", func(t *testing.T) {
		createEverywhere(t, mgmt, "/api/apis", http.StatusOK, 5,
			func(w, i int) string {
				return fmt.Sprintf(`{"api_definition":{"name":"api-%d-%d","use_keyless":true,"proxy":{"listen_path":"/api-%d-%d/","target_url":"http://upstream.test"}}}`, w, i, w, i)
			},
			func(a answer) string { return field(t, a, "ID") + "/" + field(t, a, "Meta") })
	})

	t.Run("ManagementDeletedUserRefusedAtOnce", func(t *testing.T) {
		a := mgmt[0].call(t, "POST", "/api/users", token,
			`{"first_name":"Op","last_name":"Erator","email_address":"ops@example.com","user_permissions":{"IsAdmin":"admin"}}`)
		if a.status != http.StatusOK {
			t.Fatalf("create user: %d %s", a.status, a.body)
		}
		id, key := field(t, a, "ID"), field(t, a, "access_key")
		if got := mgmt[1].call(t, "GET", "/api/apis", key, ""); got.status != http.StatusOK {
			t.Fatalf("the new key on the other replica: %d %s", got.status, got.body)
		}
		if got := mgmt[0].call(t, "DELETE", "/api/users/"+id, token, ""); got.status != http.StatusOK {
			t.Fatalf("delete user: %d %s", got.status, got.body)
		}
		if got := mgmt[1].call(t, "GET", "/api/apis", key, ""); got.status != http.StatusUnauthorized {
			t.Errorf("the deleted user's key on the other replica: %d %s, want 401 at once", got.status, got.body)
		}
	})
}
