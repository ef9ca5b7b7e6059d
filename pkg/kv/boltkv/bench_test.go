package boltkv

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// BenchmarkUpdate measures durable single-key writes (each one fsynced
// before Update returns) by 1 and by 32 concurrent writers: with group
// commit the 32 share transactions and fsyncs. It reports writes/s and the
// 99th percentile latency of one Update.
func BenchmarkUpdate(b *testing.B) {
	for _, writers := range []int{1, 32} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			e, err := Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			writeLoad(b, writers, func(key, value []byte) error {
				return e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put(key, value) })
			})
		})
	}
}

// BenchmarkPlainBoltUpdate is the same load on bbolt's own Update, one
// transaction and one fsync per write: the stores before group commit.
func BenchmarkPlainBoltUpdate(b *testing.B) {
	for _, writers := range []int{1, 32} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "bench.db"), 0o600, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(dataBucket); return err })
			writeLoad(b, writers, func(key, value []byte) error {
				return db.Update(func(tx *bolt.Tx) error { return tx.Bucket(dataBucket).Put(key, value) })
			})
		})
	}
}

// writeLoad runs b.N writes of 256-byte values over 4,096 keys from writers
// goroutines and reports writes/s and the 99th percentile latency.
func writeLoad(b *testing.B, writers int, write func(key, value []byte) error) {
	value := make([]byte, 256)
	var next atomic.Int64
	lat := make([][]time.Duration, writers)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				begin := time.Now()
				err := write(fmt.Appendf(nil, "k/%08d", i%4096), value)
				lat[w] = append(lat[w], time.Since(begin))
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	reportLatency(b, slices.Concat(lat...))
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
