package deploy

import (
	"context"
	"crypto/tls"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig/tlsconfigtest"
)

// TestTLSBinary runs the studio as the ha overlay does, with a certificate
// and gRPC client certificates required (CONTRACT §0): REST answers over
// HTTPS (the facade reaches the service in-process, so TLS does not stand
// between them), gRPC admits only clients with a certificate of the client
// CA and still checks their API key, and replacing the certificate files
// under the running process changes the certificate served.
func TestTLSBinary(t *testing.T) {
	ca, clients := tlsconfigtest.NewCA(t, "gatehouse"), tlsconfigtest.NewCA(t, "clients")
	served := ca.Issue(t, tlsconfigtest.Options{})
	token := binproc.RandomToken(t)
	p := startStudio(t, filepath.Join(t.TempDir(), "studio.db"), token,
		"--tls-cert-file", served.CertFile, "--tls-key-file", served.KeyFile, "--grpc-client-ca-file", clients.File)
	if first, _, _ := strings.Cut(p.Output(), "\n"); !strings.Contains(first, "https://"+p.HTTPAddr) || !strings.Contains(first, "tls=mtls") {
		t.Errorf("listening line %q: want https:// and tls=mtls", first)
	}

	clientTLS, err := tlsconfig.Client(ca.File, "", "")
	if err != nil {
		t.Fatal(err)
	}
	web := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS, DisableKeepAlives: true}}
	get := func(auth string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "https://"+p.HTTPAddr+"/api/v1/llm-settings", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := web.Do(req)
		if err != nil {
			t.Fatalf("REST over HTTPS: %v", err)
		}
		res.Body.Close()
		return res.StatusCode, res.TLS.PeerCertificates[0].SerialNumber.String()
	}
	if code, serial := get(token); code != http.StatusOK || serial != served.Cert.SerialNumber.String() {
		t.Errorf("GET /api/v1/llm-settings over HTTPS: %d with certificate %s, want 200 with %s", code, serial, served.Cert.SerialNumber)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("GET without a key over HTTPS: %d, want 401", code)
	}
	if res, err := http.Get("http://" + p.HTTPAddr + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Error("plain HTTP answered 200 beside HTTPS")
		}
	}

	list := func(c *tls.Config, key string) error {
		conn, err := grpc.NewClient("passthrough:///"+p.GRPCAddr, grpc.WithTransportCredentials(credentials.NewTLS(c)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx := context.Background()
		if key != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
		}
		_, err = studiov1.NewStudioServiceClient(conn).ListLlmSettings(ctx, &studiov1.ListLlmSettingsRequest{})
		return err
	}
	portal := clients.Issue(t, tlsconfigtest.Options{CommonName: "portal"})
	withCert, err := tlsconfig.Client(ca.File, portal.CertFile, portal.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := list(withCert, token); err != nil {
		t.Errorf("gRPC with a client certificate and the key: %v", err)
	}
	if err := list(withCert, ""); status.Code(err) != codes.Unauthenticated {
		t.Errorf("gRPC with a client certificate, without a key: %v, want Unauthenticated", err)
	}
	if err := list(clientTLS, token); err == nil || status.Code(err) != codes.Unavailable {
		t.Errorf("gRPC without a client certificate: %v, want the handshake refused (Unavailable)", err)
	}

	next := ca.IssueTo(t, tlsconfigtest.Options{}, served.CertFile, served.KeyFile)
	if code, serial := get(token); code != http.StatusOK || serial != next.SerialNumber.String() {
		t.Errorf("after replacing the files: %d with certificate %s, want 200 with the new %s", code, serial, next.SerialNumber)
	}
	p.Stop(t, 15*time.Second)
}
