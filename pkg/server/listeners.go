package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/pkg/buildinfo"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig"
)

// Listeners are a service's open sockets: the REST facade and gRPC always,
// the public site (the portal's --site-addr) and /metrics (--metrics-addr)
// when configured.
type Listeners struct {
	HTTP, GRPC net.Listener
	Site       net.Listener // nil: the service has no public site
	Metrics    net.Listener // nil: /metrics is served on HTTP
	// Debug is the address of the debug listener Run serves (--debug-addr),
	// named in the listening line; nil: none.
	Debug net.Addr
	// TLS, when set, is what the HTTP, site and metrics listeners serve
	// HTTPS with; GRPCTLS what gRPC serves TLS with (client certificates
	// required with --grpc-client-ca-file). Both nil: plain text.
	TLS, GRPCTLS *tls.Config
	mtls         bool // GRPCTLS requires client certificates
	// newStore is the bbolt file this start creates (absent when Listen
	// ran): the listening line is followed by "new store created at
	// <path>", so that a mistyped --db is seen at once.
	newStore string
}

// Listen opens cfg's addresses (port 0 picks a free port). It logs nothing:
// Serve logs the real addresses once the store has opened, so that a
// service that cannot open its store never says it listens.
//
// A SiteAddr that is the built-in default (cfg.SiteAddrDefault) and is held
// by another process — a second replica on one machine, a test suite that
// does not know the flag — is replaced by a free loopback port, named in the
// listening line; a site address that was given and is taken is an error.
func Listen(cfg config.Config) (*Listeners, error) {
	l := &Listeners{}
	if (cfg.Store == config.StoreBbolt || cfg.Store == "") && cfg.DBPath != "" {
		if _, err := os.Stat(cfg.DBPath); errors.Is(err, fs.ErrNotExist) {
			if l.newStore, err = filepath.Abs(cfg.DBPath); err != nil {
				l.newStore = cfg.DBPath
			}
		}
	}
	if cfg.TLS.On() {
		var err error
		if l.TLS, err = tlsconfig.Server(cfg.TLS.CertFile, cfg.TLS.KeyFile, "", "http/1.1"); err != nil {
			return nil, fmt.Errorf("--tls-cert-file, --tls-key-file: %w", err)
		}
		if l.GRPCTLS, err = tlsconfig.Server(cfg.TLS.CertFile, cfg.TLS.KeyFile, cfg.TLS.ClientCAFile); err != nil {
			return nil, fmt.Errorf("--grpc-client-ca-file: %w", err)
		}
		l.mtls = cfg.TLS.ClientCAFile != ""
	}
	if err := l.open(cfg); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// open opens cfg's addresses into l; the caller closes what was opened
// when it fails.
func (l *Listeners) open(cfg config.Config) error {
	open := func(dst *net.Listener, flag, addr string) error {
		var err error
		if *dst, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("listen on --%s %s: %w", flag, addr, err)
		}
		return nil
	}
	if err := open(&l.HTTP, "http-addr", cfg.HTTPAddr); err != nil {
		return err
	}
	if err := open(&l.GRPC, "grpc-addr", cfg.GRPCAddr); err != nil {
		return err
	}
	if cfg.SiteAddr != "" {
		err := open(&l.Site, "site-addr", cfg.SiteAddr)
		if err != nil && cfg.SiteAddrDefault && errors.Is(err, syscall.EADDRINUSE) {
			err = open(&l.Site, "site-addr", "127.0.0.1:0")
		}
		if err != nil {
			return err
		}
	}
	if cfg.MetricsAddr != "" {
		return open(&l.Metrics, "metrics-addr", cfg.MetricsAddr)
	}
	return nil
}

