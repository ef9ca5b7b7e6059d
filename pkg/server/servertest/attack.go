package servertest

// x/net v0.61 deprecates http2.Transport for net/http's Transport.NewClientConn
// (Go 1.26); the attacks keep x/net's, which takes a connection they dial
// themselves and on which they send hand-framed gRPC messages.
//lint:file-ignore SA1019 raw HTTP/2 client connections over our own net.Conn

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the attacks send compressed messages
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// Attack drives hostile clients at one running service binary, as an
// attacker on loopback would, and measures what the process holds (VmHWM
// and VmRSS of /proc/<pid>/status, the peak reset before each attack) and
// how fast it answers. The services' TestHostileBinary and
// TestHostileLong run it (issue 18; CONTRACT §0 "Resource bounds").
type Attack struct {
	T        testing.TB
	PID      int
	HTTPAddr string // host:port of the REST facade
	GRPCAddr string // host:port of the gRPC server
	SiteAddr string // host:port of the public site (the portal), else ""
	DB       string // the bbolt store's file
	// Auth is a valid admin authorization value, as REST and gRPC take it.
	Auth string
	// Method is a gRPC method (full name) whose request holds a free-form
	// field, reached by the field numbers of Nest from the request down.
	Method string
	Nest   []protowire.Number
	// Amplify, when set, returns the free-form field's content of about n
	// bytes that decodes into many objects; default EmptyValues.
	Amplify func(n int) []byte
}

// huge is a request of about n bytes whose decoding amplifies.
func (a *Attack) huge(n int) []byte {
	if a.Amplify != nil {
		return a.Request(a.Amplify(n))
	}
	return a.Request(EmptyValues(n / 2))
}

// Memory is a process's resident memory now and at its peak since the last
// ResetPeak, in KiB.
func (a *Attack) Memory() (rss, peak int) {
	a.T.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", a.PID))
	if err != nil {
		a.T.Fatalf("memory: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			peak = n
		}
	}
	return rss, peak
}

// anon is the process's anonymous resident memory now (KiB): its heap and
// stacks, without the file pages it maps (the store's mmap, which the
// kernel reclaims as page cache).
func (a *Attack) anon() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", a.PID))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// SampleAnon samples the anonymous resident memory every 10 ms until stop
// is called, which returns the largest sample (KiB).
func (a *Attack) SampleAnon() (stop func() int) {
	done, result := make(chan struct{}), make(chan int, 1)
	go func() {
		top := a.anon()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				result <- max(top, a.anon())
				return
			case <-tick.C:
				top = max(top, a.anon())
			}
		}
	}()
	return func() int { close(done); return <-result }
}

// ResetPeak sets the process's VmHWM to its current RSS (Linux clear_refs
// 5) and returns that RSS in KiB.
func (a *Attack) ResetPeak() int {
	a.T.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", a.PID), []byte("5"), 0); err != nil {
		a.T.Fatalf("reset peak memory: %v", err)
	}
	rss, _ := a.Memory()
	return rss
}

// Grown is how much the peak rose above base (KiB), in MiB.
func (a *Attack) Grown(base int) float64 {
	_, peak := a.Memory()
	return float64(peak-base) / 1024
}

// EmptyValues is the wire form of a google.protobuf.Struct whose one member
// "k" is a list of n empty Values: 2 bytes each on the wire, a few dozen
// once decoded.
func EmptyValues(n int) []byte {
	list := bytes.Repeat([]byte{0x0a, 0x00}, n) // ListValue.values = 1
	value := protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), list)
	entry := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("k"))
	entry = protowire.AppendBytes(protowire.AppendTag(entry, 2, protowire.BytesType), value)
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), entry)
}

// Request wraps the free-form field's wire bytes in the messages of Nest.
func (a *Attack) Request(field []byte) []byte {
	for i := len(a.Nest) - 1; i >= 0; i-- {
		field = protowire.AppendBytes(protowire.AppendTag(nil, a.Nest[i], protowire.BytesType), field)
	}
	return field
}

// rawCodec sends and receives messages as they are on the wire.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

