package tykgwtest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Dashboard says how to run a real Tyk Gateway (make test-gateway's
// TYK_GATEWAY binary) in dashboard mode against management.
type Dashboard struct {
	Bin        string // the gateway binary
	Port       int    // its listen port on 127.0.0.1
	Management string // management's HTTP base URL (APIs and policies come from it)
	Redis      string // host:port of the Redis it shares with management
	NodeSecret string // management's node secret
	APISecret  string // the gateway API's secret (its "secret"), for the key routes
}

// StartDashboard runs the gateway until the test ends and waits (up to a
// minute) until it answers /hello. Keys are hashed with murmur64, which
// clears the gateway's session cache when a key changes (with Tyk's default
// hash, v5.11.1 serves a changed or deleted key from the cache for 10 s).
// Its output is logged when the test fails.
func StartDashboard(t testing.TB, d Dashboard) {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"apps", "policies", "middleware", "templates"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "templates", "error.json"), []byte(`{"error": "{{.Message}}"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	host, rport, err := net.SplitHostPort(d.Redis)
	if err != nil {
		t.Fatalf("redis address %q: %v", d.Redis, err)
	}
	rp, _ := strconv.Atoi(rport)
	conf := map[string]any{
		"listen_address": "127.0.0.1", "listen_port": d.Port, "secret": d.APISecret, "node_secret": d.NodeSecret,
		"hash_keys": true, "hash_key_function": "murmur64",
		"template_path": filepath.Join(dir, "templates"), "app_path": filepath.Join(dir, "apps"),
		"middleware_path": filepath.Join(dir, "middleware"), "use_db_app_configs": true,
		"db_app_conf_options":        map[string]any{"connection_string": d.Management},
		"policies":                   map[string]any{"policy_source": "service", "policy_connection_string": d.Management},
		"disable_dashboard_zeroconf": true, "slave_options": map[string]any{"use_rpc": false},
		"storage":          map[string]any{"type": "redis", "host": host, "port": rp},
		"enable_analytics": false, "enable_jsvm": false, "uptime_tests": map[string]any{"disable": true},
		"health_check":      map[string]any{"enable_health_checks": false},
		"coprocess_options": map[string]any{"enable_coprocess": false},
	}
	raw, _ := json.Marshal(conf)
	confPath := filepath.Join(dir, "tyk.conf")
	if err := os.WriteFile(confPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "gateway.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(d.Bin, "--conf", confPath)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the gateway: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			if len(out) > 6000 {
				out = out[len(out)-6000:]
			}
			t.Logf("gateway output (tail):\n%s", out)
		}
	})
	hello := fmt.Sprintf("http://127.0.0.1:%d/hello", d.Port)
	deadline := time.Now().Add(time.Minute)
	for {
		if r, err := http.Get(hello); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not answer %s within a minute", hello)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
