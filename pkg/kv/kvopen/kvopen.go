// Package kvopen opens the kv engine a service's settings name (--store):
// the one place that knows every engine, so services depend on kv alone.
// Every engine it opens is measured and traced (kvobserve).
package kvopen

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/kvobserve"
)

// Open opens the engine cfg names: the bbolt file at cfg.DBPath, or the etcd
// cluster of cfg.Etcd; measured and traced (kvobserve), its store-full
// events logged on log.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger) (kv.Engine, error) {
	e, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return kvobserve.Wrap(e, log), nil
}

func open(ctx context.Context, cfg config.Config) (kv.Engine, error) {
	switch cfg.Store {
	case config.StoreBbolt, "":
		return boltkv.Open(cfg.DBPath)
	case config.StoreEtcd:
		return etcdkv.Open(ctx, etcdkv.Config{
			Endpoints: cfg.Etcd.Endpoints,
			Prefix:    cfg.Etcd.Prefix,
			CACert:    cfg.Etcd.CACert,
			Cert:      cfg.Etcd.Cert,
			Key:       cfg.Etcd.Key,
			Username:  cfg.Etcd.Username,
			Password:  cfg.Etcd.Password,
			// Operators raise etcd's limit for very large OAS documents.
			MaxRequestBytes: cfg.Etcd.MaxRequestBytes,
		})
	}
	return nil, fmt.Errorf("unknown store %q", cfg.Store)
}

// Describe names the store cfg opens, for the one line a service prints
// when it cannot start on it: "store file data/studio.db", or "etcd store
// /gatehouse/studio/ on 127.0.0.1:2379".
func Describe(cfg config.Config) string {
	if cfg.Store == config.StoreEtcd {
		return fmt.Sprintf("etcd store %s on %s", cfg.Etcd.Prefix, strings.Join(cfg.Etcd.Endpoints, ","))
	}
	return "store file " + cfg.DBPath
}
