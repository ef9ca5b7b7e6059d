package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/freeport"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
)

// gatewayBlockRE finds the ```bash blocks of README.md: the ones that need
// a Tyk Gateway (TestREADMEExamples runs the ```sh ones).
var gatewayBlockRE = regexp.MustCompile("(?ms)^```bash\n(.*?)^```")

// TestRunGateway follows the README's "Running Tyk Gateways from
// Gatehouse" as a newcomer does: `make run-gateway` (its recipe,
// tools/run.sh with RUN_GATEWAY=1, on free ports, in a copy of the layout it
// expects), then the gateway command it prints with the tyk.conf it wrote,
// then the README's ```bash blocks. With TYK_GATEWAY (make test-gateway) the
// gateway is a real Tyk Gateway and both blocks must serve the open API and,
// with the key management issued, the keyed one; without it the gateway
// double (pkg/tykgwtest) reads the same tyk.conf and must load both APIs the
// first block creates.
func TestRunGateway(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the three binaries; skipped with -short")
	}
	for _, tool := range []string{"bash", "curl", "flock", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make test installs redis-server): %v", tool, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range gatewayBlockRE.FindAllStringSubmatch(string(readme), -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) != 2 {
		t.Fatalf("README.md has %d ```bash blocks, want the two of \"Running Tyk Gateways from Gatehouse\"", len(blocks))
	}

	root := t.TempDir()
	for _, d := range []string{"tools", "bin"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile(filepath.Join(repoRoot, "tools", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tools", "run.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	bins, err := builtBinaries()
	if err != nil {
		t.Fatal(err)
	}
	for svc, bin := range bins {
		if err := os.Symlink(bin, filepath.Join(root, "bin", svc)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"RUN_GATEWAY=1"}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "M" && name != "GW" && name != "MGMT_KEY" {
			env = append(env, kv)
		}
	}
	addr := map[string]string{}
	for _, v := range []string{"RUN_STUDIO_HTTP", "RUN_STUDIO_GRPC", "RUN_MANAGEMENT_HTTP", "RUN_MANAGEMENT_GRPC", "RUN_PORTAL_HTTP", "RUN_PORTAL_GRPC", "RUN_PORTAL_SITE", "RUN_REDIS", "RUN_GATEWAY_PORT"} {
		addr[v] = freeport.Addr(t)
		value := addr[v]
		if v == "RUN_GATEWAY_PORT" {
			value = value[strings.LastIndex(value, ":")+1:]
		}
		env = append(env, v+"="+value)
	}

	cmd := exec.Command("bash", "tools/run.sh")
	cmd.Dir, cmd.Env = root, env
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("make run-gateway after SIGTERM: %v, want exit status 0", err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("make run-gateway still runs 30 s after SIGTERM")
		}
		if t.Failed() {
			t.Logf("make run-gateway printed:\n%s", out)
		}
	})
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(out.String(), "serves every active API of management"); time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("make run-gateway exited: %v\n%s", err, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no gateway block within 60 s:\n%s", out)
		}
	}
	gatewayCmd := regexp.MustCompile(`(?m)^\s+(\S+) --conf (data/gateway/tyk\.conf)$`).FindStringSubmatch(out.String())
	if gatewayCmd == nil {
		t.Fatalf("make run-gateway printed no gateway command (<tyk> --conf data/gateway/tyk.conf):\n%s", out)
	}

	// The tyk.conf is complete: what a v5 gateway needs to start and to find
	// management, and nothing a reader of data/ should see.
	confPath := filepath.Join(root, gatewayCmd[2])
	raw, err := os.ReadFile(confPath)
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		ListenPort   int    `json:"listen_port"`
		Secret       string `json:"secret"`
		NodeSecret   string `json:"node_secret"`
		TemplatePath string `json:"template_path"`
		UseDB        bool   `json:"use_db_app_configs"`
		DB           struct {
			ConnectionString string `json:"connection_string"`
		} `json:"db_app_conf_options"`
		Storage struct {
			Type string `json:"type"`
			Host string `json:"host"`
			Port int    `json:"port"`
		} `json:"storage"`
	}
	if err := json.Unmarshal(raw, &conf); err != nil {
		t.Fatalf("data/gateway/tyk.conf: %v\n%s", err, raw)
	}
	mgmt := "http://" + addr["RUN_MANAGEMENT_HTTP"]
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	nodeSecret, apiSecret := read("node-secret"), read("gateway-secret")
	for what, ok := range map[string]bool{
		"listen_port is RUN_GATEWAY_PORT":         addr["RUN_GATEWAY_PORT"] == "127.0.0.1:"+strconv.Itoa(conf.ListenPort),
		"secret is data/gateway-secret":           conf.Secret == apiSecret && len(apiSecret) >= 32,
		"node_secret is data/node-secret":         conf.NodeSecret == nodeSecret && len(nodeSecret) >= 32 && nodeSecret != apiSecret,
		"use_db_app_configs":                      conf.UseDB && conf.DB.ConnectionString == mgmt,
		"storage is the Redis started":            conf.Storage.Type == "redis" && conf.Storage.Host+":"+strconv.Itoa(conf.Storage.Port) == addr["RUN_REDIS"],
		"template_path holds the error templates": fileExists(filepath.Join(conf.TemplatePath, "error.json")),
	} {
		if !ok {
			t.Errorf("data/gateway/tyk.conf: want %s:\n%s", what, raw)
		}
	}
	for _, name := range []string{"data/gateway/tyk.conf", "data/node-secret", "data/gateway-secret"} {
		if fi, err := os.Stat(filepath.Join(root, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", name, err, fi.Mode().Perm())
		}
	}

	blockEnv := append(os.Environ(), "M="+mgmt+"/api", "GW=http://127.0.0.1:"+strconv.Itoa(conf.ListenPort))
	run := func(i int) string {
		t.Helper()
		c := exec.Command("bash", "-e", "-c", blocks[i])
		c.Dir, c.Env = root, blockEnv
		b, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("README gateway block %d: %v\n%s", i+1, err, b)
		}
		return string(b)
	}

	if bin := os.Getenv("TYK_GATEWAY"); bin != "" {
		gw := exec.Command(bin, "--conf", gatewayCmd[2])
		gw.Dir = root
		logs := &lockedBuffer{}
		gw.Stdout, gw.Stderr = logs, logs
		if err := gw.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			gw.Process.Kill()
			gw.Wait()
			if t.Failed() {
				t.Logf("gateway log:\n%s", logs)
			}
		})
		for range 2 { // the blocks run again as they are
			if created := run(0); strings.Count(created, `"Status":"OK"`) != 2 {
				t.Fatalf("README gateway block 1 did not create both APIs:\n%s", created)
			}
			served := run(1)
			if !strings.Contains(served, `{"status":"ok"}`) || !regexp.MustCompile(`without the key: 40[13]`).MatchString(served) ||
				strings.Count(served, `{"status":"ok"}`) != 2 {
				t.Fatalf("README gateway block 2: want the open API served, the keyed one refused without its key and served with it:\n%s", served)
			}
		}
		return
	}

	double := tykgwtest.Start(tykgwtest.Config{Dashboard: conf.DB.ConnectionString, NodeSecret: conf.NodeSecret,
		Redis: conf.Storage.Host + ":" + strconv.Itoa(conf.Storage.Port), RegisterRetry: 200 * time.Millisecond})
	t.Cleanup(double.Stop)
	if created := run(0); strings.Count(created, `"Status":"OK"`) != 2 {
		t.Fatalf("README gateway block 1 did not create both APIs:\n%s", created)
	}
	err = double.WaitFor(15*time.Second, func(g *tykgwtest.Gateway) bool {
		apis := g.APIs()
		return listenPath(apis["gw-open"]) == "/gw-open/" && listenPath(apis["gw-keyed"]) == "/gw-keyed/"
	})
	if err != nil {
		t.Fatalf("the gateway double did not load the README's two APIs: %v (it has %d)", err, len(double.APIs()))
	}
}

func listenPath(a tykgwtest.API) string {
	proxy, _ := a.Definition["proxy"].(map[string]any)
	lp, _ := proxy["listen_path"].(string)
	return lp
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
