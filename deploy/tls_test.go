package deploy

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	"github.com/gatehouse/gatehouse/pkg/freeport"
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
	t.Parallel()
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

// TestREADMETLSBlock runs the README's ```shell block (Operating, TLS) as
// it is: openssl makes a CA and a certificate, a studio serves HTTPS and
// gRPC over TLS with them, curl and grpcurl trust the CA, and the studio
// stops cleanly.
func TestREADMETLSBlock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the studio binary; skipped with -short")
	}
	for _, tool := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?ms)^```shell\n(.*?)^```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) != 1 {
		t.Fatalf("README.md has %d ```shell blocks, want the TLS one", len(blocks))
	}
	grpcurl, err := filepath.Abs(filepath.Join(repoRoot, ".bin", "grpcurl"))
	if _, serr := os.Stat(grpcurl); err != nil || serr != nil {
		if grpcurl, err = exec.LookPath("grpcurl"); err != nil {
			t.Skip("grpcurl is not installed (make grpcurl)")
		}
	}
	bin, err := studioBinary()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, d := range []string{"bin", "data"} {
		if err := os.Mkdir(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bin, filepath.Join(work, "bin", "studio")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-e", "-c", blocks[0][1])
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "TLS_HTTP="+freeport.Addr(t), "TLS_GRPC="+freeport.Addr(t), "GRPCURL="+grpcurl)
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(work, "data", "try-tls.log"))
		t.Fatalf("the README's TLS block: %v\n%s\nstudio log:\n%s", err, out, log)
	}
	for _, want := range []string{`"status":"ok"`, "gatehouse.studio.v1.StudioService"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README's TLS block printed no %s:\n%s", want, out)
		}
	}
}
