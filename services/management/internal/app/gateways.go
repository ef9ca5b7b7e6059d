package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/gateway"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/gateways"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// serveGateways sets up what Tyk Gateways use (CONTRACT §6): with a node
// secret, the gateway routes; with --gateway-redis too, the notifier that
// announces every committed change to APIs and policies, run until stop is
// called (stop waits for it).
func serveGateways(ctx context.Context, log *slog.Logger, st *store.Store, cfg config.Gateways) (routes []gateway.PlainRoute, stop func(), err error) {
	if cfg.NodeSecret == "" {
		return nil, func() {}, nil
	}
	routes = gateways.New(gateways.Options{Secret: cfg.NodeSecret, Store: st, Derive: deriveClassic, Log: log}).Routes()
	if cfg.Redis == "" {
		return routes, func() {}, nil
	}
	client, err := gateways.NewRedis(cfg.Redis, cfg.RedisPassword)
	if err != nil {
		return nil, nil, err
	}
	n := gateways.NewNotifier(gateways.RedisPublisher{Client: client}, cfg.NodeSecret, log)
	st.OnCommit(n.Changed)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { n.Run(runCtx) })
	return routes, func() {
		cancel()
		wg.Wait()
		client.Close()
	}, nil
}

// deriveClassic is the OAS → classic derivation gateways load OAS APIs
// with: the converter's other direction.
var deriveClassic gateways.Derive = convert.ToClassic
