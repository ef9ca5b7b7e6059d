package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/gateways"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// serveGateways sets up what Tyk Gateways use (CONTRACT §6): with a node
// secret, the gateway routes and, in the background, the re-derivation of
// OAS records whose kept classic definition another build made; with
// --gateway-redis too, the notifier that announces every committed change
// to APIs and policies. Both run until stop is called (stop waits for them).
func serveGateways(ctx context.Context, log *slog.Logger, st *store.Store, records *apirecord.Maker, auditLog *audit.Log, cfg config.Gateways) (routes []restfacade.PlainRoute, stop func(), err error) {
	if cfg.NodeSecret == "" {
		return nil, func() {}, nil
	}
	var client *redis.Client
	if cfg.Redis != "" {
		if client, err = gateways.NewRedis(cfg.Redis, cfg.RedisPassword); err != nil {
			return nil, nil, err
		}
	}
	srv := gateways.New(gateways.Options{Secret: cfg.NodeSecret, Store: st, Records: records, Audit: auditLog, Log: log})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if client != nil {
		n := gateways.NewNotifier(gateways.RedisPublisher{Client: client}, cfg.NodeSecret, log)
		st.OnCommit(n.Changed)
		wg.Go(func() { n.Run(runCtx) })
	}
	wg.Go(func() { srv.Rederive(runCtx) })
	wg.Go(func() { srv.Prune(runCtx) })
	return srv.Routes(), func() {
		cancel()
		wg.Wait()
		if client != nil {
			client.Close()
		}
	}, nil
}

// apiRecords is the maker of st's API records: with a node secret (gateways
// are served) OAS records keep the classic definition gateways load, derived
// by the converter's other direction (convert.ToClassicWithin).
func apiRecords(st *store.Store, cfg config.Gateways) *apirecord.Maker {
	if cfg.NodeSecret == "" {
		return apirecord.New(st.OrgID(), nil)
	}
	return apirecord.New(st.OrgID(), convert.ToClassicWithin)
}
