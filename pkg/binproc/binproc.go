// Package binproc builds the Gatehouse service binaries the way
// deploy/Dockerfile builds them and runs them as an operator would: start
// with flags or an environment, read the real addresses from the first output
// line, stop with SIGTERM. The binary tests and end-to-end journey in
// deploy/ and the management service's crash test share it.
package binproc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildFlags must match the `go build` line of deploy/Dockerfile
// (deploy's TestDockerfile checks that they do).
var BuildFlags = []string{"-trimpath", "-ldflags=-s -w"}

// Build builds every service in services whose cmd folder exists under the
// workspace root with one `go build` (shared packages compile once) into dir,
// with CGO_ENABLED=0 and in workspace mode even when the caller runs with
// GOWORK=off. It returns the binary of each service built. In a test binary
// whose TestMain is Main, each service is linked once and shared (shared.go).
func Build(root, dir string, services []string) (map[string]string, error) {
	if bins, ok, err := buildShared(root, dir, services); ok {
		return bins, err
	}
	return build(root, dir, services)
}

func build(root, dir string, services []string) (map[string]string, error) {
	args := append([]string{"build"}, BuildFlags...)
	args = append(args, "-o", dir+string(filepath.Separator))
	bins := map[string]string{}
	for _, svc := range services {
		if _, err := os.Stat(CmdDir(root, svc)); err == nil {
			args = append(args, "./"+filepath.ToSlash(filepath.Join("services", svc, "cmd", svc)))
			bins[svc] = filepath.Join(dir, svc)
		}
	}
	if len(bins) == 0 {
		return bins, nil
	}
	workspace, err := filepath.Abs(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK="+workspace)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("CGO_ENABLED=0 go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bins, nil
}

// CmdDir is the main package of svc under the workspace root.
func CmdDir(root, svc string) string { return filepath.Join(root, "services", svc, "cmd", svc) }

// RandomToken is a fresh 128-bit secret in hex, fit for --bootstrap-token.
func RandomToken(t testing.TB) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// Process is one running service.
type Process struct {
	Cmd      *exec.Cmd
	HTTPAddr string // host:port the REST facade listens on
	GRPCAddr string // host:port the gRPC server listens on
	SiteAddr string // host:port of the public site (the portal), else ""
	// MetricsAddr is the host:port of the metrics listener (--metrics-addr), else "".
	MetricsAddr string
	// DebugAddr is the host:port of the debug listener (--debug-addr), else "".
	DebugAddr string

	lines   chan string
	exited  chan struct{}
	waitErr error
	mu      sync.Mutex
	output  strings.Builder
}

var (
	httpAddrRE = regexp.MustCompile(`(?i)http\S*?(127\.0\.0\.1:\d+)`)
	grpcAddrRE = regexp.MustCompile(`(?i)grpc\S*?(127\.0\.0\.1:\d+)`)
	siteAddrRE = regexp.MustCompile(`site https?://(127\.0\.0\.1:\d+)`)
	metricsRE  = regexp.MustCompile(`metrics https?://(127\.0\.0\.1:\d+)`)
	debugRE    = regexp.MustCompile(`debug https?://(127\.0\.0\.1:\d+)`)
)

// Start runs bin with args and exactly env (cred, when not nil, is the user
// it runs as; dir its working folder) and waits for its first output line,
// which must name the real HTTP and gRPC addresses. The process is killed at
// cleanup if it still runs; its output is logged when the test failed.
func Start(t testing.TB, bin string, args, env []string, cred *syscall.Credential, dir string) *Process {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{Cmd: exec.Command(bin, args...), lines: make(chan string, 64), exited: make(chan struct{})}
	p.Cmd.Env = env
	p.Cmd.Dir = dir
	p.Cmd.Stdout, p.Cmd.Stderr = w, w
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	drained := make(chan struct{}) // the output read to its end
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.mu.Lock()
			p.output.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		r.Close()
	}()
	// exited closes once the process has exited and its output has been
	// read to the end (a line written just before the exit was otherwise
	// missing from Output now and then), or 2 s after the exit should a
	// process it started keep the pipe open.
	go func() {
		err := p.Cmd.Wait()
		select {
		case <-drained:
		case <-time.After(2 * time.Second):
		}
		p.waitErr = err
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.Cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(bin), p.Output())
		}
	})

	select {
	case line := <-p.lines:
		h, g := httpAddrRE.FindStringSubmatch(line), grpcAddrRE.FindStringSubmatch(line)
		if h == nil || g == nil {
			t.Fatalf("first output line does not name the HTTP and gRPC addresses (127.0.0.1:port): %q", line)
		}
		p.HTTPAddr, p.GRPCAddr = h[1], g[1]
		if m := siteAddrRE.FindStringSubmatch(line); m != nil {
			p.SiteAddr = m[1]
		}
		if m := metricsRE.FindStringSubmatch(line); m != nil {
			p.MetricsAddr = m[1]
		}
		if m := debugRE.FindStringSubmatch(line); m != nil {
			p.DebugAddr = m[1]
		}
	case <-p.exited:
		t.Fatalf("exited before its first line: %v", p.waitErr)
	case <-time.After(15 * time.Second):
		t.Fatal("no output line within 15 s")
	}
	return p
}

// Output is everything the process wrote so far, stdout and stderr merged.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

// Stop sends SIGTERM and fails the test unless the process exits with
// status 0 within the given time. It returns how long the exit took.
func (p *Process) Stop(t testing.TB, within time.Duration) time.Duration {
	t.Helper()
	begin := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.Wait(t, within)
	return time.Since(begin)
}

// Wait fails the test unless the process exits with status 0 within the
// given time (a test that sent the signal itself waits with it).
func (p *Process) Wait(t testing.TB, within time.Duration) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(within):
		t.Fatalf("still running %v after SIGTERM", within)
	}
	if p.waitErr != nil {
		t.Errorf("after SIGTERM: %v, want exit status 0", p.waitErr)
	}
}

// CPUTime is the user and system CPU time the process has used so far
// (Linux, 100 clock ticks per second); on a shared machine it says more
// about the work done than the wall clock does.
func (p *Process) CPUTime(t testing.TB) time.Duration {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Cmd.Process.Pid))
	if err != nil {
		t.Fatalf("cpu time: %v", err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, err1 := strconv.Atoi(fields[11])
	stime, err2 := strconv.Atoi(fields[12])
	if err1 != nil || err2 != nil {
		t.Fatalf("cpu time: unexpected /proc stat line %q", stat)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// PeakRSS is the process's peak resident set size in KiB (Linux).
func (p *Process) PeakRSS(t testing.TB) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Cmd.Process.Pid))
	if err != nil {
		t.Fatalf("peak memory: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB")); err == nil {
				return kb
			}
		}
	}
	t.Fatalf("peak memory: no VmHWM line in /proc status")
	return 0
}

// RunToExit runs bin with args (and the caller's environment) and waits, at
// most 20 s, for it to exit; it returns its output, stdout and stderr
// merged, and its exit status. For starts that must fail.
func RunToExit(t testing.TB, bin string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("%s: %v", bin, err)
	return "", 0
}
