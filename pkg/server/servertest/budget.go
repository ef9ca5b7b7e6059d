package servertest

//lint:file-ignore SA1019 raw HTTP/2 client connections over our own net.Conn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"

	"github.com/gatehouse/gatehouse/pkg/inflight"
)

// HeldBudget (issue 32, part 2): the attack's key (a.Auth) holds what it
// can of the in-flight byte budget — uploads conns REST bodies that
// announce size bytes, send sent of them and stop, and streams gRPC
// messages (one connection each) that declare 16 MiB and send 100 bytes —
// while another key (other) sends body to method path over REST and the
// attack's method's request req over gRPC, five times each. Each of
// other's requests is answered 2xx (gRPC: OK or an answer of the service,
// never Unavailable) within 1 s (a request that found no room would wait
// 5 s for it); the times are logged (the goal is 100 ms). The held uploads
// end 408, the held streams DeadlineExceeded, once their bytes stop
// arriving for inflight.FirstProgress (the streams are waited for). It
// returns other's slowest REST and gRPC times.
func (a *Attack) HeldBudget(other, method, path string, body []byte, req []byte, uploads int, size, sent int, streams int) (rest, rpc time.Duration) {
	t := a.T
	t.Helper()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range uploads {
		c := rawDial(t, "", a.HTTPAddr)
		held = append(held, c)
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", method, path, a.Auth, size)
		c.Write(bytes.Repeat([]byte{' '}, sent))
	}
	tr := &http2.Transport{AllowHTTP: true}
	type ended struct {
		status string
		after  time.Duration
	}
	streamEnds := make(chan ended, streams)
	for range streams {
		c := rawDial(t, "", a.GRPCAddr)
		held = append(held, c)
		cc, err := tr.NewClientConn(c)
		if err != nil {
			t.Fatal(err)
		}
		pr, pw := io.Pipe()
		defer pw.Close()
		hr, _ := http.NewRequest(http.MethodPost, "http://"+a.GRPCAddr+a.Method, pr)
		hr.Header.Set("Content-Type", "application/grpc")
		hr.Header.Set("Te", "trailers")
		hr.Header.Set("Authorization", a.Auth)
		go func() {
			prefix := make([]byte, 5)
			binary.BigEndian.PutUint32(prefix[1:], 16<<20)
			pw.Write(prefix)
			pw.Write(bytes.Repeat([]byte{0x0a, 0x00}, 50))
		}()
		begin := time.Now()
		go func() {
			res, err := cc.RoundTrip(hr)
			if err != nil {
				streamEnds <- ended{err.Error(), time.Since(begin)}
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			st := res.Header.Get("Grpc-Status")
			if st == "" {
				st = res.Trailer.Get("Grpc-Status")
			}
			streamEnds <- ended{st, time.Since(begin)}
		}()
	}
	time.Sleep(500 * time.Millisecond) // the held requests are in
	client := &http.Client{Timeout: 30 * time.Second}
	conn := a.Dial("")
	var restTimes, rpcTimes []time.Duration
	for range 5 {
		r, _ := http.NewRequest(method, "http://"+a.HTTPAddr+path, bytes.NewReader(body))
		r.Header.Set("Authorization", other)
		begin := time.Now()
		res, err := client.Do(r)
		took := time.Since(begin)
		if err != nil {
			t.Fatalf("the other key's %s %s: %v", method, path, err)
		}
		answer, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 300 || took > time.Second {
			t.Errorf("the other key's %s %s while the budget is held: %d %.200s after %v, want 2xx within 1 s", method, path, res.StatusCode, answer, took)
		}
		restTimes = append(restTimes, took)
		st, took := a.Call(conn, req, other, false)
		if st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded || took > time.Second {
			t.Errorf("the other key's gRPC call while the budget is held: %v after %v, want an answer within 1 s", st.Err(), took)
		}
		rpcTimes = append(rpcTimes, took)
	}
	// The held streams' messages stopped arriving after 100 bytes: each
	// ends DeadlineExceeded (4) within FirstProgress (and slack), not after
	// the 30 s a whole message may take — or, when the key's uploads hold
	// its share, Unavailable (14) after waiting inflight.Wait for room.
	var longest time.Duration
	ends := map[string]int{}
	for range streams {
		select {
		case e := <-streamEnds:
			ok := e.status == strconv.Itoa(int(codes.DeadlineExceeded)) || e.status == strconv.Itoa(int(codes.Unavailable))
			if !ok || e.after > inflight.FirstProgress+3*time.Second {
				t.Errorf("a held stream ended with grpc-status %q after %v, want 4 (DeadlineExceeded) or 14 (Unavailable) within %v", e.status, e.after, inflight.FirstProgress+3*time.Second)
			}
			ends[e.status]++
			longest = max(longest, e.after)
		case <-time.After(time.Minute):
			t.Fatalf("held streams still open after a minute")
		}
	}
	sort.Slice(restTimes, func(i, j int) bool { return restTimes[i] < restTimes[j] })
	sort.Slice(rpcTimes, func(i, j int) bool { return rpcTimes[i] < rpcTimes[j] })
	t.Logf("%d held uploads (%d of %d bytes sent) and %d held streams of one key: the other key's REST %v (median %v, slowest %v), gRPC median %v, slowest %v; the held streams ended within %v (grpc-status: count %v)",
		uploads, sent, size, streams, method+" "+path, restTimes[2].Round(time.Microsecond), restTimes[4].Round(time.Microsecond), rpcTimes[2].Round(time.Microsecond), rpcTimes[4].Round(time.Microsecond), longest.Round(time.Millisecond), ends)
	return restTimes[4], rpcTimes[4]
}

// StalledUpload: a body that announces size bytes and stops after sent is
// answered 408 (the connection then closed) within FirstProgress + slack,
// not after its whole body's time.
func (a *Attack) StalledUpload(method, path string, size, sent int, within time.Duration) {
	t := a.T
	t.Helper()
	c := rawDial(t, "", a.HTTPAddr)
	defer c.Close()
	begin := time.Now()
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", method, path, a.Auth, size)
	c.Write(bytes.Repeat([]byte{' '}, sent))
	c.SetReadDeadline(time.Now().Add(within + 30*time.Second))
	answer, _ := io.ReadAll(c)
	took := time.Since(begin)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 408") || took > within {
		t.Errorf("an upload of %d bytes stalled after %d: %.120q after %v, want 408 within %v", size, sent, answer, took.Round(time.Millisecond), within)
	} else {
		t.Logf("an upload of %d bytes stalled after %d: 408 after %v", size, sent, took.Round(time.Millisecond))
	}
}

