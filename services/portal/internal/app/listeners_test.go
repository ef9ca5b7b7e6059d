package app

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// The real binary's listeners and secrets (CONTRACT §0, "Listeners and
// secrets"; §3 "Public site").

func buildPortal(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bins, err := binproc.Build(filepath.Join("..", "..", "..", ".."), t.TempDir(), []string{"portal"})
	if err != nil {
		t.Fatal(err)
	}
	return bins["portal"]
}

// fetch answers a GET with the given Authorization ("" for none).
func fetch(t *testing.T, url, auth string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// TestBinaryListenersAndSecrets runs the portal with every listener and a
// bootstrap token on its command line: the site serves pages and nothing of
// the API, the admin port no page and no /metrics, the metrics listener
// /metrics, and the token appears in no log line, metric, debug answer or
// error body.
func TestBinaryListenersAndSecrets(t *testing.T) {
	bin := buildPortal(t)
	secret := binproc.RandomToken(t)
	p := binproc.Start(t, bin, []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--site-addr", "127.0.0.1:0",
		"--metrics-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "portal.db"),
		"--bootstrap-token", secret, "--max-conns", "8"}, nil, nil, "")
	if p.SiteAddr == "" || p.MetricsAddr == "" || p.DebugAddr == "" {
		t.Fatalf("the listening line names no site, metrics or debug address:\n%s", p.Output())
	}
	api, site := "http://"+p.HTTPAddr, "http://"+p.SiteAddr

	if code, ct, _ := fetch(t, site+"/", ""); code != 200 || !strings.HasPrefix(ct, "text/html") {
		t.Errorf("site /: %d %s", code, ct)
	}
	for _, path := range []string{"/portal-api/products", "/metrics", "/healthz", "/openapi.json"} {
		if code, ct, _ := fetch(t, site+path, secret); code != 404 || !strings.HasPrefix(ct, "text/html") {
			t.Errorf("site %s: %d %s, want the site's 404", path, code, ct)
		}
	}
	for _, path := range []string{"/", "/assets/site.css", "/metrics"} {
		if code, ct, _ := fetch(t, api+path, ""); code != 404 || ct != "application/json" {
			t.Errorf("admin port %s: %d %s, want the API's 404", path, code, ct)
		}
	}
	if code, _, _ := fetch(t, api+"/portal-api/products", secret); code != 200 {
		t.Errorf("admin port with the bootstrap key: %d", code)
	}

	// Secrets: a wrong key's answer, the metrics, the debug listener, the log.
	_, _, wrong := fetch(t, api+"/portal-api/products", secret+"x")
	_, _, metrics := fetch(t, "http://"+p.MetricsAddr+"/metrics", "")
	_, _, cmdline := fetch(t, "http://"+p.DebugAddr+"/debug/pprof/cmdline", "")
	_, _, vars := fetch(t, "http://"+p.DebugAddr+"/debug/vars", "")
	if !strings.Contains(metrics, "gatehouse_") || !strings.Contains(cmdline, "--bootstrap-token") || !strings.Contains(vars, "cmdline") {
		t.Fatalf("metrics, cmdline or vars missing:\n%.200s\n%s\n%.200s", metrics, cmdline, vars)
	}
	for what, text := range map[string]string{"error body": wrong, "metrics": metrics, "pprof cmdline": cmdline, "expvar": vars, "log": p.Output()} {
		if strings.Contains(text, secret) {
			t.Errorf("the bootstrap token appears in the %s", what)
		}
	}
	p.Stop(t, 15*time.Second)
}

// TestSiteConnectionsApart: anonymous readers holding every connection the
// site allows leave the admin API answering; one more site connection is 503.
func TestSiteConnectionsApart(t *testing.T) {
	bin := buildPortal(t)
	secret := binproc.RandomToken(t)
	const max = 8
	p := binproc.Start(t, bin, []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--site-addr", "127.0.0.1:0",
		"--db", filepath.Join(t.TempDir(), "portal.db"), "--bootstrap-token", secret, "--max-conns", fmt.Sprint(max)}, nil, nil, "")
	// keepAlive opens a connection to addr, has one request answered on it
	// (so it is accepted and counted) and leaves it open.
	keepAlive := func(addr string) (net.Conn, string) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a site connection: %v", err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return c, res.Status
	}
	for i := range max {
		if _, status := keepAlive(p.SiteAddr); !strings.HasPrefix(status, "200") {
			t.Fatalf("site connection %d: %s", i+1, status)
		}
	}
	if _, status := keepAlive(p.SiteAddr); !strings.HasPrefix(status, "503") {
		t.Errorf("site connection %d (over the cap): %s, want 503", max+1, status)
	}
	for i := range max - 1 { // the admin port has caps of its own
		if code, _, body := fetch(t, "http://"+p.HTTPAddr+"/portal-api/products", secret); code != 200 {
			t.Fatalf("admin request %d while the site is full: %d %s", i+1, code, body)
		}
	}
}

// TestDebugAddrAndTokenFile: a --debug-addr that is not loopback is refused
// (exit 2, naming --debug-addr-public) unless --debug-addr-public is given;
// --bootstrap-token-file keeps the key off the command line.
func TestDebugAddrAndTokenFile(t *testing.T) {
	bin := buildPortal(t)
	db := filepath.Join(t.TempDir(), "portal.db")
	out, code := binproc.RunToExit(t, bin, "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--site-addr", "127.0.0.1:0", "--db", db, "--debug-addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(out, "--debug-addr-public") || strings.Contains(out, "listening") {
		t.Errorf("public --debug-addr: exit %d, output %q; want 2 and a message naming --debug-addr-public", code, out)
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a refused start created the store")
	}

	secret := binproc.RandomToken(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := binproc.Start(t, bin, []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--site-addr", "127.0.0.1:0", "--db", db,
		"--debug-addr", "0.0.0.0:0", "--debug-addr-public", "--bootstrap-token-file", tokenFile}, nil, nil, "")
	if code, _, body := fetch(t, "http://"+p.HTTPAddr+"/portal-api/products", secret); code != 200 {
		t.Errorf("the key from --bootstrap-token-file (newline stripped): %d %s", code, body)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Cmd.Process.Pid))
	if err != nil || strings.Contains(string(cmdline), secret) {
		t.Errorf("the command line holds the key (%v)", err)
	}
	p.Stop(t, 15*time.Second)
}
