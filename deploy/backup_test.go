package deploy

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// TestBackupUnderLoadRestores takes a backup of a running studio while
// clients keep writing, restores it as an operator would (a fresh process
// on the backup file), and finds there every write acknowledged before the
// backup was asked for. Only an admin gets a backup, and the backup is in
// the audit log.
func TestBackupUnderLoadRestores(t *testing.T) {
	token := binproc.RandomToken(t)
	p := startStudio(t, filepath.Join(t.TempDir(), "studio.db"), token)
	base := "http://" + p.HTTPAddr + "/api/v1"
	do := func(method, url, key, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%s %s: reading the answer: %v", method, url, err)
		}
		return res, b
	}

	var mu sync.Mutex
	var acked []string // ids of creates answered 201, in order
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for !stop.Load() {
				res, body := do(http.MethodPost, base+"/llm-settings", token, `{"data":{"type":"llm-settings","attributes":{"model_name":"m"}}}`)
				var created struct {
					Data struct{ ID string } `json:"data"`
				}
				if res.StatusCode != http.StatusCreated || json.Unmarshal(body, &created) != nil {
					t.Errorf("create: %d %s", res.StatusCode, body)
					return
				}
				mu.Lock()
				acked = append(acked, created.Data.ID)
				mu.Unlock()
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	res, snapshot := do(http.MethodGet, base+"/admin/backup", token, "")
	stop.Store(true)
	wg.Wait()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/octet-stream" || len(snapshot) == 0 {
		t.Fatalf("backup: %d %s, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), len(snapshot))
	}
	if len(before) < 10 || len(acked) <= len(before) {
		t.Fatalf("%d writes before the backup, %d in all: the backup was not taken under load", len(before), len(acked))
	}

	// Only an admin: no key 401, a user's key 403.
	if res, _ := do(http.MethodGet, base+"/admin/backup", "", ""); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("backup without a key: %d, want 401", res.StatusCode)
	}
	_, body := do(http.MethodPost, base+"/users", token, `{"data":{"type":"users","attributes":{"email":"u@example.com","name":"U","is_admin":false}}}`)
	var user struct {
		Data struct {
			Attributes struct {
				APIKey string `json:"api_key"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &user); err != nil || user.Data.Attributes.APIKey == "" {
		t.Fatalf("create a user: %s", body)
	}
	if res, body := do(http.MethodGet, base+"/admin/backup", user.Data.Attributes.APIKey, ""); res.StatusCode != http.StatusForbidden || len(body) > 1000 {
		t.Errorf("backup with a non-admin key: %d (%d bytes), want 403", res.StatusCode, len(body))
	}
	if res, _ := do(http.MethodPost, base+"/admin/backup", token, ""); res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST to the backup: %d, Allow %q; want 405 with Allow: GET, HEAD", res.StatusCode, res.Header.Get("Allow"))
	}
	_, logs := do(http.MethodGet, base+"/audit-logs", token, "")
	if !strings.Contains(string(logs), `GET /api/v1/admin/backup`) {
		t.Errorf("the backup is not in the audit log: %s", logs)
	}
	p.Stop(t, 15*time.Second)

	// Restore: a fresh process on the backup file.
	restored := filepath.Join(t.TempDir(), "restored.db")
	if err := os.WriteFile(restored, snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	r := startStudio(t, restored, token)
	missing := 0
	for _, id := range before {
		res, body := do(http.MethodGet, "http://"+r.HTTPAddr+"/api/v1/llm-settings/"+id, token, "")
		if res.StatusCode != http.StatusOK {
			missing++
			if missing <= 5 {
				t.Errorf("llm-settings %s, acknowledged before the backup, after the restore: %d %s", id, res.StatusCode, body)
			}
		}
	}
	t.Logf("backup of %d bytes under load: %d writes acknowledged before it, %d found after the restore (%d missing); %d writes in all",
		len(snapshot), len(before), len(before)-missing, missing, len(acked))
	if strings.Contains(r.Output(), "new store created") {
		t.Errorf("the restored file was not used: %s", r.Output())
	}
	r.Stop(t, 15*time.Second)
}
