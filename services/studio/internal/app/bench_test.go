package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// clients is how many keep-alive REST clients the load benchmarks run, as
// in the measurements of issue 12.
const clients = 32

// BenchmarkREST32 drives GET by id, create, PATCH and DELETE of LLM settings
// from 32 keep-alive clients against the studio binary, on bbolt (every write
// answered after its commit is fsynced; concurrent writes share commits) and
// on a one-member etcd running in this process (each write one Txn; etcd
// shares its log's fsyncs between concurrent ones). The
// load generator is this test process; the server is its own process, so
// server-cpu-µs/op is the CPU the service spent per request. It also reports
// requests/s and the 50th and 99th latency percentiles. With
// BENCH_DEBUG_ADDR=host:port the binary serves pprof there, so that a
// profile can be taken during a run:
//
//	curl -o cpu.prof 'http://host:port/debug/pprof/profile?seconds=5'

func BenchmarkREST32(b *testing.B) {
	bins, err := binproc.Build(filepath.Join("..", "..", "..", ".."), b.TempDir(), []string{"studio"})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"data":{"type":"llm-settings","attributes":{"model_name":"gpt-4o","temperature":0.7,"stop_words":["END"]}}}`)
	create := func(int) servertest.Request {
		return servertest.Request{Method: "POST", Path: "/api/v1/llm-settings", Body: body, Want: 201}
	}
	cases := []struct {
		name    string
		prepare int // records created before the timer starts; -1: b.N
		request func(i int) servertest.Request
	}{
		{"get", 1024, func(i int) servertest.Request {
			return servertest.Request{Method: "GET", Path: fmt.Sprintf("/api/v1/llm-settings/%d", 1+i%1024), Want: 200}
		}},
		{"create", 0, create},
		{"patch", 1024, func(i int) servertest.Request {
			return servertest.Request{Method: "PATCH", Path: fmt.Sprintf("/api/v1/llm-settings/%d", 1+i%1024),
				Body: []byte(`{"data":{"attributes":{"temperature":1.2}}}`), Want: 200}
		}},
		{"delete", -1, func(i int) servertest.Request {
			return servertest.Request{Method: "DELETE", Path: fmt.Sprintf("/api/v1/llm-settings/%d", i+1), Want: 204}
		}},
	}
	stores := []struct {
		name  string
		flags func(b *testing.B) []string
	}{
		{"bbolt", func(b *testing.B) []string { return []string{"--db", filepath.Join(b.TempDir(), "studio.db")} }},
		{"etcd", func(b *testing.B) []string {
			c := etcdtest.Start(b, 1)
			return []string{"--store", "etcd", "--etcd-endpoints", strings.Join(c.Endpoints(), ",")}
		}},
	}
	for _, st := range stores {
		for _, c := range cases {
			b.Run(st.name+"/"+c.name, func(b *testing.B) {
				args := append([]string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--bootstrap-token", token,
					"--debug-addr", os.Getenv("BENCH_DEBUG_ADDR")}, st.flags(b)...)
				p := binproc.Start(b, bins["studio"], args, os.Environ(), nil, "")
				defer p.Stop(b, 10*time.Second)
				n := c.prepare
				if n < 0 {
					n = b.N
				}
				servertest.Load(b, p.HTTPAddr, "Bearer "+token, clients, n, create)
				cpu := p.CPUTime(b)
				b.ResetTimer()
				res := servertest.Load(b, p.HTTPAddr, "Bearer "+token, clients, b.N, c.request)
				b.StopTimer()
				res.Report(b, "")
				b.ReportMetric(float64((p.CPUTime(b)-cpu).Microseconds())/float64(b.N), "server-cpu-µs/op")
			})
		}
	}
}
