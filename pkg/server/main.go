package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/gatehouse/gatehouse/pkg/buildinfo"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/inflight"
	"github.com/gatehouse/gatehouse/pkg/logbuf"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/pkg/tracing"
)

// MemLimitRatio is the share of the container's memory limit that
// GOMEMLIMIT gets when the environment does not set it.
const MemLimitRatio = 0.9

// ServeFunc opens what a service owns (its store, its bootstrap credential)
// and serves on l until ctx ends.
type ServeFunc func(ctx context.Context, log *slog.Logger, l *Listeners, cfg config.Config) error

// Main is a service binary's whole main: settings from flags with the
// environment as fallback, a structured logger on stderr, SIGINT and SIGTERM
// for a graceful stop, exit status 0 after it, 1 on failure, 2 on bad flags.
func Main(name string, defaults config.Defaults, serve ServeFunc) {
	// The limits' real defaults, so that --help shows them.
	defaults.Limits = config.Limits{MaxConns: DefaultMaxConns, MaxInFlight: restfacade.DefaultMaxInFlight,
		MaxConnsPerIP: DefaultMaxConnsPerIP, MaxInFlightBytes: inflight.DefaultBytes}
	cfg, err := config.Parse(name, os.Args[1:], os.Getenv, defaults, os.Stderr)
	switch {
	case errors.Is(err, config.ErrHelp):
		return
	case errors.Is(err, config.ErrVersion):
		fmt.Println(buildinfo.Get().String(name))
		return
	case err != nil:
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	// Nothing in the process serves a secret back (pprof's and expvar's cmdline).
	os.Args = append(os.Args[:1:1], config.RedactArgs(os.Args[1:])...)
	// The log's lines are written a few milliseconds apart (logbuf), and
	// all of them before the process exits.
	stderr := logbuf.New(os.Stderr)
	defer stderr.Close()
	exit := func(code int) { stderr.Close(); os.Exit(code) }
	log := NewLogger(stderr, cfg.Log).With("service", name)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTracing, err := tracing.Setup(ctx, name, os.Getenv)
	if err != nil {
		log.Error(err.Error())
		exit(1)
	}
	defer func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopTracing(flush)
	}()
	if err := Run(ctx, log, cfg, serve); err != nil {
		log.Error("stopped", "err", err)
		stop()
		exit(1)
	}
}

// NewLogger is the process's logger: text (key=value) or JSON lines at the
// configured level and above.
func NewLogger(w io.Writer, c config.Log) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.Level}
	if c.Format == config.LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Run listens on cfg's addresses, serves the debug listener when
// cfg.DebugAddr is set, and calls serve, which opens the store and then
// names the addresses in the first log line (Serve); the sockets are closed
// when it returns.
func Run(ctx context.Context, log *slog.Logger, cfg config.Config, serve ServeFunc) error {
	l, err := Listen(cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	// GOMEMLIMIT, when the environment does not set it, is 90% of the
	// cgroup's memory limit (none: no limit), so the collector works
	// harder before the kernel's OOM killer acts.
	if _, err := memlimit.Set(memlimit.WithRatio(MemLimitRatio)); err != nil {
		log.Warn("GOMEMLIMIT left unset: the cgroup memory limit could not be read", "err", err)
	}
	if cfg.DebugAddr != "" {
		debug, stopDebug, err := serveDebug(log, cfg.DebugAddr)
		if err != nil {
			return err
		}
		defer stopDebug()
		l.Debug = debug.Addr()
	}
	return serve(ctx, log, l, cfg)
}