// ParallelGETs: n clients GET url (no credentials) at once, rounds times;
// every answer is 200 and the process's peak memory grows by less than
// maxGrowthMiB. It returns the growth in MiB.
func (a *Attack) ParallelGETs(url string, n, rounds int, maxGrowthMiB float64) float64 {
	t := a.T
	t.Helper()
	base := a.ResetPeak()
	begin := time.Now()
	var size int64
	for range rounds {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				res, err := http.Get(url)
				if err != nil {
					t.Errorf("GET %s: %v", url, err)
					return
				}
				got, _ := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Errorf("GET %s: %d", url, res.StatusCode)
				}
				atomic.StoreInt64(&size, got)
			})
		}
		wg.Wait()
	}
	g := a.Grown(base)
	if g > maxGrowthMiB {
		t.Errorf("peak memory grew by %.1f MiB under %d parallel GETs of %d bytes, want at most %.0f MiB", g, n, size, maxGrowthMiB)
	} else {
		t.Logf("%d rounds of %d parallel GETs of %.1f MiB: peak memory +%.1f MiB, %v in all", rounds, n, float64(size)/(1<<20), g, time.Since(begin).Round(time.Millisecond))
	}
	return g
}

// HeldStreams32 (issue 32, part 2, on gRPC alone, as the issue measured
// it): the attack's key opens streams on one connection, each declaring a
// 16 MiB message and sending 100 bytes, and one more that trickles its
// message at 1 KiB a second; meanwhile another key (other) calls the
// attack's method with req calls times. Each of other's calls is answered
// (OK or an answer of the service, never Unavailable or DeadlineExceeded)
// within 1 s — the times are logged, the goal is 100 ms — and every held
// stream, the trickling one too, ends DeadlineExceeded within
// inflight.FirstProgress and slack (its message stopped arriving at the
// minimum rate), long before the 30 s a whole message may take; the
// process's peak memory grows by less than maxGrowthMiB. It returns
// other's slowest call.
func (a *Attack) HeldStreams32(other string, req []byte, streams, calls int, maxGrowthMiB float64) time.Duration {
	t := a.T
	t.Helper()
	base := a.ResetPeak()
	c := rawDial(t, "", a.GRPCAddr)
	defer c.Close()
	cc, err := (&http2.Transport{AllowHTTP: true, StrictMaxConcurrentStreams: true}).NewClientConn(c)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	type ended struct {
		status string
		after  time.Duration
	}
	ends := make(chan ended, streams+1)
	open := func(send func(w io.Writer)) {
		pr, pw := io.Pipe()
		hr, _ := http.NewRequest(http.MethodPost, "http://"+a.GRPCAddr+a.Method, pr)
		hr.Header.Set("Content-Type", "application/grpc")
		hr.Header.Set("Te", "trailers")
		hr.Header.Set("Authorization", a.Auth)
		begin := time.Now()
		go func() {
			prefix := make([]byte, 5)
			binary.BigEndian.PutUint32(prefix[1:], 16<<20)
			if _, err := pw.Write(prefix); err == nil {
				send(pw)
			}
		}()
		go func() {
			defer pw.Close()
			res, err := cc.RoundTrip(hr)
			if err != nil {
				ends <- ended{err.Error(), time.Since(begin)}
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			st := res.Header.Get("Grpc-Status")
			if st == "" {
				st = res.Trailer.Get("Grpc-Status")
			}
			ends <- ended{st, time.Since(begin)}
		}()
	}
	for range streams {
		open(func(w io.Writer) { w.Write(bytes.Repeat([]byte{0x0a, 0x00}, 50)) })
	}
	open(func(w io.Writer) { // 1 KiB a second: under 64 KiB in 11 s
		for range int(inflight.FirstProgress/time.Second) + 10 {
			if _, err := w.Write(bytes.Repeat([]byte{0x0a, 0x00}, 512)); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	})
	time.Sleep(500 * time.Millisecond) // the held streams are in
	conn := a.Dial("")
	var times []time.Duration
	for range calls {
		st, took := a.Call(conn, req, other, false)
		if st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded || took > time.Second {
			t.Errorf("the other key's gRPC call while %d streams of one key are held: %v after %v, want an answer within 1 s", streams+1, st.Err(), took)
		}
		times = append(times, took)
	}
	var longest time.Duration
	for range streams + 1 {
		select {
		case e := <-ends:
			if e.status != strconv.Itoa(int(codes.DeadlineExceeded)) || e.after > inflight.FirstProgress+3*time.Second {
				t.Errorf("a held stream ended with grpc-status %q after %v, want 4 (DeadlineExceeded) within %v", e.status, e.after, inflight.FirstProgress+3*time.Second)
			}
			longest = max(longest, e.after)
		case <-time.After(time.Minute):
			t.Fatalf("held streams still open after a minute")
		}
	}
	g := a.Grown(base)
	if g > maxGrowthMiB {
		t.Errorf("peak memory grew by %.1f MiB while %d streams were held, want less than %.0f MiB", g, streams+1, maxGrowthMiB)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	t.Logf("%d streams of one key on one connection declaring 16 MiB (100 bytes sent; one trickling 1 KiB/s): the other key's %d gRPC calls median %v, slowest %v; the held streams ended DeadlineExceeded within %v; peak memory +%.1f MiB",
		streams+1, calls, times[len(times)/2].Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond), longest.Round(time.Millisecond), g)
	return times[len(times)-1]
}
