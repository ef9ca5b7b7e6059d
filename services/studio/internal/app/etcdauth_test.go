package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// startAuthEtcd runs the Makefile's etcd (GATEHOUSE_ETCD, .bin/etcd) on
// free loopback ports with authentication enabled: a root user with
// password, `auth enable`. It returns the client endpoint.
func startAuthEtcd(t *testing.T, password string) string {
	t.Helper()
	bin := os.Getenv("GATEHOUSE_ETCD")
	if bin == "" {
		t.Fatal("GATEHOUSE_ETCD names no etcd binary: make test-hostile builds .bin/etcd and sets it")
	}
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String()
	}
	client, peer := free(), free()
	cmd := exec.Command(bin, "--name", "auth", "--data-dir", filepath.Join(t.TempDir(), "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "auth="+peer, "--log-level", "error")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("etcd log:\n%s", log.String())
		}
	})
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, step := range []func() error{
		func() error { _, err := c.UserAdd(ctx, "root", password); return err },
		func() error { _, err := c.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := c.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("set up etcd authentication: %v", err)
		}
	}
	return client
}

// TestHostileEtcdAuth (row 9 of issue 18): on an etcd with authentication
// enabled, the studio's storage calls carry its own credentials only, never
// the caller's metadata: REST calls with Authorization and Grpc-Metadata-*
// headers, and gRPC calls with extra metadata, succeed.
func TestHostileEtcdAuth(t *testing.T) {
	servertest.Long(t)
	const password = "etcd-root-password-for-the-test"
	endpoint := startAuthEtcd(t, password)
	bins, err := binproc.Build(filepath.Join("..", "..", "..", ".."), t.TempDir(), []string{"studio"})
	if err != nil {
		t.Fatal(err)
	}
	p := binproc.Start(t, bins["studio"], []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--store", "etcd", "--etcd-endpoints", endpoint, "--bootstrap-token", token},
		append(os.Environ(), "ETCD_USERNAME=root", "ETCD_PASSWORD="+password), nil, "")
	for i, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/llm-settings", `{"data":{"type":"llm-settings","attributes":{"model_name":"m"}}}`},
		{"GET", "/api/v1/llm-settings", ""},
		{"GET", "/api/v1/llm-settings/1", ""},
		{"DELETE", "/api/v1/llm-settings/1", ""},
	} {
		req, _ := http.NewRequest(c.method, "http://"+p.HTTPAddr+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+token)
		// etcd reads its own token from the "token" metadata
		req.Header.Set("Grpc-Metadata-Token", fmt.Sprintf("caller-token-%d", i))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 300 {
			t.Errorf("%s %s on etcd with auth: %d %s, want success", c.method, c.path, res.StatusCode, body)
		}
	}
	conn, err := grpc.NewClient("passthrough:///"+p.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token, "token", "caller-token")
	if _, err := studiov1.NewStudioServiceClient(conn).CreateLlmSettings(ctx, &studiov1.CreateLlmSettingsRequest{
		Data: &studiov1.LlmSettingsInput{Attributes: &studiov1.LlmSettingsChanges{ModelName: proto.String("m2")}}}); err != nil {
		t.Errorf("gRPC create on etcd with auth: %v", err)
	}
	if out := p.Output(); strings.Contains(out, token) {
		t.Errorf("the caller's key appears in the service's output")
	}
}
