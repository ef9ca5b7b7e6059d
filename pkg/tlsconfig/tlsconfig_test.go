package tlsconfig_test

import (
	"crypto/tls"
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/tlsconfig"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig/tlsconfigtest"
)

// serve accepts TLS connections with cfg on a loopback port until the test
// ends; each completes its handshake, answers one byte and closes.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if c.(*tls.Conn).Handshake() == nil {
					c.Write([]byte{1})
				}
			}()
		}
	}()
	return l.Addr().String()
}

// dial completes a handshake with cfg and returns the server's certificate
// serial, or the error.
func dial(addr string, cfg *tls.Config) (string, error) {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	// With TLS 1.3 a refused client certificate shows at the first read.
	if _, err := c.Read(make([]byte, 1)); err != nil {
		return "", err
	}
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

func TestServer(t *testing.T) {
	ca, other := tlsconfigtest.NewCA(t, "gatehouse"), tlsconfigtest.NewCA(t, "other")
	good := ca.Issue(t, tlsconfigtest.Options{})
	expired := ca.Issue(t, tlsconfigtest.Options{Expired: true})
	strange := other.Issue(t, tlsconfigtest.Options{})
	client := func(t *testing.T, caFile string) *tls.Config {
		c, err := tlsconfig.Client(caFile, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		served *tlsconfigtest.Pair
		caFile string
		want   string // "" for a handshake that succeeds, else part of the client's error
	}{
		{"good", good, ca.File, ""},
		{"expired", expired, ca.File, "expired"},
		{"wrong CA", strange, ca.File, "unknown authority"},
		{"no CA given: system roots", good, "", "unknown authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tlsconfig.Server(tc.served.CertFile, tc.served.KeyFile, "")
			if err != nil {
				t.Fatal(err)
			}
			serial, err := dial(serve(t, cfg), client(t, tc.caFile))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("handshake: %v", err)
			case tc.want == "" && serial != tc.served.Cert.SerialNumber.String():
				t.Fatalf("served certificate %s, want %s", serial, tc.served.Cert.SerialNumber)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("handshake error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestServerVersion(t *testing.T) {
	ca := tlsconfigtest.NewCA(t, "gatehouse")
	p := ca.Issue(t, tlsconfigtest.Options{})
	cfg, err := tlsconfig.Server(p.CertFile, p.KeyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	c, _ := tlsconfig.Client(ca.File, "", "")
	c.MaxVersion = tls.VersionTLS11
	if _, err := dial(addr, c); err == nil {
		t.Fatal("a TLS 1.1 client was served, want TLS 1.2 at least")
	}
}

// TestRotation replaces the served certificate's files under a running
// listener: the next handshake gets the new certificate; a rotation caught
// half way (new certificate, old key) keeps the old pair in use.
func TestRotation(t *testing.T) {
	ca := tlsconfigtest.NewCA(t, "gatehouse")
	p := ca.Issue(t, tlsconfigtest.Options{})
	cfg, err := tlsconfig.Server(p.CertFile, p.KeyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	client, _ := tlsconfig.Client(ca.File, "", "")
	if serial, err := dial(addr, client); err != nil || serial != p.Cert.SerialNumber.String() {
		t.Fatalf("before the rotation: serial %s, err %v; want %s", serial, err, p.Cert.SerialNumber)
	}

	oldKey, err := os.ReadFile(p.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	next := ca.IssueTo(t, tlsconfigtest.Options{}, p.CertFile, p.KeyFile)
	if serial, err := dial(addr, client); err != nil || serial != next.SerialNumber.String() {
		t.Fatalf("after the rotation: serial %s, err %v; want the new %s", serial, err, next.SerialNumber)
	}

	// Half way: a third certificate written, its key not yet.
	newKey := p.KeyFile + ".new"
	third := ca.IssueTo(t, tlsconfigtest.Options{}, p.CertFile, newKey)
	if err := os.WriteFile(p.KeyFile+".tmp", oldKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p.KeyFile+".tmp", p.KeyFile); err != nil {
		t.Fatal(err)
	}
	if serial, err := dial(addr, client); err != nil || serial != next.SerialNumber.String() {
		t.Fatalf("half way through a rotation: serial %s, err %v; want the last good %s", serial, err, next.SerialNumber)
	}
	if err := os.Rename(newKey, p.KeyFile); err != nil {
		t.Fatal(err)
	}
	if serial, err := dial(addr, client); err != nil || serial != third.SerialNumber.String() {
		t.Fatalf("rotation completed: serial %s, err %v; want %s", serial, err, third.SerialNumber)
	}
}

func TestMutualTLS(t *testing.T) {
	ca, other := tlsconfigtest.NewCA(t, "gatehouse"), tlsconfigtest.NewCA(t, "other")
	srv := ca.Issue(t, tlsconfigtest.Options{})
	clientCA := tlsconfigtest.NewCA(t, "clients")
	cfg, err := tlsconfig.Server(srv.CertFile, srv.KeyFile, clientCA.File)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	good := clientCA.Issue(t, tlsconfigtest.Options{CommonName: "portal"})
	expired := clientCA.Issue(t, tlsconfigtest.Options{CommonName: "portal", Expired: true})
	strange := other.Issue(t, tlsconfigtest.Options{CommonName: "portal"})
	for _, tc := range []struct {
		name string
		pair *tlsconfigtest.Pair
		ok   bool
	}{
		{"client certificate", good, true},
		{"no client certificate", nil, false},
		{"expired client certificate", expired, false},
		{"client certificate of another CA", strange, false},
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
			_, err = dial(addr, c)
			if tc.ok != (err == nil) {
				t.Fatalf("handshake error %v, want ok=%v", err, tc.ok)
			}
		})
	}

	// The client CA file is read again when it changes: clients of the new
	// CA are admitted, the old CA's no longer.
	rotated := tlsconfigtest.NewCA(t, "clients-2")
	pem, err := os.ReadFile(rotated.File)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(clientCA.File+".tmp", pem, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(clientCA.File+".tmp", clientCA.File); err != nil {
		t.Fatal(err)
	}
	next := rotated.Issue(t, tlsconfigtest.Options{CommonName: "portal"})
	c, _ := tlsconfig.Client(ca.File, next.CertFile, next.KeyFile)
	if _, err := dial(addr, c); err != nil {
		t.Fatalf("client of the rotated CA: %v", err)
	}
	c, _ = tlsconfig.Client(ca.File, good.CertFile, good.KeyFile)
	if _, err := dial(addr, c); err == nil {
		t.Fatal("client of the replaced CA still admitted")
	}
}

func TestBadFiles(t *testing.T) {
	ca := tlsconfigtest.NewCA(t, "gatehouse")
	p := ca.Issue(t, tlsconfigtest.Options{})
	other := ca.Issue(t, tlsconfigtest.Options{})
	for _, tc := range []struct {
		name              string
		cert, key, caFile string
		want              string
	}{
		{"missing certificate", p.CertFile + ".absent", p.KeyFile, "", "no such file"},
		{"key of another certificate", p.CertFile, other.KeyFile, "", "does not match"},
		{"key without certificate", "", p.KeyFile, "", "go together"},
		{"CA file that is no certificate", p.CertFile, p.KeyFile, p.KeyFile, "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tlsconfig.Server(tc.cert, tc.key, tc.caFile)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := tlsconfig.Client("", p.CertFile, ""); err == nil {
		t.Fatal("Client took a certificate without its key")
	}
}

// BenchmarkGetCertificate is what each handshake adds to find out whether
// the certificate's files changed (two stats) and return the pair.
func BenchmarkGetCertificate(b *testing.B) {
	ca := tlsconfigtest.NewCA(b, "gatehouse")
	p := ca.Issue(b, tlsconfigtest.Options{})
	cfg, err := tlsconfig.Server(p.CertFile, p.KeyFile, "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cfg.GetCertificate(nil); err != nil {
			b.Fatal(err)
		}
	}
}
