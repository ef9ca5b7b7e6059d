package etcdkv_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
)

// TestFaults runs one engine on a 3-member cluster through a leader stop
// and a quorum loss; the engine is never reopened.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member etcd cluster")
	}
	t.Parallel() // its own cluster; the quorum-loss part mostly waits out request timeouts
	c := etcdtest.Start(t, 3)
	e := open(t, c)
	ctx := context.Background()

	t.Run("LeaderStopLosesNoAcknowledgedWrite", func(t *testing.T) {
		var (
			mu      sync.Mutex
			acked   []string
			stopped = make(chan struct{})
			afterN  int
		)
		done := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					key := fmt.Sprintf("w/%d/%05d", g, i)
					err := e.Update(ctx, func(tx kv.WriteTx) error {
						if _, err := tx.NextSeq("writes"); err != nil {
							return err
						}
						return tx.Put([]byte(key), []byte("v"))
					})
					switch {
					case err == nil:
						mu.Lock()
						acked = append(acked, key)
						select {
						case <-stopped:
							afterN++
						default:
						}
						mu.Unlock()
					case errors.Is(err, kv.ErrUnavailable), errors.Is(err, kv.ErrConflict):
						// Not acknowledged: may or may not have landed.
					default:
						t.Errorf("write during failover: %v (want success or ErrUnavailable)", err)
						return
					}
				}
			})
		}
		waitFor(t, 20*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 40 })
		leader := c.Leader()
		c.Stop(leader)
		close(stopped)
		waitFor(t, 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return afterN >= 40 })
		close(done)
		wg.Wait()
		var missing []string
		err := e.View(ctx, func(tx kv.ReadTx) error {
			for _, k := range acked {
				v, err := tx.Get([]byte(k))
				if err != nil {
					return err
				}
				if v == nil {
					missing = append(missing, k)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(missing) > 0 {
			t.Errorf("%d of %d acknowledged writes lost after the leader stopped: %v", len(missing), len(acked), missing)
		}
		c.Restart(leader)
		c.WaitReady(leader)
	})

	t.Run("QuorumLossIsUnavailableThenRecovers", func(t *testing.T) {
		leader := c.Leader()
		down := []int{(leader + 1) % 3, (leader + 2) % 3}
		for _, i := range down {
			c.Stop(i)
		}
		start := time.Now()
		err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte("q"), []byte("1")) })
		if !errors.Is(err, kv.ErrUnavailable) {
			t.Errorf("write without quorum = %v, want ErrUnavailable", err)
		}
		err = e.View(ctx, func(tx kv.ReadTx) error { _, err := tx.Get([]byte("q")); return err })
		if !errors.Is(err, kv.ErrUnavailable) {
			t.Errorf("read without quorum = %v, want ErrUnavailable", err)
		}
		if err := e.Ready(ctx); !errors.Is(err, kv.ErrUnavailable) {
			t.Errorf("Ready without quorum = %v, want ErrUnavailable", err)
		}
		// A hang check, not a speed goal: each call is bounded by the
		// engine's request timeout (5 s).
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("three calls without quorum took %s", d)
		}
		for _, i := range down {
			c.Restart(i)
		}
		waitFor(t, 30*time.Second, func() bool {
			return e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte("q"), []byte("2")) }) == nil
		})
		if err := e.Ready(ctx); err != nil {
			t.Errorf("Ready after recovery = %v", err)
		}
		if got := get(t, e, "q"); got != "2" {
			t.Errorf("q = %q after recovery, want 2", got)
		}
	})
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