// Dial connects a gRPC client to the service from the local address from
// (127.0.0.1 when empty).
func (a *Attack) Dial(from string) *grpc.ClientConn {
	a.T.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64 << 20))}
	if from != "" {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}))
	}
	conn, err := grpc.NewClient("passthrough:///"+a.GRPCAddr, opts...)
	if err != nil {
		a.T.Fatal(err)
	}
	a.T.Cleanup(func() { conn.Close() })
	return conn
}

// Call sends req (wire bytes) to the attack's method with auth (none when
// empty), gzip-compressed when compress is set, and returns the status and
// how long the answer took.
func (a *Attack) Call(conn *grpc.ClientConn, req []byte, auth string, compress bool) (*status.Status, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if auth != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
	}
	opts := []grpc.CallOption{grpc.ForceCodecV2(rawCodec{}), grpc.WaitForReady(true)}
	if compress {
		opts = append(opts, grpc.UseCompressor("gzip"))
	}
	var out []byte
	begin := time.Now()
	err := conn.Invoke(ctx, a.Method, &req, &out, opts...)
	return status.Convert(err), time.Since(begin)
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Unauthenticated (rows 1 and 2 of issue 18): messages of 8M empty Values,
// 16 MiB decoded from a few KB of gzip and 16 MiB sent plain, without a key,
// with a malformed one and with an unknown one, four in a row and three at
// once: each is refused Unauthenticated within 1 s of being sent, and the
// process's peak memory grows by less than maxGrowthMiB in all (each call
// may cost at most 64 KiB; the rest is noise). Health, which needs no key,
// still answers. The calls are made on raw HTTP/2 with the message framed
// (and compressed) beforehand, so that the time is the server's.
func (a *Attack) Unauthenticated(maxGrowthMiB float64) {
	t := a.T
	t.Helper()
	huge := a.huge(16<<20 - 64)
	bomb := gzipped(huge)
	conn := a.Dial("")
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("health check without a key: %v", err)
	}
	base := a.ResetPeak()
	check := func(name string, code codes.Code, took time.Duration, err error) {
		if err != nil || code != codes.Unauthenticated || took > time.Second {
			t.Errorf("%s: %v %v after %v, want Unauthenticated within 1 s", name, code, err, took.Round(time.Millisecond))
		}
	}
	h2 := a.h2Conn()
	for i, auth := range []string{"", "Bearer", "Bearer unknown-key-" + strconv.Itoa(os.Getpid()), "unknown-key"} {
		code, took, err := a.rawCall(h2, bomb, true, auth)
		check(fmt.Sprintf("gzip message of %d bytes (%d decompressed), call %d", len(bomb), len(huge), i+1), code, took, err)
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			code, took, err := a.rawCall(a.h2Conn(), huge, false, "")
			check(fmt.Sprintf("plain message of %d bytes, parallel call %d", len(huge), i+1), code, took, err)
		})
	}
	wg.Wait()
	if g := a.Grown(base); g > maxGrowthMiB {
		t.Errorf("peak memory grew by %.1f MiB for 7 refused calls, want at most %.0f MiB", g, maxGrowthMiB)
	} else {
		t.Logf("7 unauthenticated calls of 16 MiB (4 as %d bytes of gzip): peak memory +%.1f MiB", len(bomb), g)
	}
}

// h2Conn is a raw HTTP/2 connection to the gRPC port.
func (a *Attack) h2Conn() *http2.ClientConn {
	a.T.Helper()
	cc, err := (&http2.Transport{AllowHTTP: true}).NewClientConn(rawDial(a.T, "", a.GRPCAddr))
	if err != nil {
		a.T.Fatal(err)
	}
	a.T.Cleanup(func() { cc.Close() })
	return cc
}

