package gatewayreplay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/freeport"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
)

const secret = "replay-secret"

// request is one request replayed against the classic API and its migration, at the same path below each
// listen path.
type request struct {
	method, path string
	header       map[string]string
	body         string
}

// check is a request and what may differ between the two answers: "status", "body" or "header:<name>". An
// expected difference must be seen and announced by a warning containing warning.
type check struct {
	req     request
	differs []string
	warning string
}

type scenario struct {
	name    string
	classic func(d map[string]any)
	checks  []check
}

// comparedHeaders are the response headers compared besides status and body.
var comparedHeaders = []string{"X-Tyk-Api-Expires", "Content-Type"}

func keyless(id string) map[string]any {
	return map[string]any{
		"api_id": id, "org_id": "default", "name": "Replay " + id, "active": true, "use_keyless": true,
		"proxy": map[string]any{"listen_path": "/" + id + "/", "strip_listen_path": true},
		"version_data": map[string]any{"not_versioned": true,
			"versions": map[string]any{"Default": map[string]any{"name": "Default", "use_extended_paths": true}}},
	}
}

func extended(d map[string]any, ep map[string]any) {
	d["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)["extended_paths"] = ep
}

func versioned(d map[string]any, v2 map[string]any) {
	d["definition"] = map[string]any{"location": "header", "key": "x-api-version"}
	v2["name"], v2["use_extended_paths"] = "v2", true
	d["version_data"] = map[string]any{"not_versioned": false, "default_version": "v1",
		"versions": map[string]any{"v1": map[string]any{"name": "v1", "use_extended_paths": true}, "v2": v2}}
}

var get = request{method: "GET", path: "/anything"}

var scenarios = []scenario{
	{name: "class 1 Default expires (not versioned)", classic: func(d map[string]any) {
		d["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)["expires"] = "3000-01-02 15:04"
	}, checks: []check{{req: get, differs: []string{"header:X-Tyk-Api-Expires"}, warning: "X-Tyk-Api-Expires response header is no longer sent"}}},
	{name: "class 2 unknown version", classic: func(d map[string]any) { versioned(d, map[string]any{}) }, checks: []check{
		{req: request{method: "GET", path: "/a", header: map[string]string{"x-api-version": "nosuch"}}, differs: []string{"status"},
			warning: "answered 404 instead of 403"},
		{req: request{method: "GET", path: "/a", header: map[string]string{"x-api-version": "v2"}}},
		{req: request{method: "GET", path: "/a", header: map[string]string{"x-api-version": "v1"}}},
		{req: request{method: "GET", path: "/a"}},
	}},
	{name: "class 2 default_version naming no version, with fallback", classic: func(d map[string]any) {
		versioned(d, map[string]any{})
		d["version_data"].(map[string]any)["default_version"] = "nosuch"
		d["definition"].(map[string]any)["fallback_to_default"] = true
	}, checks: []check{
		{req: request{method: "GET", path: "/a"}, differs: []string{"body"}, warning: `"nosuch" names no version`},
		{req: request{method: "GET", path: "/a", header: map[string]string{"x-api-version": "zzz"}}, differs: []string{"status"},
			warning: "answered 404 instead of 403"},
		{req: request{method: "GET", path: "/a", header: map[string]string{"x-api-version": "v2"}}},
	}},
	{name: "versioned API-level expiration (past): refuses nothing, only the header", classic: func(d map[string]any) {
		versioned(d, map[string]any{})
		d["expiration"] = "2001-01-01 00:00"
	}, checks: []check{
		{req: request{method: "GET", path: "/a", header: map[string]string{"x-api-version": "v2"}}, differs: []string{"header:X-Tyk-Api-Expires"},
			warning: `the X-Tyk-Api-Expires response header is no longer sent for version "v2"`},
		{req: request{method: "GET", path: "/a"}, differs: []string{"header:X-Tyk-Api-Expires"},
			warning: `the X-Tyk-Api-Expires response header is no longer sent for version "v1"`},
	}},
	{name: "class 3 expired version", classic: func(d map[string]any) { versioned(d, map[string]any{"expires": "2001-01-01 00:00"}) }, checks: []check{
		{req: request{method: "GET", path: "/a", header: map[string]string{"x-api-version": "v2"}}, differs: []string{"body"},
			warning: "once the version has expired"},
		{req: request{method: "GET", path: "/a", header: map[string]string{"x-api-version": "v1"}}},
	}},
	{name: "class 4 validate_json", classic: func(d map[string]any) {
		extended(d, map[string]any{"validate_json": []any{map[string]any{"path": "/orders", "method": "POST",
			"schema": map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}})
	}, checks: []check{
		{req: request{method: "POST", path: "/orders", header: map[string]string{"Content-Type": "application/json"}, body: `{}`},
			differs: []string{"body"}, warning: "a body the schema refuses"},
		{req: request{method: "POST", path: "/orders", header: map[string]string{"Content-Type": "application/json"}, body: `{"name":"a"}`}},
		{req: request{method: "POST", path: "/orders", header: map[string]string{"Content-Type": "text/plain"}, body: `{"name":"a"}`},
			differs: []string{"status", "body"}, warning: "any other Content-Type"},
		{req: request{method: "POST", path: "/other", body: `{}`}},
	}},
	{name: "class 5 validate_json on GET without a body", classic: func(d map[string]any) {
		extended(d, map[string]any{"validate_json": []any{map[string]any{"path": "/orders", "method": "GET",
			"schema": map[string]any{"type": "object"}}}})
	}, checks: []check{
		{req: request{method: "GET", path: "/orders"}, differs: []string{"status", "body"}, warning: "a request without a body"},
	}},
	{name: "error_overrides", classic: func(d map[string]any) {
		d["error_overrides"] = map[string]any{"500": []any{map[string]any{"response": map[string]any{"status_code": 503, "body": "overridden"}}}}
	}, checks: []check{{req: request{method: "GET", path: "/status/500"}}, {req: get}}},
	{name: "extended_paths with use_extended_paths false", classic: func(d map[string]any) {
		extended(d, map[string]any{"transform_headers": []any{map[string]any{"path": "/one", "method": "GET", "add_headers": map[string]any{"X-Echo": "one"}}}})
		d["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)["use_extended_paths"] = false
	}, checks: []check{
		{req: request{method: "GET", path: "/one"}, differs: []string{"body"}, warning: "ignores this version's extended_paths"},
		{req: request{method: "GET", path: "/two"}},
	}},
	{name: "empty-path transform_headers", classic: func(d map[string]any) {
		extended(d, map[string]any{"transform_headers": []any{
			map[string]any{"path": "/one", "method": "GET", "add_headers": map[string]any{"X-Echo": "one"}},
			map[string]any{"path": "", "method": "GET", "add_headers": map[string]any{"X-Echo": "all"}},
		}})
	}, checks: []check{
		{req: request{method: "GET", path: "/one"}}, {req: request{method: "GET", path: "/some/where"}},
		{req: request{method: "GET", path: "/"}}, {req: request{method: "POST", path: "/some/where"}},
	}},
	{name: "regular expression path segment", classic: func(d map[string]any) {
		extended(d, map[string]any{"transform_headers": []any{
			map[string]any{"path": "/old/[0-9]+", "method": "GET", "add_headers": map[string]any{"X-Echo": "number"}},
		}})
	}, checks: []check{
		{req: request{method: "GET", path: "/old/123"}},
		{req: request{method: "GET", path: "/old/abc"}, differs: []string{"body"}, warning: "matches this path as /old/{customRegex1}"},
	}},
}

// TestReplayThroughGateway: see the package documentation.
func TestReplayThroughGateway(t *testing.T) {
	bin := os.Getenv("TYK_GATEWAY")
	if bin == "" {
		t.Skip("TYK_GATEWAY is not set: this replay needs a Tyk Gateway binary (make test-gateway TYK_GATEWAY=<binary>); not part of make test")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("TYK_GATEWAY=%s: %v: no gateway binary, nothing replayed", bin, err)
	}
	redis, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not installed (Debian: apt-get install -y redis-server): %v", err)
	}

	upstream := httptest.NewServer(http.HandlerFunc(echo))
	t.Cleanup(upstream.Close)
	redisPort := freeport.Port(t)
	startProcess(t, "redis", redis, "--bind", "127.0.0.1", "--port", strconv.Itoa(redisPort), "--save", "", "--appendonly", "no")
	waitRedis(t, redisPort)
	gw := startGateway(t, bin, redisPort)

	type loaded struct {
		scenario
		classicPath, migratedPath string
		warnings                  []string
	}
	var all []loaded
	for i, s := range scenarios {
		id := fmt.Sprintf("replay%d", i+1)
		def := keyless(id)
		def["proxy"].(map[string]any)["target_url"] = upstream.URL
		s.classic(def)
		raw, _ := json.Marshal(def)
		res, err := convert.Convert(raw, convert.Options{Staging: true})
		if err != nil {
			t.Fatalf("%s: conversion: %v", s.name, err)
		}
		gw.post(t, "/tyk/apis", raw)
		for _, v := range res.Versions {
			gw.post(t, "/tyk/apis/oas", v.JSON)
		}
		gw.post(t, "/tyk/apis/oas", res.Base.JSON)
		all = append(all, loaded{s, "/" + id, res.Base.ListenPath[:len(res.Base.ListenPath)-1], res.Warnings})
	}
	gw.reload(t)

	for _, l := range all {
		t.Run(l.name, func(t *testing.T) {
			for _, c := range l.checks {
				a := gw.do(t, l.classicPath, c.req)
				b := gw.do(t, l.migratedPath, c.req)
				seen := a.differences(b)
				desc := fmt.Sprintf("%s %s %v", c.req.method, c.req.path, c.req.header)
				t.Logf("%s: classic %d %q %v | migrated %d %q %v", desc, a.status, a.body, a.headers, b.status, b.body, b.headers)
				if !slices.Equal(seen, c.differs) {
					t.Errorf("%s: differences %q, want %q", desc, seen, c.differs)
				}
				if c.warning != "" && !slices.ContainsFunc(l.warnings, func(w string) bool { return strings.Contains(w, c.warning) }) {
					t.Errorf("%s: no warning says %q: %q", desc, c.warning, l.warnings)
				}
			}
		})
	}
}

// echo is the upstream: it answers what the gateway sent it, and /status/<code> with that code.
func echo(w http.ResponseWriter, r *http.Request) {
	if code, ok := strings.CutPrefix(r.URL.Path, "/status/"); ok {
		n, _ := strconv.Atoi(code)
		w.WriteHeader(n)
		io.WriteString(w, "upstream "+code)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "path": r.URL.Path, "x-echo": r.Header.Get("X-Echo"), "body": string(body)})
}

type answer struct {
	status  int
	body    string
	headers map[string]string
}

func (a answer) differences(b answer) []string {
	var d []string
	if a.status != b.status {
		d = append(d, "status")
	}
	if a.body != b.body {
		d = append(d, "body")
	}
	for _, h := range comparedHeaders {
		if a.headers[h] != b.headers[h] {
			d = append(d, "header:"+h)
		}
	}
	return d
}

// startProcess runs a process for the test's lifetime, its output in a file printed when the test fails.
func startProcess(t *testing.T, name, bin string, args ...string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(logPath) // the gateway writes a default tyk.conf into its working directory
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			if len(out) > 4000 {
				out = out[len(out)-4000:]
			}
			t.Logf("%s output (tail):\n%s", name, out)
		}
	})
}

