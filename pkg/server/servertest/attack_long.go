package servertest

// x/net v0.61 deprecates http2.Transport for net/http's Transport.NewClientConn
// (Go 1.26); the attacks keep x/net's, which takes a connection they dial
// themselves and on which they send hand-framed gRPC messages.
//lint:file-ignore SA1019 raw HTTP/2 client connections over our own net.Conn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// LongEnv is the variable `make test-hostile` sets to run the long
// attacks (held connections, 1,000 streams, 32 large bodies at once).
const LongEnv = "GATEHOUSE_HOSTILE_LONG"

// Long skips t unless make test-hostile runs it.
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv(LongEnv) == "" {
		t.Skipf("a long hostile run: make test-hostile (%s=1) runs it", LongEnv)
	}
}

// HeldStreams (row 3 of issue 18): conns connections open streams of the
// attack's method with a valid key, each declaring a 16 MiB message and
// sending 1 MB of it (as far as flow control lets it), then nothing. The
// server allows 100 streams per connection (the rest wait in the client),
// resets every held stream within 30 s of its start (plus slack), and its
// peak memory grows by less than maxGrowthMiB. It returns the longest time a
// held stream survived.
func (a *Attack) HeldStreams(conns, perConn int, maxGrowthMiB float64) time.Duration {
	t := a.T
	t.Helper()
	base := a.ResetPeak()
	var (
		mu       sync.Mutex
		survived []time.Duration
		wg       sync.WaitGroup
	)
	tr := &http2.Transport{AllowHTTP: true, StrictMaxConcurrentStreams: true}
	var ccs []*http2.ClientConn
	for range conns {
		c := rawDial(t, "", a.GRPCAddr)
		cc, err := tr.NewClientConn(c)
		if err != nil {
			t.Fatal(err)
		}
		ccs = append(ccs, cc)
		for range perConn {
			pr, pw := io.Pipe()
			req, _ := http.NewRequest(http.MethodPost, "http://"+a.GRPCAddr+a.Method, pr)
			req.Header.Set("Content-Type", "application/grpc")
			req.Header.Set("Te", "trailers")
			req.Header.Set("Authorization", a.Auth)
			wg.Go(func() {
				defer pw.Close()
				prefix := make([]byte, 5)
				binary.BigEndian.PutUint32(prefix[1:], 16<<20)
				go func() {
					if _, err := pw.Write(prefix); err == nil {
						pw.Write(bytes.Repeat([]byte{0x0a, 0x00}, 1<<19)) // 1 MiB, never the rest
					}
				}()
				begin := time.Now()
				res, err := cc.RoundTrip(req)
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				mu.Lock()
				survived = append(survived, time.Since(begin))
				mu.Unlock()
			})
		}
	}
	time.Sleep(2 * time.Second)
	for i, cc := range ccs {
		st := cc.State()
		if st.MaxConcurrentStreams != 100 || st.StreamsActive > 100 {
			t.Errorf("connection %d: the server allows %d streams, %d active; want at most 100", i, st.MaxConcurrentStreams, st.StreamsActive)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("held streams still open after 3 minutes")
	}
	for _, cc := range ccs {
		cc.Close()
	}
	sort.Slice(survived, func(i, j int) bool { return survived[i] < survived[j] })
	longest := survived[len(survived)-1]
	// Streams wait for their connection's turn: a stream's own life starts
	// when the one before it on its connection ended.
	if waves := (perConn + 99) / 100; longest > time.Duration(waves)*40*time.Second {
		t.Errorf("a held stream survived %v, want its reset within 30 s (%d waves)", longest, waves)
	}
	if g := a.Grown(base); g > maxGrowthMiB {
		t.Errorf("peak memory grew by %.1f MiB for %d held streams, want at most %.0f MiB", g, conns*perConn, maxGrowthMiB)
	} else {
		t.Logf("%d held streams on %d connections: longest survived %v (median %v), peak memory +%.1f MiB",
			conns*perConn, conns, longest.Round(time.Millisecond), survived[len(survived)/2].Round(time.Millisecond), g)
	}
	return longest
}

// ConcurrentBodies (row 5): n clients send body (with the attack's key) to
// method path at once. Each is answered 2xx, or 503 with Retry-After after
// waiting for room at most ~5 s; the process's anonymous resident memory
// (sampled every 10 ms: heap and stacks, what an OOM kill is about; the
// store's file pages are page cache the kernel reclaims) stays under
// maxPeakMiB (the pod limit of the manifests). It returns that peak in MiB
// and the answers by status; VmHWM, file pages included, is logged.
func (a *Attack) ConcurrentBodies(n int, method, path string, body []byte, maxPeakMiB float64) (float64, map[int]int) {
	t := a.T
	t.Helper()
	a.ResetPeak()
	stop := a.SampleAnon()
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxConnsPerHost: 0, DialContext: (&net.Dialer{}).DialContext}}
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest(method, "http://"+a.HTTPAddr+path, bytes.NewReader(body))
			req.Header.Set("Authorization", a.Auth)
			begin := time.Now()
			res, err := client.Do(req)
			if err != nil {
				t.Errorf("%s %s: %v", method, path, err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			took := time.Since(begin)
			mu.Lock()
			statuses[res.StatusCode]++
			mu.Unlock()
			switch {
			case res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") == "":
				t.Errorf("503 without Retry-After")
			case res.StatusCode == http.StatusServiceUnavailable && took > 30*time.Second:
				t.Errorf("503 after %v, want it after a wait of at most 5 s", took)
			case res.StatusCode >= 300 && res.StatusCode != http.StatusServiceUnavailable:
				t.Errorf("%s %s of %d bytes: %d", method, path, len(body), res.StatusCode)
			}
		})
	}
	wg.Wait()
	peakMiB := float64(stop()) / 1024
	_, hwm := a.Memory()
	if peakMiB > maxPeakMiB {
		t.Errorf("peak anonymous RSS %.0f MiB under %d concurrent bodies of %d bytes, want under %.0f MiB", peakMiB, n, len(body), maxPeakMiB)
	}
	t.Logf("%d concurrent %s %s of %.1f MiB: peak anonymous RSS %.0f MiB (VmHWM, file pages included, %.0f MiB), answers %v",
		n, method, path, float64(len(body))/(1<<20), peakMiB, float64(hwm)/1024, fmt.Sprint(statuses))
	return peakMiB, statuses
}

// The base manifests' memory limit, and the settings the binaries run with
// there: GOMEMLIMIT as the binary sets it from the cgroup (90%), and
// deploy/base's MAX_INFLIGHT_BYTES. TestHostileLong runs the binaries so.
const PodLimitMiB = 256

// PodEnv is the environment of a binary in a base manifest's pod.
var PodEnv = []string{"GOMEMLIMIT=230MiB", "MAX_INFLIGHT_BYTES=16777216"}
