package replicas

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// replica is one process of a service on the shared prefix.
type replica struct {
	proc   *binproc.Process
	token  string
	scheme string // put before a key in Authorization ("Bearer " for studio)
}

func startReplicas(t *testing.T, bin string, c *cluster, prefix, token string, n int) []*replica {
	t.Helper()
	var out []*replica
	for range n {
		p := binproc.Start(t, bin, []string{
			"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
			"--store", "etcd", "--etcd-endpoints", c.endpoints(), "--etcd-prefix", prefix,
			"--bootstrap-token", token,
		}, os.Environ(), nil, t.TempDir())
		scheme := ""
		if strings.HasSuffix(bin, "studio") {
			scheme = "Bearer "
		}
		out = append(out, &replica{proc: p, token: token, scheme: scheme})
	}
	return out
}

var client = &http.Client{Timeout: 30 * time.Second}

type answer struct {
	status int
	body   string
	took   time.Duration
}

func (r *replica) call(t *testing.T, method, path, key, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+r.proc.HTTPAddr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", r.scheme+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, body: string(b), took: time.Since(start)}
}

func llmBody(name string) string {
	return fmt.Sprintf(`{"data":{"type":"llm-settings","attributes":{"model_name":%q}}}`, name)
}

func idOf(t *testing.T, a answer) string {
	t.Helper()
	var doc struct {
		Data struct {
			ID         string         `json:"id"`
			Attributes map[string]any `json:"attributes"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(a.body), &doc); err != nil || doc.Data.ID == "" {
		t.Fatalf("no id in %s (%v)", a.body, err)
	}
	return doc.Data.ID
}

// TestStudioReplicas runs two studio processes on one prefix of a 3-member
// etcd cluster (real etcd processes) through concurrent creates, a user
// deleted on one replica, a leader stop under write load, and a quorum loss.
func TestStudioReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs a 3-member etcd cluster")
	}
	t.Parallel() // its own etcd cluster and replicas on free ports; mostly waits on etcd
	bins, etcdBin := binaries(t)
	c := startCluster(t, etcdBin, 3)
	token := binproc.RandomToken(t)
	rs := startReplicas(t, bins["studio"], c, "/replicas/studio/", token, 2)

	t.Run("ConcurrentCreatesGetUniqueIDs", func(t *testing.T) {
		var mu sync.Mutex
		ids := map[string]int{}
		var wg sync.WaitGroup
		for w := range 6 {
			r := rs[w%len(rs)]
			wg.Go(func() {
				for i := range 5 {
					a := r.call(t, "POST", "/api/v1/llm-settings", token, llmBody(fmt.Sprintf("m-%d-%d", w, i)))
					if a.status != http.StatusCreated {
						t.Errorf("create: %d %s", a.status, a.body)
						return
					}
					mu.Lock()
					ids[idOf(t, a)]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for id, n := range ids {
			if n > 1 {
				t.Errorf("id %s handed out %d times", id, n)
			}
		}
		if len(ids) != 30 {
			t.Errorf("%d distinct ids, want 30", len(ids))
		}
	})

	t.Run("DeletedUserRefusedAtOnceOnTheOtherReplica", func(t *testing.T) {
		a := rs[0].call(t, "POST", "/api/v1/users", token,
			`{"data":{"type":"users","attributes":{"email":"ops@example.com","name":"Ops","is_admin":true}}}`)
		if a.status != http.StatusCreated {
			t.Fatalf("create user: %d %s", a.status, a.body)
		}
		var doc struct {
			Data struct {
				ID         string `json:"id"`
				Attributes struct {
					APIKey string `json:"api_key"`
				} `json:"attributes"`
			} `json:"data"`
		}
		json.Unmarshal([]byte(a.body), &doc)
		key := doc.Data.Attributes.APIKey
		if got := rs[1].call(t, "GET", "/api/v1/llm-settings", key, ""); got.status != http.StatusOK {
			t.Fatalf("the new key on the other replica: %d %s", got.status, got.body)
		}
		if got := rs[0].call(t, "DELETE", "/api/v1/users/"+doc.Data.ID, token, ""); got.status != http.StatusNoContent {
			t.Fatalf("delete user: %d %s", got.status, got.body)
		}
		if got := rs[1].call(t, "GET", "/api/v1/llm-settings", key, ""); got.status != http.StatusUnauthorized {
			t.Errorf("the deleted user's key on the other replica: %d %s, want 401 at once", got.status, got.body)
		}
	})

	t.Run("LeaderStopLosesNoAcknowledgedWrite", func(t *testing.T) {
		var (
			mu      sync.Mutex
			acked   []string
			after   int
			stopped bool
		)
		done := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			r := rs[w%len(rs)]
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					a := r.call(t, "POST", "/api/v1/llm-settings", token, llmBody(fmt.Sprintf("load-%d-%d", w, i)))
					switch a.status {
					case http.StatusCreated:
						mu.Lock()
						acked = append(acked, idOf(t, a))
						if stopped {
							after++
						}
						mu.Unlock()
					case http.StatusServiceUnavailable:
						// Not acknowledged during the election.
					default:
						t.Errorf("write during the leader change: %d %s (want 201 or 503)", a.status, a.body)
						return
					}
				}
			})
		}
		waitUntil(t, 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 20 })
		leader := c.leader()
		c.stop(leader)
		mu.Lock()
		stopped = true
		mu.Unlock()
		waitUntil(t, 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return after >= 20 })
		close(done)
		wg.Wait()
		for _, id := range acked {
			for i, r := range rs {
				if a := r.call(t, "GET", "/api/v1/llm-settings/"+id, token, ""); a.status != http.StatusOK {
					t.Errorf("acknowledged record %s on replica %d: %d %s", id, i, a.status, a.body)
				}
			}
		}
		c.start(leader)
		c.waitHealthy(leader)
	})

	t.Run("LinearizableReadsAndWrites", func(t *testing.T) {
		linearizableHistory(t, rs, token, nil)
	})

	t.Run("LinearizableThroughALeaderStop", func(t *testing.T) {
		linearizableHistory(t, rs, token, func() {
			time.Sleep(300 * time.Millisecond)
			leader := c.leader()
			c.stop(leader)
			time.Sleep(2 * time.Second)
			c.start(leader)
			c.waitHealthy(leader)
		})
	})

	t.Run("QuorumLossIs503ThenRecovers", func(t *testing.T) {
		leader := c.leader()
		down := []int{(leader + 1) % 3, (leader + 2) % 3}
		for _, i := range down {
			c.stop(i)
		}
		for i, r := range rs {
			for _, req := range [][2]string{{"POST", "/api/v1/llm-settings"}, {"GET", "/api/v1/llm-settings"}, {"GET", "/readyz"}} {
				body := ""
				if req[0] == "POST" {
					body = llmBody("during-loss")
				}
				a := r.call(t, req[0], req[1], token, body)
				if a.status != http.StatusServiceUnavailable {
					t.Errorf("replica %d %s %s without quorum: %d %s, want 503", i, req[0], req[1], a.status, a.body)
				}
				if !strings.Contains(a.body, "store unavailable") {
					t.Errorf("replica %d %s %s: body %s does not say store unavailable", i, req[0], req[1], a.body)
				}
				// A hang check, not a speed goal.
				if a.took > 10*time.Second {
					t.Errorf("replica %d %s %s took %s without quorum", i, req[0], req[1], a.took)
				}
			}
		}
		for _, i := range down {
			c.start(i)
		}
		for i, r := range rs {
			waitUntil(t, 30*time.Second, func() bool {
				return r.call(t, "POST", "/api/v1/llm-settings", token, llmBody("after")).status == http.StatusCreated
			})
			if a := r.call(t, "GET", "/readyz", "", ""); a.status != http.StatusOK {
				t.Errorf("replica %d /readyz after recovery: %d", i, a.status)
			}
		}
	})
}

func waitUntil(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
