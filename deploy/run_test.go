package deploy

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/freeport"
)

// TestMakeRunCtrlC runs `make run` (its recipe, tools/run.sh, after the
// build) in a terminal (script(1) gives it a pty), on free ports, in a copy of
// the layout it expects (Makefile, tools/, bin/), waits for its "running"
// block, and types Ctrl-C: all three services stop, one "stopped" line is
// printed, make exits 0; each store it created was named in its log.
func TestMakeRunCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the three binaries; skipped with -short")
	}
	for _, tool := range []string{"script", "make", "bash", "curl", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
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
	// make's own recipe, without its build: make is in the terminal's
	// process group too, and a Ctrl-C it receives ends it with an error.
	if err := os.WriteFile(filepath.Join(root, "Makefile"), []byte("run:\n\t@tools/run.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bins, err := builtBinaries()
	if err != nil {
		t.Fatal(err)
	}
	for svc, bin := range bins { // make run starts bin/<service>, as the Makefile builds them
		if err := os.Symlink(bin, filepath.Join(root, "bin", svc)); err != nil {
			t.Fatal(err)
		}
	}
	env := os.Environ()
	var ports []string
	for _, v := range []string{"RUN_STUDIO_HTTP", "RUN_STUDIO_GRPC", "RUN_MANAGEMENT_HTTP", "RUN_MANAGEMENT_GRPC", "RUN_PORTAL_HTTP", "RUN_PORTAL_GRPC", "RUN_PORTAL_SITE"} {
		a := freeport.Addr(t)
		ports = append(ports, a)
		env = append(env, v+"="+a)
	}

	cmd := exec.Command("script", "-qec", "make run", "/dev/null")
	cmd.Dir, cmd.Env = root, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(out.String(), "Gatehouse is running"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no running block within 60 s:\n%s", out)
		}
	}
	if _, err := stdin.Write([]byte{3}); err != nil { // Ctrl-C, as a terminal sends it
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after Ctrl-C: %v, want exit status 0\n%s", err, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after Ctrl-C:\n%s", out)
	}
	if n := strings.Count(out.String(), "stopped"); n != 1 {
		t.Errorf("%d lines say stopped, want exactly one:\n%s", n, out)
	}
	if strings.Contains(out.String(), "make run:") {
		t.Errorf("the script reports a failure:\n%s", out)
	}
	for _, a := range ports {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still answers after Ctrl-C", a)
		}
	}
	for _, svc := range services {
		logs, _ := os.ReadFile(filepath.Join(root, "data", svc+".log"))
		if want := "new store created at " + filepath.Join(root, "data", svc+".db"); !bytes.Contains(logs, []byte(want)) {
			t.Errorf("data/%s.log does not say %q:\n%s", svc, want, logs)
		}
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
