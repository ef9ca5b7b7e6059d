package deploy

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The images contain nothing but the binary (deploy/Dockerfile), and no
// container engine runs on the build machines, so this test proves what the
// image would run: each service built exactly as the Dockerfile builds it is
// a static ELF, starts with nothing but its flags, answers the probes the
// manifests configure, and exits 0 on SIGTERM within the grace period. A second
// run feeds it the environment of its rendered StatefulSet, as the pod's user,
// with only the volume writable.

// buildFlags must match the `go build` line of deploy/Dockerfile
// (TestDockerfile checks that they do).
var buildFlags = binproc.BuildFlags

// repoRoot is the workspace root (go.work), one folder up.
const repoRoot = ".."

// binDir receives the binaries; every user can read it (the pod-user run).
// TestMain removes it when every test has ended.
var binDir string

// builtBinaries builds every service whose cmd folder exists with one `go
// build` (shared packages compile once) into binDir, once per test binary:
// every test here that runs the services as built by the Dockerfile shares
// it (linking them again per test was most of this package's build time).
var builtBinaries = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "gatehouse-bin-")
	if err != nil {
		return nil, err
	}
	binDir = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	return binproc.Build(repoRoot, dir, services)
})

func cmdDir(svc string) string { return binproc.CmdDir(repoRoot, svc) }

func TestBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the three services; skipped with -short")
	}
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			// each service on its own ports (127.0.0.1:0) and folders: the
			// three wait out their manifests' SHUTDOWN_DELAY side by side
			t.Parallel()
			if _, err := os.Stat(cmdDir(svc)); errors.Is(err, fs.ErrNotExist) {
				t.Skipf("services/%s/cmd/%s does not exist yet: nothing to build", svc, svc)
			}
			bins, err := builtBinaries()
			if err != nil {
				t.Fatal(err)
			}
			bin := bins[svc]
			checkStaticELF(t, bin)

			t.Run("flags", func(t *testing.T) {
				tmp := t.TempDir()
				p := start(t, bin, []string{
					"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
					"--db", filepath.Join(tmp, "x", svc+".db"), "--bootstrap-token", randomToken(t),
				}, distrolessEnv(), nil, tmp)
				p.probeAndStop(t)
			})
			t.Run("manifest-env", func(t *testing.T) {
				env, cred, workDir := podEnvironment(t, svc)
				p := start(t, bin, nil, env, cred, workDir)
				p.probeAndStop(t)
				for _, e := range env {
					if db, ok := strings.CutPrefix(e, "DB_PATH="); ok {
						st, err := os.Stat(db)
						if err != nil {
							t.Fatalf("the store is not on the volume: %v", err)
						}
						if cred != nil && st.Sys().(*syscall.Stat_t).Uid != cred.Uid {
							t.Errorf("%s is owned by uid %d, want the pod user %d", db, st.Sys().(*syscall.Stat_t).Uid, cred.Uid)
						}
					}
				}
			})
		})
	}
}