// rawCall sends one framed message (payload compressed with gzip when
// compressed is set) to the attack's method and returns the grpc-status
// and the time from the request to the answer's status.
func (a *Attack) rawCall(cc *http2.ClientConn, payload []byte, compressed bool, auth string) (codes.Code, time.Duration, error) {
	framed := make([]byte, 5, 5+len(payload))
	if compressed {
		framed[0] = 1
	}
	binary.BigEndian.PutUint32(framed[1:], uint32(len(payload)))
	framed = append(framed, payload...)
	req, _ := http.NewRequest(http.MethodPost, "http://"+a.GRPCAddr+a.Method, bytes.NewReader(framed))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	if compressed {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	begin := time.Now()
	res, err := cc.RoundTrip(req)
	if err != nil {
		return 0, time.Since(begin), err
	}
	defer res.Body.Close()
	st := res.Header.Get("Grpc-Status")
	if st == "" {
		io.Copy(io.Discard, res.Body)
		st = res.Trailer.Get("Grpc-Status")
	}
	took := time.Since(begin)
	code, err := strconv.Atoi(st)
	return codes.Code(code), took, err
}

// MessageLimit: with a valid key, a message one byte over the method's
// limit (plain, then gzip-compressed) is refused ResourceExhausted.
func (a *Attack) MessageLimit(limit int) {
	t := a.T
	t.Helper()
	conn := a.Dial("")
	over := a.huge(limit + 64)
	for _, compress := range []bool{false, true} {
		if st, _ := a.Call(conn, over, a.Auth, compress); st.Code() != codes.ResourceExhausted {
			t.Errorf("a message of %d bytes (limit %d), compressed %v: %v, want ResourceExhausted", len(over), limit, compress, st.Err())
		}
	}
}

// ConnsPerIP (row 6): perIP idle keep-alive connections from 127.0.0.1
// that made one anonymous request each, and as many bare HTTP/2 prefaces on
// the gRPC port, are all the address gets: one more HTTP connection is
// answered 503, one more gRPC connection is closed, while a client from
// 127.0.0.2 is served on both. adminPath is a GET the admin key may make.
func (a *Attack) ConnsPerIP(perIP int, adminPath string) {
	t := a.T
	t.Helper()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range perIP {
		c := rawDial(t, "", a.HTTPAddr)
		held = append(held, c)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("held HTTP connection %d: %v %v", i, res, err)
		}
		g := rawDial(t, "", a.GRPCAddr)
		held = append(held, g)
		io.WriteString(g, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	}
	time.Sleep(200 * time.Millisecond) // the server accepts the prefaces
	extra := rawDial(t, "", a.HTTPAddr)
	defer extra.Close()
	fmt.Fprintf(extra, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("HTTP connection %d from one address: %v %v, want 503", perIP+1, res, err)
	} else if res.Header.Get("Retry-After") == "" {
		t.Errorf("HTTP connection %d from one address: 503 without Retry-After", perIP+1)
	}
	g := rawDial(t, "", a.GRPCAddr)
	defer g.Close()
	io.WriteString(g, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	g.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := io.Copy(io.Discard, g); errors.Is(err, os.ErrDeadlineExceeded) { // closed or reset: refused
		t.Errorf("gRPC connection %d from one address: still open after %d bytes, want it closed", perIP+1, n)
	}

	// Another address is served meanwhile, on both ports.
	other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	req, _ := http.NewRequest(http.MethodGet, "http://"+a.HTTPAddr+adminPath, nil)
	req.Header.Set("Authorization", a.Auth)
	if res, err := other.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("REST from 127.0.0.2 while 127.0.0.1 is at its cap: %v %v, want 200", res, err)
	} else {
		res.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(a.Dial("127.0.0.2")).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Errorf("gRPC from 127.0.0.2 while 127.0.0.1 is at its cap: %v", err)
	}
}

func rawDial(t testing.TB, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Refused (row 4 of issue 18): with a valid key, body (contentType when
// set) is refused with want and a message containing text, within 5 s, and
// the process's peak memory grows by less than maxGrowthMiB while it is.
func (a *Attack) Refused(name, method, path, contentType string, body []byte, want int, text string, maxGrowthMiB float64) {
	t := a.T
	t.Helper()
	base := a.ResetPeak()
	req, _ := http.NewRequest(method, "http://"+a.HTTPAddr+path, bytes.NewReader(body))
	req.Header.Set("Authorization", a.Auth)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	begin := time.Now()
	res, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(begin)
	if res.StatusCode != want || !strings.Contains(string(answer), text) {
		t.Errorf("%s (%d bytes): %d %.300s, want %d naming %q", name, len(body), res.StatusCode, answer, want, text)
	}
	if took > 5*time.Second {
		t.Errorf("%s: answered after %v, want within 5 s", name, took.Round(time.Millisecond))
	}
	if g := a.Grown(base); g > maxGrowthMiB {
		t.Errorf("%s: peak memory grew by %.1f MiB, want at most %.0f MiB", name, g, maxGrowthMiB)
	} else {
		t.Logf("%s (%.1f MiB): %d in %v, peak memory +%.1f MiB", name, float64(len(body))/(1<<20), res.StatusCode, took.Round(time.Millisecond), g)
	}
}

// FreeFormGRPC (row 4): with a valid key, a request whose free-form field
// holds about half a million members (just under the method's 1 MiB) is
// refused InvalidArgument naming field, and the peak memory grows by less
// than maxGrowthMiB.
func (a *Attack) FreeFormGRPC(field string, maxGrowthMiB float64) {
	t := a.T
	t.Helper()
	conn := a.Dial("")
	req := a.huge(1<<20 - 256)
	base := a.ResetPeak()
	st, took := a.Call(conn, req, a.Auth, false)
	if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), field) {
		t.Errorf("gRPC free-form field of %d bytes: %v, want InvalidArgument naming %s", len(req), st.Err(), field)
	}
	if g := a.Grown(base); g > maxGrowthMiB {
		t.Errorf("gRPC free-form field: peak memory grew by %.1f MiB, want at most %.0f MiB", g, maxGrowthMiB)
	} else {
		t.Logf("gRPC free-form field of %d bytes: %v in %v, peak memory +%.1f MiB", len(req), st.Code(), took.Round(time.Millisecond), g)
	}
}

// StartAttack builds the binary of svc from the workspace at root, runs it
// on a fresh bbolt store with token as its bootstrap admin (env added to
// the environment), and aims a at it: a's T, PID and addresses are set.
func StartAttack(t *testing.T, root, svc, token string, a Attack, env ...string) *Attack {
	t.Helper()
	bins, err := binproc.Build(root, t.TempDir(), []string{svc})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), svc+".db")
	p := binproc.Start(t, bins[svc], []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--db", db, "--bootstrap-token", token}, append(os.Environ(), env...), nil, "")
	a.T, a.PID, a.HTTPAddr, a.GRPCAddr, a.SiteAddr, a.DB = t, p.Cmd.Process.Pid, p.HTTPAddr, p.GRPCAddr, p.SiteAddr, db
	return &a
}

