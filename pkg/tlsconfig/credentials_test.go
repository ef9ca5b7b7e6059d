package tlsconfig_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/gatehouse/gatehouse/pkg/tlsconfig"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig/tlsconfigtest"
)

// TestClientCredentialsCARotation: a gRPC client's CA file is read again
// when it changes, so a server moved to a new CA is reached again without a
// new client, and never before the client trusts that CA.
func TestClientCredentialsCARotation(t *testing.T) {
	ca := tlsconfigtest.NewCA(t, "gatehouse")
	srv := ca.Issue(t, tlsconfigtest.Options{})
	cfg, err := tlsconfig.Server(srv.CertFile, srv.KeyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg)))
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(l)
	t.Cleanup(s.Stop)

	caFile := filepath.Join(t.TempDir(), "ca.pem")
	replace(t, ca.File, caFile)
	creds, err := tlsconfig.ClientCredentials(caFile, "", "")
	if err != nil {
		t.Fatal(err)
	}
	check := func() error {
		conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	if err := check(); err != nil {
		t.Fatalf("server of the trusted CA: %v", err)
	}

	next := tlsconfigtest.NewCA(t, "gatehouse-2")
	next.IssueTo(t, tlsconfigtest.Options{}, srv.CertFile, srv.KeyFile)
	if err := check(); err == nil {
		t.Fatal("server of a CA the client does not trust yet was reached")
	}
	replace(t, next.File, caFile)
	if err := check(); err != nil {
		t.Fatalf("after the client's CA file was replaced: %v", err)
	}
}

// replace writes src's bytes over dst by a rename, as a Secret volume does.
func replace(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+".tmp", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".tmp", dst); err != nil {
		t.Fatal(err)
	}
}