// checkStaticELF: no program interpreter, no shared libraries, and the build
// settings the Dockerfile uses recorded in the binary.
func checkStaticELF(t *testing.T, bin string) {
	t.Helper()
	problems, err := staticELFProblems(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func staticELFProblems(bin string) ([]string, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var problems []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			problems = append(problems, "PT_INTERP program header: dynamically linked, it would not start on distroless/static")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return nil, err
	}
	if len(libs) > 0 {
		problems = append(problems, fmt.Sprintf("needs shared libraries (DT_NEEDED): %v", libs))
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return append(problems, fmt.Sprintf("no Go build information: %v", err)), nil
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for _, want := range [][2]string{{"CGO_ENABLED", "0"}, {"-trimpath", "true"}, {"GOOS", "linux"}} {
		if got := settings[want[0]]; got != want[1] {
			problems = append(problems, fmt.Sprintf("build setting %s = %q, want %q", want[0], got, want[1]))
		}
	}
	return problems, nil
}

// TestStaticELFCheckCatchesDynamicBinaries feeds the check a system tool,
// which Debian links dynamically against libc.
func TestStaticELFCheckCatchesDynamicBinaries(t *testing.T) {
	var bin string
	for _, candidate := range []string{"/bin/sh", "/usr/bin/env", "/bin/ls"} {
		if _, err := os.Stat(candidate); err == nil {
			bin = candidate
			break
		}
	}
	if bin == "" {
		t.Skip("no dynamically linked system binary found")
	}
	problems, err := staticELFProblems(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) < 2 {
		t.Fatalf("%s: got problems %v, want at least PT_INTERP and DT_NEEDED", bin, problems)
	}
}

// distrolessEnv is the whole environment gcr.io/distroless/static gives a process.
func distrolessEnv() []string {
	return []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
	}
}

func randomToken(t *testing.T) string { return binproc.RandomToken(t) }

// podEnvironment turns the container env of the service's rendered
// StatefulSet into a local one: listen addresses on 127.0.0.1:0, the volume
// mount moved into a temporary folder, the Secret references replaced by
// random tokens (one per Secret key), resource references resolved from the container's resources.
// When the test runs as root, the process also runs as the pod's user and
// group, in a folder it cannot write, with only the "volume" writable by it.
func podEnvironment(t *testing.T, svc string) (env []string, cred *syscall.Credential, workDir string) {
	t.Helper()
	rs, err := render(filepath.Join("base", svc))
	if err != nil {
		t.Fatal(err)
	}
	var sts *appsv1.StatefulSet
	for _, r := range rs {
		if s, ok := r.obj.(*appsv1.StatefulSet); ok && s.Name == svc {
			sts = s
		}
	}
	if sts == nil {
		t.Fatalf("base/%s renders no StatefulSet %s", svc, svc)
	}
	pod := sts.Spec.Template.Spec
	c := pod.Containers[0]

	root, err := os.MkdirTemp("", "gatehouse-pod-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	volumes := map[string]string{} // mountPath -> local folder
	for i, m := range c.VolumeMounts {
		local := filepath.Join(root, fmt.Sprintf("volume%d", i))
		if err := os.Mkdir(local, 0o700); err != nil {
			t.Fatal(err)
		}
		volumes[path.Clean(m.MountPath)] = local
	}

	if os.Geteuid() == 0 {
		psc := pod.SecurityContext
		uid, gid := *psc.RunAsUser, *psc.RunAsGroup
		if sc := c.SecurityContext; sc != nil && sc.RunAsUser != nil {
			uid = *sc.RunAsUser
		}
		if sc := c.SecurityContext; sc != nil && sc.RunAsGroup != nil {
			gid = *sc.RunAsGroup
		}
		for _, local := range volumes { // what fsGroup does to the claim
			if err := os.Chown(local, 0, int(*psc.FSGroup)); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(local, 0o2770); err != nil {
				t.Fatal(err)
			}
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{uint32(*psc.FSGroup)}}
	} else {
		t.Logf("not root: running %s as the current user instead of the pod's", svc)
	}

	env = distrolessEnv()
	tokens := map[string]string{}
	for _, e := range c.Env {
		var v string
		switch {
		case strings.HasSuffix(e.Name, "_ADDR") && e.Value != "":
			v = "127.0.0.1:0"
		case e.Name == "DB_PATH":
			v = e.Value
			for mount, local := range volumes {
				if rest, ok := strings.CutPrefix(e.Value, mount+"/"); ok {
					v = filepath.Join(local, rest)
				}
			}
		case e.ValueFrom == nil:
			v = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			// one random value per Secret key, as the operator makes them
			ref := e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			if tokens[ref] == "" {
				tokens[ref] = randomToken(t)
			}
			v = tokens[ref]
		case e.ValueFrom.ResourceFieldRef != nil:
			v = resolveResource(t, c, e.ValueFrom.ResourceFieldRef)
		default:
			t.Fatalf("env %s: this test cannot resolve %v", e.Name, e.ValueFrom)
		}
		env = append(env, e.Name+"="+v)
	}
	return env, cred, root
}

func resolveResource(t *testing.T, c corev1.Container, ref *corev1.ResourceFieldSelector) string {
	t.Helper()
	kind, name, _ := strings.Cut(ref.Resource, ".")
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		t.Fatalf("resourceFieldRef %s: the container sets no such resource", ref.Resource)
	}
	divisor := int64(1)
	if !ref.Divisor.IsZero() {
		divisor = ref.Divisor.Value()
	}
	return fmt.Sprint((q.Value() + divisor - 1) / divisor) // the kubelet rounds up
}

type process struct{ *binproc.Process }

// start runs bin and waits for its first output line, which must name the
// real HTTP and gRPC addresses.
func start(t *testing.T, bin string, args, env []string, cred *syscall.Credential, dir string) process {
	t.Helper()
	return process{binproc.Start(t, bin, args, env, cred, dir)}
}

// probeAndStop does what the kubelet does: GET /healthz on HTTP, the gRPC
// health check on gRPC, then SIGTERM, after which the process must exit 0
// well within terminationGracePeriodSeconds.
func (p process) probeAndStop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.HTTPAddr+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz: status %d, want 200", resp.StatusCode)
	}

	conn, err := grpc.NewClient("passthrough:///"+p.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}) // service "": what a grpc: probe without service asks
	if err != nil {
		t.Fatalf("grpc.health.v1.Health/Check: %v", err)
	}
	if hc.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("grpc health: %v, want SERVING", hc.Status)
	}

	took := p.Stop(t, (shutdownTimeoutSeconds+5)*time.Second)
	t.Logf("stopped %v after SIGTERM", took.Round(time.Millisecond))
}
