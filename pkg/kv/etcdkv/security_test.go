package etcdkv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
)

// TestTLS: a member that requires client certificates refuses an engine
// with the CA alone and serves one with the client certificate.
func TestTLS(t *testing.T) {
	t.Parallel() // its own etcd on free ports
	files := etcdtest.WriteTLSFiles(t)
	c := etcdtest.StartTLS(t, files)
	ctx := context.Background()
	cfg := etcdkv.Config{Endpoints: c.Endpoints(), Prefix: "/tls/", CACert: files.CA, StartTimeout: 2 * time.Second}
	if e, err := etcdkv.Open(ctx, cfg); err == nil {
		e.Close()
		t.Fatal("Open without a client certificate succeeded on a member that requires one")
	}
	cfg.Cert, cfg.Key = files.ClientCert, files.ClientKey
	e, err := etcdkv.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	put(t, e, "k", "over TLS")
	if got := get(t, e, "k"); got != "over TLS" {
		t.Errorf("k = %q", got)
	}
}

// TestAuth: with etcd authentication enabled an engine without credentials
// is refused and one with a user's name and password works.
func TestAuth(t *testing.T) {
	t.Parallel() // its own etcd on free ports (auth enabled on it alone)
	c := etcdtest.Start(t, 1)
	ctx := context.Background()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, step := range []func() error{
		func() error { _, err := cli.UserAdd(ctx, "root", "root-pw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	// bcrypt runs in this process (the embedded member), slow under -race on
	// a loaded machine: the credentialed dial gets room (RequestTimeout).
	cfg := etcdkv.Config{Endpoints: c.Endpoints(), Prefix: "/auth/", StartTimeout: 2 * time.Second, RequestTimeout: 30 * time.Second}
	if e, err := etcdkv.Open(ctx, cfg); err == nil {
		e.Close()
		t.Fatal("Open without credentials succeeded with authentication on")
	} else if errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("Open without credentials: %v; want etcd's refusal, not unavailability", err)
	}
	cfg.Username, cfg.Password = "root", "root-pw"
	e, err := etcdkv.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	put(t, e, "k", "authenticated")
	if got := get(t, e, "k"); got != "authenticated" {
		t.Errorf("k = %q", got)
	}
}
