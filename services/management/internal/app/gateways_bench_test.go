package app

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse/gatehouse/pkg/redistest"
	"github.com/gatehouse/gatehouse/services/management/internal/gateways"
)

// BenchmarkSystemAPIs10k: a gateway's GET /system/apis over 10,000 APIs, half
// of them Tyk OAS (migrated from classic; each record keeps the classic
// definition derived when it was written). Reported: time to the first byte and
// to the last, the answer's size, and the allocations of the whole process
// (server and this client) per request.
func BenchmarkSystemAPIs10k(b *testing.B) {
	db := filepath.Join(b.TempDir(), "management.db")
	ids := seedClassic(b, db, 10000)
	in := startGateways(b, db, "")
	if rep := in.migrate(b, migrateBody("direct", ids[:5000]...)); rep.Success.Count != 5000 {
		b.Fatalf("migrated %d of 5,000: %+v", rep.Success.Count, rep.Failure)
	}
	var ttfb, total time.Duration
	var size int64
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := make(chan uint64)
	stop := make(chan struct{})
	go func() { // the heap's high-water mark while the requests run
		var m runtime.MemStats
		var top uint64
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapInuse)
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var first time.Time
		start := time.Now()
		ctx := httptrace.WithClientTrace(b.Context(), &httptrace.ClientTrace{GotFirstResponseByte: func() { first = time.Now() }})
		req, _ := http.NewRequestWithContext(ctx, "GET", in.base+"/system/apis", nil)
		req.Header.Set("Authorization", nodeSecret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("status %d, %v", res.StatusCode, err)
		}
		ttfb += first.Sub(start)
		total += time.Since(start)
		size = n
	}
	close(stop)
	top := <-peak
	b.ReportMetric(float64(top-min(base.HeapInuse, top))/(1<<20), "peak-heap-growth-MiB")
	b.ReportMetric(float64(ttfb.Milliseconds())/float64(b.N), "ttfb-ms/op")
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "total-ms/op")
	b.ReportMetric(float64(size)/(1<<20), "MiB/answer")
}

// BenchmarkMigrate10kNotifications: how many reload notifications a direct
// migration of 10,000 classic APIs sends (bursts are coalesced: about one
// round a second while it runs), and how long the migration took.
func BenchmarkMigrate10kNotifications(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		db := filepath.Join(b.TempDir(), "management.db")
		seedClassic(b, db, 10000)
		rd := redistest.Start(b)
		in := startGateways(b, db, "redis://"+rd.Addr)
		sub := redis.NewClient(&redis.Options{Addr: rd.Addr})
		ps := sub.Subscribe(b.Context(), gateways.Channel)
		if _, err := ps.Receive(b.Context()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if rep := in.migrate(b, `{"mode":"direct","all":true}`); rep.Success.Count != 10000 {
			b.Fatalf("migrated %d", rep.Success.Count)
		}
		took := time.Since(start)
		b.StopTimer()
		n := 0
		for quiet := time.After(3 * time.Second); ; {
			select {
			case <-ps.Channel():
				n++
				continue
			case <-quiet:
			}
			break
		}
		ps.Close()
		sub.Close()
		in.stop()
		b.ReportMetric(float64(n), "notifications")
		b.ReportMetric(took.Seconds(), "migration-s")
		b.StartTimer()
	}
}
