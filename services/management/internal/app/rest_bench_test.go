package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// clients is how many keep-alive REST clients BenchmarkREST32 runs.
const clients = 32

// BenchmarkREST32 drives management's REST routes from 32 keep-alive
// clients (the load of studio's BenchmarkREST32) against the binary on
// bbolt, beside a bare server in the same run: net/http answering every
// request with a fixed small JSON body, no store, no authentication. A
// route's figure is its req/s over the bare server's, on the same machine at
// the same time (the machine is shared: absolute figures move, ratios less):
//
//   - bare: the bare server, GET;
//   - categories: GET /api/apis/categories over 1,024 APIs in 16 categories;
//   - delete: DELETE /api/apis/{id} of b.N classic APIs created before the
//     timer starts (every delete answered after its commit is fsynced);
//   - bare-durable: the floor of any durable DELETE on this machine, in the
//     bare server's process: net/http whose handler deletes one of b.N keys
//     and appends a 200-byte entry through the same kv engine (bbolt, group
//     commit, fdatasync) and answers after the commit, with no JSON, no
//     authentication, no indexes and no logging. A route cannot beat it; its
//     ratio to bare bounds what the delete's ratio can reach;
//   - bare-fsync: the floor of any durable answer on this machine: the bare
//     server appending a 200-byte entry to a preallocated file and answering
//     after the fdatasync that holds it, one fdatasync for all the entries
//     appended while the last ran (fsyncLog).
//
// BENCH_DEBUG_ADDR=host:port makes the binary serve pprof there (see
// studio's BenchmarkREST32); with it, BENCH_CPUPROFILE=file writes the
// binary's CPU profile of the timed phase's first BENCH_CPUPROFILE_SECONDS
// (default 3) there (the creates before the timer are left out);
// BENCH_ALLOCPROFILE=file, in its place, the allocations of that span.
func BenchmarkREST32(b *testing.B) {
	bin := buildBinary(b)
	create := func(i int) servertest.Request {
		return servertest.Request{Method: "POST", Path: "/api/apis", Want: 200, Body: fmt.Appendf(nil,
			`{"api_definition":{"api_id":"bench%08d","name":"Bench %d #team%d","use_keyless":true,"proxy":{"listen_path":"/bench-%d/","target_url":"http://upstream.test"},"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}}}}`,
			i, i, i%16, i)}
	}
	b.Run("bare", func(b *testing.B) {
		body := []byte(`{"categories":["team0","team1"]}`)
		loadBare(b, "GET", func(w http.ResponseWriter, _ *http.Request) error {
			w.Header().Set("Content-Type", "application/json")
			_, err := w.Write(body)
			return err
		})
	})
	deleted := []byte(`{"status":"ok","message":"API deleted"}`)
	b.Run("bare-durable", func(b *testing.B) {
		engine, err := boltkv.Open(filepath.Join(b.TempDir(), "floor.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer engine.Close()
		value := make([]byte, 500)
		for i := 0; i < b.N; i += 1000 {
			err := engine.Update(context.Background(), func(tx kv.WriteTx) error {
				for j := i; j < min(i+1000, b.N); j++ {
					if err := tx.Put(fmt.Appendf(nil, "api/%08d", j), value); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		entry := make([]byte, 200)
		var seq atomic.Int64
		loadBare(b, "DELETE", func(w http.ResponseWriter, r *http.Request) error {
			key := []byte("api" + r.URL.Path[len("/bare"):])
			audit := fmt.Appendf(nil, "audit/%016d", seq.Add(1))
			err := engine.Update(r.Context(), func(tx kv.WriteTx) error {
				if err := tx.Delete(key); err != nil {
					return err
				}
				return tx.Put(audit, entry)
			})
			if err == nil {
				w.Header().Set("Content-Type", "application/json")
				_, err = w.Write(deleted)
			}
			return err
		})
	})
	b.Run("bare-fsync", func(b *testing.B) {
		log := openFsyncLog(b, filepath.Join(b.TempDir(), "floor.log"))
		entry := make([]byte, 200)
		loadBare(b, "DELETE", func(w http.ResponseWriter, _ *http.Request) error {
			err := log.append(entry)
			if err == nil {
				w.Header().Set("Content-Type", "application/json")
				_, err = w.Write(deleted)
			}
			return err
		})
	})
	cases := []struct {
		name    string
		prepare int // APIs created before the timer starts; -1: b.N
		request func(i int) servertest.Request
	}{
		{"categories", 1024, func(int) servertest.Request {
			return servertest.Request{Method: "GET", Path: "/api/apis/categories", Want: 200}
		}},
		{"delete", -1, func(i int) servertest.Request {
			return servertest.Request{Method: "DELETE", Path: fmt.Sprintf("/api/apis/bench%08d", i), Want: 200}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := binproc.Start(b, bin, []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
				"--db", filepath.Join(b.TempDir(), "management.db"), "--bootstrap-token", adminToken,
				"--debug-addr", os.Getenv("BENCH_DEBUG_ADDR")}, os.Environ(), nil, "")
			defer p.Stop(b, 10*time.Second)
			n := c.prepare
			if n < 0 {
				n = b.N
			}
			servertest.Load(b, p.HTTPAddr, adminToken, clients, n, create)
			cpu := p.CPUTime(b)
			profiled := profileTimed(b)
			b.ResetTimer()
			res := servertest.Load(b, p.HTTPAddr, adminToken, clients, b.N, c.request)
			b.StopTimer()
			profiled()
			res.Report(b, "")
			b.ReportMetric(float64((p.CPUTime(b)-cpu).Microseconds())/float64(b.N), "server-cpu-µs/op")
		})
	}
}

// loadBare serves handle on a loopback listener of this process and sends it
// b.N requests of method, to /bare/00000000 and on, from the load's clients;
// a handler's error is answered with 500 (the load fails on it).
func loadBare(b *testing.B, method string, handle func(http.ResponseWriter, *http.Request) error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := handle(w, r); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})}
	go srv.Serve(l)
	defer srv.Close()
	b.ResetTimer()
	res := servertest.Load(b, l.Addr().String(), "", clients, b.N, func(i int) servertest.Request {
		return servertest.Request{Method: method, Path: fmt.Sprintf("/bare/%08d", i), Want: 200}
	})
	b.StopTimer()
	res.Report(b, "")
}

// profileTimed starts the CPU profile BENCH_CPUPROFILE asks for, from the
// binary's debug listener (BENCH_DEBUG_ADDR); the function it returns waits
// until the profile is written.
func profileTimed(b *testing.B) (wait func()) {
	file, addr := os.Getenv("BENCH_CPUPROFILE"), os.Getenv("BENCH_DEBUG_ADDR")
	kind := "profile"
	if alloc := os.Getenv("BENCH_ALLOCPROFILE"); alloc != "" {
		file, kind = alloc, "allocs" // the allocations of the same span instead
	}
	if file == "" || addr == "" {
		return func() {}
	}
	seconds := cmp.Or(os.Getenv("BENCH_CPUPROFILE_SECONDS"), "3")
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get("http://" + addr + "/debug/pprof/" + kind + "?seconds=" + seconds)
		if err != nil {
			b.Error(err)
			return
		}
		defer resp.Body.Close()
		out, err := os.Create(file)
		if err == nil {
			_, err = io.Copy(out, resp.Body)
			err = errors.Join(err, out.Close())
		}
		if err != nil {
			b.Error(err)
		}
	}()
	return func() { <-done }
}

// fsyncLog is the least a durable answer can cost: entries appended to a
// preallocated file (so an fdatasync writes data, not the file's size) by
// one goroutine, one fdatasync for every entry appended while the previous
// one ran, each caller answered after the fdatasync that holds its entry.
type fsyncLog struct {
	mu      sync.Mutex
	file    *os.File
	pending []byte
	waiting []chan error
	kick    chan struct{}
}

func openFsyncLog(b *testing.B, path string) *fsyncLog {
	f, err := os.Create(path)
	if err == nil {
		err = syscall.Fallocate(int(f.Fd()), 0, 0, 256<<20)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		b.Fatal(err)
	}
	l := &fsyncLog{file: f, kick: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range l.kick {
			l.mu.Lock()
			batch, waiting := l.pending, l.waiting
			l.pending, l.waiting = nil, nil
			l.mu.Unlock()
			if len(waiting) == 0 {
				continue
			}
			_, err := f.Write(batch)
			if err == nil {
				err = syscall.Fdatasync(int(f.Fd()))
			}
			for _, w := range waiting {
				w <- err
			}
		}
	}()
	b.Cleanup(func() {
		close(l.kick)
		<-done
		f.Close()
	})
	return l
}

func (l *fsyncLog) append(entry []byte) error {
	w := make(chan error, 1)
	l.mu.Lock()
	l.pending = append(l.pending, entry...)
	l.waiting = append(l.waiting, w)
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
	return <-w
}
