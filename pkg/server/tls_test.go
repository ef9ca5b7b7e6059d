package server

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig/tlsconfigtest"
)

// serveTLS runs an empty service, with a site, on cfg's TLS files and
// returns its listeners.
func serveTLS(t *testing.T, tlsFiles config.TLS) *Listeners {
	t.Helper()
	cfg := loopback()
	cfg.SiteAddr, cfg.MetricsAddr, cfg.TLS = "127.0.0.1:0", "127.0.0.1:0", tlsFiles
	l, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, NewLogger(logs, config.Log{Format: config.LogText}), l, Service{
			Name:     "gatehouse.test.v1.TestService",
			Register: func(grpc.ServiceRegistrar) {},
			Site:     http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("site")) }),
			Gateway: restfacade.Options{
				Register:  func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error { return nil },
				OpenAPI:   []byte(`{"paths":{}}`),
				ErrorBody: func(_ *http.Request, status int, msgs []string) any { return msgs },
			},
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	return l
}

// httpsGet fetches url with a client trusting caFile and returns the status
// and the served certificate's serial.
func httpsGet(t *testing.T, url, caFile string) (int, string, error) {
	t.Helper()
	c, err := tlsconfig.Client(caFile, "", "")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: c, DisableKeepAlives: true}}
	res, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	res.Body.Close()
	return res.StatusCode, res.TLS.PeerCertificates[0].SerialNumber.String(), nil
}

// grpcHealth asks the server's gRPC health with creds.
func grpcHealth(addr string, creds credentials.TransportCredentials) error {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	return err
}

// TestTLSListeners: with a certificate every listener serves TLS 1.2+ —
// the REST facade, the site, /metrics and gRPC — and nothing in plain text;
// replacing the files under the running server rotates the certificate on
// each of them.
func TestTLSListeners(t *testing.T) {
	ca := tlsconfigtest.NewCA(t, "gatehouse")
	p := ca.Issue(t, tlsconfigtest.Options{})
	l := serveTLS(t, config.TLS{CertFile: p.CertFile, KeyFile: p.KeyFile})
	urls := map[string]string{
		"REST /healthz": "https://" + l.HTTP.Addr().String() + "/healthz",
		"site":          "https://" + l.Site.Addr().String() + "/",
		"metrics":       "https://" + l.Metrics.Addr().String() + "/metrics",
	}
	clientTLS, _ := tlsconfig.Client(ca.File, "", "")
	check := func(want string) {
		t.Helper()
		for name, url := range urls {
			status, serial, err := httpsGet(t, url, ca.File)
			if err != nil || status != http.StatusOK || serial != want {
				t.Errorf("%s over HTTPS: status %d, certificate %s, err %v; want 200 with certificate %s", name, status, serial, err, want)
			}
		}
		conn, err := tls.Dial("tcp", l.GRPC.Addr().String(), &tls.Config{RootCAs: clientTLS.RootCAs, NextProtos: []string{"h2"}})
		if err != nil {
			t.Fatalf("gRPC TLS handshake: %v", err)
		}
		if got := conn.ConnectionState().PeerCertificates[0].SerialNumber.String(); got != want {
			t.Errorf("gRPC served certificate %s, want %s", got, want)
		}
		conn.Close()
		if err := grpcHealth(l.GRPC.Addr().String(), credentials.NewTLS(clientTLS)); err != nil {
			t.Errorf("gRPC health over TLS: %v", err)
		}
	}
	check(p.Cert.SerialNumber.String())

	for name, url := range urls {
		res, err := http.Get("http" + strings.TrimPrefix(url, "https"))
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				t.Errorf("%s answered 200 in plain HTTP", name)
			}
		}
	}
	if err := grpcHealth(l.GRPC.Addr().String(), insecure.NewCredentials()); err == nil {
		t.Error("gRPC answered a plain-text client")
	}

	next := ca.IssueTo(t, tlsconfigtest.Options{}, p.CertFile, p.KeyFile)
	check(next.SerialNumber.String())
}

// TestGRPCClientCertificates: with --grpc-client-ca-file gRPC serves only
// clients presenting a certificate of that CA; HTTP asks for none.
func TestGRPCClientCertificates(t *testing.T) {
	ca, clients, other := tlsconfigtest.NewCA(t, "gatehouse"), tlsconfigtest.NewCA(t, "clients"), tlsconfigtest.NewCA(t, "other")
	p := ca.Issue(t, tlsconfigtest.Options{})
	l := serveTLS(t, config.TLS{CertFile: p.CertFile, KeyFile: p.KeyFile, ClientCAFile: clients.File})
	good := clients.Issue(t, tlsconfigtest.Options{CommonName: "portal"})
	strange := other.Issue(t, tlsconfigtest.Options{CommonName: "portal"})
	for _, tc := range []struct {
		name string
		pair *tlsconfigtest.Pair
		ok   bool
	}{
		{"certificate of the client CA", good, true},
		{"no certificate", nil, false},
		{"certificate of another CA", strange, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c *tls.Config
			var err error
			if tc.pair == nil {
				c, err = tlsconfig.Client(ca.File, "", "")
			} else {
				c, err = tlsconfig.Client(ca.File, tc.pair.CertFile, tc.pair.KeyFile)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := grpcHealth(l.GRPC.Addr().String(), credentials.NewTLS(c)); tc.ok != (err == nil) {
				t.Errorf("gRPC health: %v, want ok=%v", err, tc.ok)
			}
		})
	}
	if status, _, err := httpsGet(t, "https://"+l.HTTP.Addr().String()+"/healthz", ca.File); err != nil || status != http.StatusOK {
		t.Errorf("REST without a client certificate: status %d, err %v; want 200", status, err)
	}
}

func TestListenTLSBadFiles(t *testing.T) {
	ca := tlsconfigtest.NewCA(t, "gatehouse")
	p := ca.Issue(t, tlsconfigtest.Options{})
	for flag, files := range map[string]config.TLS{
		"--tls-cert-file":       {CertFile: p.CertFile + ".absent", KeyFile: p.KeyFile},
		"--grpc-client-ca-file": {CertFile: p.CertFile, KeyFile: p.KeyFile, ClientCAFile: p.KeyFile},
	} {
		cfg := loopback()
		cfg.TLS = files
		if l, err := Listen(cfg); err == nil || !strings.Contains(err.Error(), flag) {
			if l != nil {
				l.Close()
			}
			t.Errorf("Listen: %v, want an error naming %s", err, flag)
		}
	}
}
