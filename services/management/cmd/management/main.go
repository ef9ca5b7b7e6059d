// Command management serves the management interface: users and
// permissions, classic and Tyk OAS API definitions, categories, export and
// migration, over gRPC and REST (/api).
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/services/management/internal/app"
)

func main() {
	cfg, err := config.Parse("management", os.Args[1:], os.Getenv, app.Defaults, os.Stderr)
	if errors.Is(err, config.ErrHelp) {
		return
	}
	if err != nil {
		os.Stderr.WriteString("management: " + err.Error() + "\n")
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("service", "management")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, cfg, log); err != nil {
		log.Error("management stopped", "err", err)
		os.Exit(1)
	}
}
