// Package check calls every operation of the three served OpenAPI
// descriptions through clients that go-swagger generated from them (make
// openapi-check writes them under client/, an ignored folder), against the
// real binaries started on 127.0.0.1:0. A description that a typed client
// cannot use — a body it refuses to send, an answer it cannot read — fails
// here.
package check

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/go-openapi/runtime"
	httptransport "github.com/go-openapi/runtime/client"
	"github.com/go-openapi/strfmt"
)

const token = "openapi-check-token-0123456789abcdef"

var httpAddr = regexp.MustCompile(`(?i)http\S*?(127\.0\.0\.1:\d+)`)

// start runs bin/<svc> on loopback ports with a fresh store, and any
// further flags, and returns its HTTP address.
func start(t *testing.T, svc string, flags ...string) string {
	t.Helper()
	dir := os.Getenv("GATEHOUSE_BIN")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "bin")
	}
	args := append([]string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--db", filepath.Join(t.TempDir(), svc+".db"), "--bootstrap-token", token}, flags...)
	cmd := exec.Command(filepath.Join(dir, svc), args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s (make build first): %v", svc, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		m := httpAddr.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: first line names no HTTP address: %q", svc, line)
		}
		return m[1]
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: no output within 15 s", svc)
	}
	return ""
}

// transport is a go-openapi transport to addr.
func transport(addr, basePath string) *httptransport.Runtime {
	return httptransport.New(addr, basePath, []string{"http"})
}

// auth sends the key as the Authorization header, with an optional scheme.
func auth(scheme string) runtime.ClientAuthInfoWriter {
	return httptransport.APIKeyAuth("Authorization", "header", scheme+token)
}

var (
	ctx     = context.Background()
	formats = strfmt.Default
)

func str(s string) *string { return &s }
