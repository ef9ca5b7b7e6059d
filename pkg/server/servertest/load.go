package servertest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// LoadResult is what a load run measured.
type LoadResult struct {
	Requests int
	Elapsed  time.Duration
	// Latencies of every request, sorted.
	Latencies []time.Duration
	// ClientCPU is the CPU time this process spent during the run: the load
	// generator's cost, and the service's too when it runs in-process.
	ClientCPU time.Duration
}

// PerSecond is the throughput of the run.
func (r LoadResult) PerSecond() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// Percentile is the latency below which p percent of the requests finished.
func (r LoadResult) Percentile(p int) time.Duration {
	return r.Latencies[min(len(r.Latencies)-1, len(r.Latencies)*p/100)]
}

// Report adds the run's requests/s, 50th and 99th latency percentiles (in
// milliseconds) and this process's CPU per request to a benchmark's results,
// each name prefixed by prefix.
func (r LoadResult) Report(b *testing.B, prefix string) {
	b.ReportMetric(r.PerSecond(), prefix+"req/s")
	b.ReportMetric(float64(r.ClientCPU.Microseconds())/float64(r.Requests), prefix+"client-cpu-µs/op")
	b.ReportMetric(float64(r.Percentile(50).Microseconds())/1000, prefix+"p50-ms")
	b.ReportMetric(float64(r.Percentile(99).Microseconds())/1000, prefix+"p99-ms")
}

// Load sends requests 0..n-1 (made by request; each with its Method, Path,
// Header, Body and the Want status it must get) to the HTTP server at addr
// (host:port) from clients keep-alive HTTP/1.1 connections, each sending its
// next request as soon as it has read the previous answer, and fails the test
// on a network error or an unexpected status. Every request carries the
// Authorization header auth, when given. The client side is lean (requests
// written as bytes, answers read with http.ReadResponse) so that a run on a
// shared machine measures the server rather than the load generator.
func Load(tb testing.TB, addr, auth string, clients, n int, request func(i int) Request) LoadResult {
	tb.Helper()
	var next atomic.Int64
	var failed atomic.Bool
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	cpu := processCPU(tb)
	begin := time.Now()
	for w := range clients {
		wg.Go(func() {
			c := &loadConn{addr: addr, auth: auth}
			defer c.close()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				r := request(i)
				sent := time.Now()
				status, err := c.do(r)
				lat[w] = append(lat[w], time.Since(sent))
				if err == nil && status != r.Want {
					err = fmt.Errorf("got %d, want %d", status, r.Want)
				}
				if err != nil {
					failed.Store(true)
					tb.Errorf("%s %s: %v", r.Method, r.Path, err)
					return
				}
			}
		})
	}
	wg.Wait()
	res := LoadResult{Requests: n, Elapsed: time.Since(begin), Latencies: slices.Concat(lat...), ClientCPU: processCPU(tb) - cpu}
	if failed.Load() {
		tb.FailNow()
	}
	slices.Sort(res.Latencies)
	return res
}

// loadConn is one keep-alive client connection, dialled again after the
// server closes it.
type loadConn struct {
	addr, auth string
	conn       net.Conn
	r          *bufio.Reader
	buf        []byte
}

func (c *loadConn) do(r Request) (int, error) {
	if c.conn == nil {
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			return 0, err
		}
		c.conn, c.r = conn, bufio.NewReader(conn)
	}
	b := append(c.buf[:0], r.Method...)
	b = append(b, ' ')
	b = append(b, r.Path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.addr...)
	if c.auth != "" {
		b = append(b, "\r\nAuthorization: "...)
		b = append(b, c.auth...)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			b = append(b, "\r\n"...)
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
		}
	}
	if r.Body != nil {
		b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(r.Body)), 10)
	}
	b = append(b, "\r\n\r\n"...)
	b = append(b, r.Body...)
	c.buf = b
	if _, err := c.conn.Write(b); err != nil {
		return 0, err
	}
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.Close {
		c.close()
	}
	return res.StatusCode, err
}

func (c *loadConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// processCPU is the user and system CPU time this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
