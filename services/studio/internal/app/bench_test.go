package app

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clients is how many keep-alive REST clients the write benchmarks run,
// as in the measurements of issue 12.
const clients = 32

// BenchmarkRESTWrites drives create, PATCH and DELETE of LLM settings from
// 32 concurrent keep-alive clients through the real facade, gRPC server and
// bbolt engine (every answer sent after its write is fsynced; concurrent
// writes share commits). It reports requests/s and the 99th percentile.
func BenchmarkRESTWrites(b *testing.B) {
	const body = `{"data":{"type":"llm-settings","attributes":{"model_name":"gpt-4o","temperature":0.7,"stop_words":["END"]}}}`
	cases := []struct {
		name    string
		prepare int // records created before the timer starts: b.N, or this many
		request func(i int) (method, path, body string, want int)
	}{
		{"create", 0, func(int) (string, string, string, int) {
			return "POST", "/api/v1/llm-settings", body, http.StatusCreated
		}},
		{"patch", 1024, func(i int) (string, string, string, int) {
			return "PATCH", fmt.Sprintf("/api/v1/llm-settings/%d", 1+i%1024), `{"data":{"attributes":{"temperature":1.2}}}`, http.StatusOK
		}},
		{"delete", -1, func(i int) (string, string, string, int) {
			return "DELETE", fmt.Sprintf("/api/v1/llm-settings/%d", i+1), "", http.StatusNoContent
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := start(b, filepath.Join(b.TempDir(), "studio.db"))
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			send := func(method, path, body string) (int, error) {
				req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := client.Do(req)
				if err != nil {
					return 0, err
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				return res.StatusCode, nil
			}
			n := c.prepare
			if n < 0 {
				n = b.N
			}
			parallelRequests(b, n, func(int) error {
				if code, err := send("POST", "/api/v1/llm-settings", body); err != nil || code != http.StatusCreated {
					return fmt.Errorf("prepare: %d %v", code, err)
				}
				return nil
			})
			b.ReportAllocs()
			b.ResetTimer()
			lat := parallelRequests(b, b.N, func(i int) error {
				method, path, body, want := c.request(i)
				code, err := send(method, path, body)
				if err == nil && code != want {
					err = fmt.Errorf("%s %s: %d, want %d", method, path, code, want)
				}
				return err
			})
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// parallelRequests runs request(0..n-1) from clients goroutines and returns
// each request's latency.
func parallelRequests(b *testing.B, n int, request func(i int) error) []time.Duration {
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				begin := time.Now()
				err := request(i)
				lat[w] = append(lat[w], time.Since(begin))
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return slices.Concat(lat...)
}