func waitRedis(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.SetDeadline(time.Now().Add(time.Second))
			io.WriteString(c, "PING\r\n")
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.HasPrefix(line, "+PONG") {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("redis did not answer PING within 10s")
}

type gateway struct{ base string }

// startGateway runs the gateway in file mode (no Dashboard) on a free port with its own folders and error
// templates (the gateway's error.json answers {"error": "<message>"}).
func startGateway(t *testing.T, bin string, redisPort int) *gateway {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"apps", "policies", "middleware", "templates"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	templates := map[string]string{
		"error.json": "{\n    \"error\": \"{{.Message}}\"\n}",
		"error.xml":  "<?xml version = \"1.0\" encoding = \"UTF-8\"?>\n<error>{{.Message}}</error>",
	}
	for name, body := range templates {
		if err := os.WriteFile(filepath.Join(dir, "templates", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	port := freeport.Port(t)
	conf := map[string]any{
		"listen_address": "127.0.0.1", "listen_port": port, "secret": secret,
		"template_path": filepath.Join(dir, "templates"), "use_db_app_configs": false,
		"app_path": filepath.Join(dir, "apps"), "middleware_path": filepath.Join(dir, "middleware"),
		"policies":         map[string]any{"policy_source": "file", "policy_path": filepath.Join(dir, "policies")},
		"storage":          map[string]any{"type": "redis", "host": "127.0.0.1", "port": redisPort},
		"enable_analytics": false, "enable_jsvm": false, "uptime_tests": map[string]any{"disable": true},
		"health_check":      map[string]any{"enable_health_checks": false},
		"coprocess_options": map[string]any{"enable_coprocess": false},
	}
	raw, _ := json.Marshal(conf)
	confPath := filepath.Join(dir, "tyk.conf")
	if err := os.WriteFile(confPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	startProcess(t, "gateway", bin, "--conf", confPath)
	g := &gateway{base: "http://127.0.0.1:" + strconv.Itoa(port)}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := http.Get(g.base + "/hello"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return g
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the gateway did not answer /hello within 60s")
	return nil
}

func (g *gateway) admin(t *testing.T, method, path string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, g.base+path, bytes.NewReader(body))
	req.Header.Set("X-Tyk-Authorization", secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (g *gateway) post(t *testing.T, path string, doc []byte) {
	t.Helper()
	if code, out := g.admin(t, "POST", path, doc); code != 200 {
		t.Fatalf("POST %s: %d %s\ndocument: %s", path, code, out, doc)
	}
}

func (g *gateway) reload(t *testing.T) {
	t.Helper()
	if code, out := g.admin(t, "GET", "/tyk/reload?block=true", nil); code != 200 {
		t.Fatalf("reload: %d %s", code, out)
	}
}

func (g *gateway) do(t *testing.T, listenPath string, r request) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, _ := http.NewRequestWithContext(ctx, r.method, g.base+listenPath+r.path, body)
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, listenPath+r.path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, body: string(out), headers: map[string]string{}}
	for _, h := range comparedHeaders {
		a.headers[h] = resp.Header.Get(h)
	}
	return a
}