// logListening writes the listening line: the real HTTP and gRPC
// addresses first (CONTRACT §0), then the site's and the metrics'.
//
// With TLS the schemes are https and grpcs, and the tls attribute says
// whether gRPC requires client certificates (mtls).
func (l *Listeners) logListening(log *slog.Logger) {
	web, rpc, tlsMode := "http", "grpc", "off"
	if l.TLS != nil {
		web, rpc, tlsMode = "https", "grpcs", "on"
		if l.mtls {
			tlsMode = "mtls"
		}
	}
	msg := fmt.Sprintf("listening: %s://%s %s://%s", web, l.HTTP.Addr(), rpc, l.GRPC.Addr())
	attrs := []any{"http_addr", l.HTTP.Addr().String(), "grpc_addr", l.GRPC.Addr().String(), "tls", tlsMode}
	if l.Site != nil {
		msg += fmt.Sprintf(" site %s://%s/", web, l.Site.Addr())
		attrs = append(attrs, "site_addr", l.Site.Addr().String())
	}
	if l.Metrics != nil {
		msg += fmt.Sprintf(" metrics %s://%s/metrics", web, l.Metrics.Addr())
		attrs = append(attrs, "metrics_addr", l.Metrics.Addr().String())
	}
	if l.Debug != nil {
		msg += fmt.Sprintf(" debug http://%s/debug/pprof/", l.Debug)
		attrs = append(attrs, "debug_addr", l.Debug.String())
	}
	b := buildinfo.Get()
	attrs = append(attrs, "version", b.Version, "revision", b.Revision, "goversion", b.GoVersion)
	log.Info(msg, attrs...)
	if l.newStore != "" {
		log.Info("new store created at "+l.newStore, "path", l.newStore)
	}
}

// Close closes every socket; Serve does it itself.
func (l *Listeners) Close() {
	for _, s := range []net.Listener{l.HTTP, l.GRPC, l.Site, l.Metrics} {
		if s != nil {
			s.Close()
		}
	}
}

// httpServer is one HTTP server and the listener it serves.
type httpServer struct {
	srv *http.Server
	l   net.Listener
}

// newHTTPServer returns a server with the limits' timeouts; readTimeout
// bounds a whole request, body included.
func newHTTPServer(log *slog.Logger, h http.Handler, limits config.Limits, readTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: limits.ReadHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      limits.WriteTimeout,
		IdleTimeout:       limits.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// auxServers are the servers of l's optional listeners: the public site,
// with caps of its own (connections and requests in flight, counted apart
// from the API's, so that anonymous visitors cannot starve the admin API),
// and /metrics.
func auxServers(log *slog.Logger, l *Listeners, svc Service, limits config.Limits) []httpServer {
	var out []httpServer
	if l.Site != nil && svc.Site != nil {
		busy := rawResponse(http.StatusServiceUnavailable, http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Retry-After": {"1"}}, []byte("server busy: too many connections, retry later\n"))
		busyIP := rawResponse(http.StatusServiceUnavailable, http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Retry-After": {"1"}}, []byte("server busy: too many connections from your address, retry later\n"))
		h := restfacade.Public(svc.Site, log, limits.MaxInFlight)
		// Site requests carry no body: the header timeout bounds the whole read.
		out = append(out, httpServer{newHTTPServer(log, h, limits, 2*limits.ReadHeaderTimeout), l.capped(l.Site, limits, busy, busyIP)})
	}
	if l.Metrics != nil {
		out = append(out, httpServer{newHTTPServer(log, restfacade.Metrics(), limits, 2*limits.ReadHeaderTimeout), l.capped(l.Metrics, limits, nil, nil)})
	}
	return out
}

// capped is an HTTP listener under the limits' connection caps, serving
// HTTPS when l has TLS. Over TLS a connection over a cap is closed without
// an answer: the ready-made plain-text refusals would not be understood
// before a handshake.
func (l *Listeners) capped(s net.Listener, limits config.Limits, refuse, refuseIP []byte) net.Listener {
	if l.TLS == nil {
		return newCapListener(s, limits.MaxConns, limits.MaxConnsPerIP, refuse, refuseIP)
	}
	return tls.NewListener(newCapListener(s, limits.MaxConns, limits.MaxConnsPerIP, nil, nil), l.TLS)
}