// LongIDs (issue 32, "audit log fill"): key, a valid key without the
// permission method needs, sends calls calls of method whose field 1 (the
// id) is 1,000,000 bytes, and a REST restMethod to restPath (which ends in
// an id) with an id of 10,000 bytes: each is refused 400 (InvalidArgument)
// naming the field, and the store file grows by less than maxGrowthMiB in
// all. Before issue 32 each was stored, id included, as a refused request.
func (a *Attack) LongIDs(key, method string, calls int, restMethod, restPath string, maxGrowthMiB float64) {
	t := a.T
	t.Helper()
	before := fileSize(t, a.DB)
	id := bytes.Repeat([]byte("x"), 1_000_000)
	req := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), id)
	conn := a.Dial("")
	for i := range calls {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", key), time.Minute)
		var out []byte
		err := conn.Invoke(ctx, method, &req, &out, grpc.ForceCodecV2(rawCodec{}), grpc.WaitForReady(true))
		cancel()
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "256 bytes") {
			t.Fatalf("call %d of %s with an id of %d bytes: %v, want InvalidArgument naming the limit", i, method, len(id), err)
		}
	}
	r, _ := http.NewRequest(restMethod, "http://"+a.HTTPAddr+restPath+strings.Repeat("y", 10_000), nil)
	r.Header.Set("Authorization", key)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "256 bytes") {
		t.Errorf("%s %s<10,000 bytes>: %d %.200s, want 400 naming the limit", restMethod, restPath, res.StatusCode, body)
	}
	grown := float64(fileSize(t, a.DB)-before) / (1 << 20)
	if grown > maxGrowthMiB {
		t.Errorf("%d calls with ids of 1 MB grew the store by %.1f MiB, want at most %.1f", calls, grown, maxGrowthMiB)
	} else {
		t.Logf("%d calls with ids of 1 MB: store +%.2f MiB", calls, grown)
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
