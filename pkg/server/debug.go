package server

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// DebugHandler serves Go's profiles (/debug/pprof/...) and expvar
// (/debug/vars). It is served only on --debug-addr, a listener of its own,
// never on the API port: profiles expose internals and cost CPU.
func DebugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/vars", expvar.Handler())
	return mux
}

// serveDebug listens on addr and serves DebugHandler until the returned
// function is called. The listening line names its address (Listeners.Debug).
// Secrets are not served back: the flags that carry one are redacted from
// os.Args (config.RedactArgs), which pprof's cmdline and expvar's read.
func serveDebug(log *slog.Logger, addr string) (l net.Listener, stop func(), err error) {
	l, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on --debug-addr %s: %w", addr, err)
	}
	srv := &http.Server{Handler: DebugHandler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			log.Error("debug listener failed", "err", err)
		}
	}()
	return l, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
	}, nil
}
