package store

import (
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
)

// TestOnEtcd runs the store's concurrency cases on an etcd member, where
// update functions retry on conflicts: the store is written once, and its
// invariants must hold on both engines.
func TestOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd member")
	}
	c := etcdtest.Start(t, 1)
	open := func(t *testing.T) *Store {
		e, err := etcdkv.Open(ctx, etcdkv.Config{Endpoints: c.Endpoints(), Prefix: "/studio-test/" + t.Name() + "/"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		s, err := Open(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.checkIndexes(); err != nil {
				t.Errorf("indexes: %v", err)
			}
		})
		return s
	}
	for name, test := range map[string]func(*testing.T, *Store){
		"LlmSettingsLifecycle": testLlmSettingsLifecycle,
		"ListPages":            testListPages,
		"UsersAndKeys":         testUsersAndKeys,
		"ConcurrentFirstAdmin": testConcurrentFirstAdmin,
	} {
		t.Run(name, func(t *testing.T) { test(t, open(t)) })
	}
}
