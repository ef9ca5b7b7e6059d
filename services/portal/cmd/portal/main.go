// Command portal serves the developer portal interface: API products, their
// tutorial pages, tags and categories, over gRPC and REST (/portal-api).
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/services/portal/internal/app"
)

func main() {
	cfg, err := config.Parse("portal", os.Args[1:], os.Getenv, app.Defaults, os.Stderr)
	if errors.Is(err, config.ErrHelp) {
		return
	}
	if err != nil {
		os.Stderr.WriteString("portal: " + err.Error() + "\n")
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("service", "portal")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, cfg, log); err != nil {
		log.Error("portal stopped", "err", err)
		os.Exit(1)
	}
}
