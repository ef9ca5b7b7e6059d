package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
)

// The README's examples are what a newcomer pastes first, so they must run as
// they are, on any store: TestREADMEExamples starts the three services built
// as the Dockerfile builds them on 127.0.0.1:0, with their keys in
// data/<service>.token of a fresh folder as `make run` keeps them, and runs
// every ```sh block of README.md with bash -e in that folder, the whole set
// twice in a row on the same stores. Only the base URLs come from the
// environment (S, M, P, SITE, G); the keys are read by the blocks themselves.
// Management issues keys to the Tyk Gateway double's key API
// (pkg/tykgwtest), so that "Issuing keys" runs too.

// readmeBlockRE finds the ```sh blocks; the commands that start things
// (make run, etcd) are in plain ``` blocks and are not run here.
var readmeBlockRE = regexp.MustCompile("(?ms)^```sh\n(.*?)^```")

// readmeFailureRE matches what a failed example prints: an HTTP status line
// of 4xx or 5xx (curl -i), the studio's and the portal's error bodies, the
// management error body, and a migration that failed an API.
var readmeFailureRE = regexp.MustCompile(`HTTP/[0-9.]+ [45][0-9][0-9]|"errors":\[[{"]|"Status":"Error"|"failure":\{"count":[1-9]`)

func TestREADMEExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the three binaries")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range readmeBlockRE.FindAllStringSubmatch(string(readme), -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) < 4 {
		t.Fatalf("README.md has %d ```sh blocks, want the studio, management, portal and gRPC examples", len(blocks))
	}
	bins, err := builtBinaries()
	if err != nil {
		t.Fatal(err)
	}

	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	const gatewaySecret = "readme-gateway-secret"
	keyAPI, err := tykgwtest.StartKeyAPI(gatewaySecret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(keyAPI.Close)
	secretFile := filepath.Join(work, "data", "gateway-api-secret")
	if err := os.WriteFile(secretFile, []byte(gatewaySecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{}
	for _, svc := range []string{"studio", "management", "portal"} {
		if bins[svc] == "" {
			t.Fatalf("%s was not built", svc)
		}
		token := binproc.RandomToken(t)
		if err := os.WriteFile(filepath.Join(work, "data", svc+".token"), []byte(token), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
			"--db", filepath.Join(work, "data", svc+".db"), "--bootstrap-token-file", filepath.Join(work, "data", svc+".token")}
		if svc == "portal" {
			args = append(args, "--site-addr", "127.0.0.1:0")
		}
		if svc == "management" { // the key routes issue keys to a gateway double's key API
			args = append(args, "--gateway-api-url", keyAPI.URL, "--gateway-api-secret-file", secretFile)
		}
		p := binproc.Start(t, bins[svc], args, os.Environ(), nil, work)
		t.Cleanup(func() { p.Stop(t, 30*time.Second) })
		switch svc {
		case "studio":
			base["S"], base["G"] = "http://"+p.HTTPAddr+"/api/v1", p.GRPCAddr
		case "management":
			base["M"] = "http://" + p.HTTPAddr + "/api"
		case "portal":
			base["P"], base["SITE"] = "http://"+p.HTTPAddr+"/portal-api", "http://"+p.SiteAddr
		}
	}
	env := []string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "S", "M", "P", "SITE", "G", "STUDIO_KEY", "MGMT_KEY", "PORTAL_KEY", "GRPCURL":
		default:
			env = append(env, kv)
		}
	}
	for name, v := range base {
		env = append(env, name+"="+v)
	}

	// The gRPC block runs the pinned grpcurl make test installs into .bin/
	// (GRPCURL names it, as the block's default .bin/grpcurl does from the
	// repository root).
	grpcurl, grpcurlErr := filepath.Abs(filepath.Join(repoRoot, ".bin", "grpcurl"))
	if _, err := os.Stat(grpcurl); grpcurlErr == nil && err != nil {
		grpcurl, grpcurlErr = exec.LookPath("grpcurl")
	}
	env = append(env, "GRPCURL="+grpcurl)
	for run := 1; run <= 2; run++ {
		for i, block := range blocks {
			name := fmt.Sprintf("run %d, block %d (%s)", run, i+1, strings.SplitN(block, "\n", 2)[0])
			if strings.Contains(block, "$GRPCURL") && grpcurlErr != nil {
				t.Logf("%s: skipped, grpcurl is not installed (make grpcurl)", name)
				continue
			}
			cmd := exec.Command("bash", "-e", "-c", block)
			cmd.Dir, cmd.Env = work, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, out)
			}
			if m := readmeFailureRE.Find(out); m != nil {
				t.Fatalf("%s printed a failure (%s):\n%s", name, m, out)
			}
		}
	}
}

// TestREADMEAPIsServable: the API definitions the README's examples and
// make run's printed example create can all be on one gateway at once, as a
// newcomer who runs them in order has them: each is active (an inactive one
// is not sent to gateways) and each has a listen path of its own (a gateway
// renames clashing paths, and the first API's path answers 404).
func TestREADMEAPIsServable(t *testing.T) {
	var code []string
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?ms)^```(?:sh|bash)?\n(.*?)^```").FindAllStringSubmatch(string(readme), -1) {
		code = append(code, "README.md: "+m[1])
	}
	run, err := os.ReadFile(filepath.Join(repoRoot, "tools", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	code = append(code, "tools/run.sh: "+string(run))
	seen := map[string]string{}
	defs := 0
	for _, c := range code {
		where, _, _ := strings.Cut(c, ":")
		n := strings.Count(c, `{"api_definition":{`)
		if active := strings.Count(c, `"active":true`); active != n {
			t.Errorf("%s: a block creates %d API definitions and %d say \"active\":true", where, n, active)
		}
		defs += n
		for _, lp := range regexp.MustCompile(`"listen_path":"([^"]+)"`).FindAllStringSubmatch(c, -1) {
			if other, dup := seen[lp[1]]; dup {
				t.Errorf("listen path %s is created in %s and again in %s", lp[1], other, where)
			}
			seen[lp[1]] = where
		}
	}
	if defs < 3 || len(seen) != defs {
		t.Errorf("found %d API definitions with %d listen paths; want the management example's, the gateway examples' and make run's, one path each", defs, len(seen))
	}
}
