package kvopen

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
)

func TestOpensBbolt(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, config.Config{Store: config.StoreBbolt, DBPath: filepath.Join(t.TempDir(), "a", "s.db")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := e.Ready(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOpensEtcd(t *testing.T) {
	ctx := context.Background()
	c := etcdtest.Start(t, 1)
	e, err := Open(ctx, config.Config{Store: config.StoreEtcd, Etcd: config.Etcd{Endpoints: c.Endpoints(), Prefix: "/kvopen/"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := e.Ready(ctx); err != nil {
		t.Fatal(err)
	}
}
