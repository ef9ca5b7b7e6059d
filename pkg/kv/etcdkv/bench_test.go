package etcdkv_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
)

// BenchmarkEngines runs the engine operations the domain stores are made of
// on etcd (one member on loopback, fsync on) beside bbolt (a file in the
// test's temporary folder), so the cost of the replicated store reads off
// directly: a point read, a durable write, a read-modify-write, an id from a
// sequence with the record that uses it, a 100-key page, writes from 16
// goroutines at once, and creates (an id from one sequence and its record)
// from 32 goroutines at once, as 32 REST clients creating records do.
func BenchmarkEngines(b *testing.B) {
	c := etcdtest.Start(b, 1)
	engines := []struct {
		name string
		open func(b *testing.B) kv.Engine
	}{
		{"bbolt", func(b *testing.B) kv.Engine {
			e, err := boltkv.Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { e.Close() })
			return e
		}},
		{"etcd", func(b *testing.B) kv.Engine { return open(b, c) }},
	}
	ctx := context.Background()
	value := make([]byte, 1024)
	for _, eng := range engines {
		b.Run(eng.name, func(b *testing.B) {
			b.Run("Get", func(b *testing.B) {
				e := eng.open(b)
				put(b, e, "k", string(value))
				b.ReportAllocs()
				for b.Loop() {
					e.View(ctx, func(tx kv.ReadTx) error { _, err := tx.Get([]byte("k")); return err })
				}
			})
			b.Run("GetRecent", func(b *testing.B) { // the gRPC front door's key lookup (kv.Recent, 500 ms)
				e := eng.open(b)
				put(b, e, "k", string(value))
				recent := kv.Recent(ctx, 500*time.Millisecond)
				b.ReportAllocs()
				for b.Loop() {
					e.View(recent, func(tx kv.ReadTx) error { _, err := tx.Get([]byte("k")); return err })
				}
			})
			b.Run("Put1KiB", func(b *testing.B) {
				e := eng.open(b)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put(fmt.Appendf(nil, "p/%d", i), value) }); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("ReadModifyWrite", func(b *testing.B) {
				e := eng.open(b)
				put(b, e, "n", "0")
				b.ReportAllocs()
				for b.Loop() {
					err := e.Update(ctx, func(tx kv.WriteTx) error {
						v, err := tx.Get([]byte("n"))
						if err != nil {
							return err
						}
						return tx.Put([]byte("n"), append([]byte("1"), v[:min(len(v), 8)]...))
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("NextSeqAndPut", func(b *testing.B) {
				e := eng.open(b)
				b.ReportAllocs()
				for b.Loop() {
					err := e.Update(ctx, func(tx kv.WriteTx) error {
						id, err := tx.NextSeq("ids")
						if err != nil {
							return err
						}
						return tx.Put(fmt.Appendf(nil, "rec/%020d", id), value)
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("Scan100", func(b *testing.B) {
				e := eng.open(b)
				var kvs []string
				for i := range 100 {
					kvs = append(kvs, fmt.Sprintf("s/%03d", i), string(value))
				}
				put(b, e, kvs[:100]...)
				put(b, e, kvs[100:]...)
				b.ReportAllocs()
				for b.Loop() {
					n := 0
					e.View(ctx, func(tx kv.ReadTx) error {
						return tx.Scan([]byte("s/"), nil, func(_, _ []byte) error { n++; return nil })
					})
					if n != 100 {
						b.Fatalf("scanned %d", n)
					}
				}
			})
			b.Run("Put1KiB16Writers", func(b *testing.B) {
				e := eng.open(b)
				var i atomic.Int64
				b.SetParallelism(8) // 16 goroutines on 2 cores
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						k := fmt.Appendf(nil, "q/%d", i.Add(1))
						if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put(k, value) }); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
			b.Run("NextSeqAndPut32Writers", func(b *testing.B) {
				e := eng.open(b)
				b.SetParallelism(16) // 32 goroutines on 2 cores
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						err := e.Update(ctx, func(tx kv.WriteTx) error {
							id, err := tx.NextSeq("ids")
							if err != nil {
								return err
							}
							return tx.Put(fmt.Appendf(nil, "rec/%020d", id), value)
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		})
	}
}
