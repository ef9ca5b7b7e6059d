// Package kvopen opens the kv engine a service's settings name (--store):
// the one place that knows every engine, so services depend on kv alone.
package kvopen

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
)

// ErrEtcdNotBuilt is answered for --store etcd until the etcd engine is
// plugged in here.
var ErrEtcdNotBuilt = errors.New("--store etcd: the etcd engine is not built yet")

// Open opens the engine cfg names: the bbolt file at cfg.DBPath, or the etcd
// cluster of cfg.Etcd.
func Open(ctx context.Context, cfg config.Config) (kv.Engine, error) {
	switch cfg.Store {
	case config.StoreBbolt, "":
		return boltkv.Open(cfg.DBPath)
	case config.StoreEtcd:
		return nil, ErrEtcdNotBuilt
	}
	return nil, fmt.Errorf("unknown store %q", cfg.Store)
}
