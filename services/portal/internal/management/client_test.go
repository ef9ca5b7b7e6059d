package management

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig/tlsconfigtest"
)

// policies answers GetPolicy: found for "gold" when the caller sent the
// portal's key, else NotFound.
type policies struct {
	managementv1.UnimplementedManagementServiceServer
}

func (policies) GetPolicy(ctx context.Context, req *managementv1.GetPolicyRequest) (*managementv1.GetPolicyResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("authorization"); len(v) != 1 || v[0] != "portal-key" {
		return nil, status.Error(codes.Unauthenticated, "no key")
	}
	if req.GetPolicyId() != "gold" {
		return nil, status.Error(codes.NotFound, "no such policy")
	}
	return &managementv1.GetPolicyResponse{}, nil
}

// TestDialTLS: the portal reaches a management that serves TLS and requires
// client certificates (--grpc-client-ca-file) with its CA file and client
// certificate, and not without them.
func TestDialTLS(t *testing.T) {
	ca, clients, other := tlsconfigtest.NewCA(t, "gatehouse"), tlsconfigtest.NewCA(t, "clients"), tlsconfigtest.NewCA(t, "other")
	served := ca.Issue(t, tlsconfigtest.Options{})
	serverTLS, err := tlsconfig.Server(served.CertFile, served.KeyFile, clients.File)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(serverTLS)))
	managementv1.RegisterManagementServiceServer(srv, policies{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(srv.Stop)

	portal := clients.Issue(t, tlsconfigtest.Options{CommonName: "portal"})
	for _, tc := range []struct {
		name string
		tls  TLS
		ok   bool
	}{
		{"CA and client certificate", TLS{CAFile: ca.File, CertFile: portal.CertFile, KeyFile: portal.KeyFile}, true},
		{"no client certificate", TLS{CAFile: ca.File}, false},
		{"management's certificate from another CA", TLS{CAFile: other.File, CertFile: portal.CertFile, KeyFile: portal.KeyFile}, false},
		{"plain text", TLS{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(l.Addr().String(), "portal-key", tc.tls)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			missing, err := c.MissingPolicies(context.Background(), []string{"gold", "lead"})
			if tc.ok && (err != nil || len(missing) != 1 || missing[0] != "lead") {
				t.Fatalf("MissingPolicies: %v, %v; want [lead]", missing, err)
			}
			if !tc.ok && status.Code(err) != codes.Unavailable {
				t.Fatalf("MissingPolicies: %v, %v; want Unavailable (no TLS connection)", missing, err)
			}
		})
	}
	if _, err := Dial(l.Addr().String(), "portal-key", TLS{CAFile: ca.File, CertFile: portal.CertFile}); err == nil {
		t.Error("Dial took a client certificate without its key")
	}
}
