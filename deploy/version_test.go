package deploy

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// TestVersionStamped builds the studio with the build stamps `make build`
// and the Dockerfile pass (-X <BUILDINFO>.version, .revision, with the
// Makefile's BUILDINFO) and finds them in --version, in the first log line
// and in gatehouse_build_info.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the studio; skipped with -short")
	}
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^BUILDINFO := (\S+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no BUILDINFO := <package>")
	}
	pkg := string(m[1])
	bin := filepath.Join(t.TempDir(), "studio")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-X "+pkg+".version=v9.9.9-test -X "+pkg+".revision=0123abc",
		"-o", bin, "./services/studio/cmd/studio")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	out, err := exec.Command(bin, "--version").CombinedOutput()
	if want := "studio v9.9.9-test (revision 0123abc, " + runtime.Version() + ")\n"; err != nil || string(out) != want {
		t.Errorf("--version: %q, %v; want %q", out, err, want)
	}

	p := binproc.Start(t, bin, []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--db", filepath.Join(t.TempDir(), "studio.db"), "--bootstrap-token", binproc.RandomToken(t)}, distrolessEnv(), nil, "")
	first, _, _ := strings.Cut(p.Output(), "\n")
	if !strings.Contains(first, "version=v9.9.9-test") || !strings.Contains(first, "revision=0123abc") {
		t.Errorf("first log line %q does not name the version and revision", first)
	}
	res, err := http.Get("http://" + p.HTTPAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := `gatehouse_build_info{goversion="` + runtime.Version() + `",revision="0123abc",version="v9.9.9-test"} 1`
	if !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s", want)
	}
	p.Stop(t, 15e9)
}

// TestReleaseVersion: the file VERSION, which make build, make release and
// make images stamp, holds one semantic version, and the overlays that pin
// a release (ha, prod) run the images of that release; the repository
// carries its licence.
func TestReleaseVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSuffix(string(b), "\n")
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		t.Fatalf("VERSION %q is not one semantic version (1.2.3 or 1.2.3-rc.1) on one line", version)
	}
	for _, overlay := range []string{"ha", "prod"} {
		k, err := os.ReadFile(filepath.Join("overlays", overlay, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		tags := regexp.MustCompile(`newTag: "?([^"\s]+)"?`).FindAllStringSubmatch(string(k), -1)
		if len(tags) != 3 {
			t.Errorf("overlays/%s pins %d image tags, want the 3 services'", overlay, len(tags))
		}
		for _, tag := range tags {
			if tag[1] != version {
				t.Errorf("overlays/%s runs images %s, want the release in VERSION, %s", overlay, tag[1], version)
			}
		}
	}
	licence, err := os.ReadFile(filepath.Join(repoRoot, "LICENSE"))
	if err != nil || !strings.Contains(string(licence), "Apache License") || !strings.Contains(string(licence), "END OF TERMS AND CONDITIONS") {
		t.Errorf("LICENSE is not the full Apache License 2.0 text (%v)", err)
	}
}
