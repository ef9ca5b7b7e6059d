// Command studio serves the AI studio interface: LLM settings and studio
// users, over gRPC and REST (/api/v1).
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/services/studio/internal/app"
)

func main() {
	cfg, err := config.Parse("studio", os.Args[1:], os.Getenv, app.Defaults, os.Stderr)
	if errors.Is(err, config.ErrHelp) {
		return
	}
	if err != nil {
		os.Stderr.WriteString("studio: " + err.Error() + "\n")
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("service", "studio")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, cfg, log); err != nil {
		log.Error("studio stopped", "err", err)
		os.Exit(1)
	}
}
