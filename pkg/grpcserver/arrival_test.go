//lint:file-ignore SA1019 raw HTTP/2 client connections over our own net.Conn

package grpcserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/gatehouse/gatehouse/pkg/inflight"
)

const echoMethod = "/gatehouse.test.v1.TestService/Echo"

// serveBudget serves the test service with budget and returns its address.
func serveBudget(t *testing.T, budget *inflight.Budget) string {
	t.Helper()
	s := New(slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil, Guards{Budget: budget})
	s.RegisterService(&testService, struct{}{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.GRPC.Serve(l)
	t.Cleanup(s.GRPC.Stop)
	return l.Addr().String()
}

// stream is a raw HTTP/2 call to Echo that declares a message of declare
// bytes and sends send of them (empty strings of field 1, two bytes each),
// then nothing until the test ends.
type stream struct {
	code  chan codes.Code // the answer's grpc-status, or Unknown on a broken call
	begin time.Time
}

func openStream(t *testing.T, addr, auth string, declare, send int) *stream {
	t.Helper()
	return openStreamTo(t, addr, echoMethod, auth, declare, send)
}

// openStreamTo is openStream to another method.
func openStreamTo(t *testing.T, addr, method, auth string, declare, send int) *stream {
	t.Helper()
	return openStreamOn(t, dialH2(t, addr), addr, method, auth, declare, send)
}

// dialH2 opens a raw HTTP/2 connection to addr.
func dialH2(t *testing.T, addr string) *http2.ClientConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := (&http2.Transport{AllowHTTP: true}).NewClientConn(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// openStreamOn is openStreamTo on the connection cc.
func openStreamOn(t *testing.T, cc *http2.ClientConn, addr, method, auth string, declare, send int) *stream {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+method, pr)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	go func() {
		prefix := make([]byte, 5)
		binary.BigEndian.PutUint32(prefix[1:], uint32(declare))
		if _, err := pw.Write(prefix); err == nil {
			pw.Write(bytes.Repeat([]byte{0x0a, 0x00}, send/2))
		}
	}()
	s := &stream{code: make(chan codes.Code, 1), begin: time.Now()}
	go func() {
		res, err := cc.RoundTrip(req)
		if err != nil {
			s.code <- codes.Unknown
			return
		}
		defer res.Body.Close()
		st := res.Header.Get("Grpc-Status")
		if st == "" {
			io.Copy(io.Discard, res.Body)
			st = res.Trailer.Get("Grpc-Status")
		}
		code, err := strconv.Atoi(st)
		if err != nil {
			s.code <- codes.Unknown
			return
		}
		s.code <- codes.Code(code)
	}()
	return s
}

// heldBy waits until caller holds at least want bytes of budget (or 5 s)
// and returns what it holds.
func heldBy(budget *inflight.Budget, caller string, want int64) int64 {
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, held := budget.Held(caller); held >= want || time.Now().After(end) {
			return held
		}
	}
}

// echoes makes n Echo calls with auth and returns their times, sorted; any
// call that fails fails the test.
func echoes(t *testing.T, addr, auth string, n int) []time.Duration {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", auth)
	var times []time.Duration
	for range n {
		begin := time.Now()
		err := conn.Invoke(ctx, echoMethod, wrapperspb.String("hi"), new(wrapperspb.StringValue))
		times = append(times, time.Since(begin))
		if err != nil {
			t.Errorf("another key's call while the budget is held: %v after %v", err, times[len(times)-1])
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times
}

// TestMessageHeldAsItArrives (issue 32, part 2): streams that declare
// 16 MiB and send 100 bytes hold what arrived (a step each), not what they
// declared; one that sent 1 MiB holds that; another key's calls are served
// meanwhile; and each held stream ends DeadlineExceeded once its message
// stops arriving (FirstProgress, or ProgressWindow after its last 64 KiB),
// well before MessageTimeout, giving everything back.
func TestMessageHeldAsItArrives(t *testing.T) {
	t.Parallel()
	budget := inflight.New(64<<20, 0)
	addr := serveBudget(t, budget)
	const a = "Bearer a"
	var streams []*stream
	for range 4 {
		streams = append(streams, openStream(t, addr, a, 16<<20, 100))
	}
	// A stream's bytes are the 5-byte prefix and what it sent.
	if held := heldBy(budget, inflight.Caller(a), 4*105); held != 4*105 {
		t.Errorf("4 streams that declared 16 MiB and sent 100 bytes hold %d bytes, want %d (what arrived)", held, 4*105)
	}
	streams = append(streams, openStream(t, addr, a, 16<<20, 1<<20))
	if held := heldBy(budget, inflight.Caller(a), 4*105+5+1<<20); held != 4*105+5+1<<20 {
		t.Errorf("after one stream sent 1 MiB the key holds %d bytes, want what arrived (%d)", held, 4*105+5+1<<20)
	}
	times := echoes(t, addr, "Bearer b", 20)
	t.Logf("another key's 20 calls while the first holds 5 streams: median %v, slowest %v", times[10], times[19])
	for i, s := range streams {
		select {
		case code := <-s.code:
			took := time.Since(s.begin)
			if code != codes.DeadlineExceeded || took > inflight.FirstProgress+3*time.Second {
				t.Errorf("held stream %d: %v after %v, want DeadlineExceeded within %v", i, code, took, inflight.FirstProgress+3*time.Second)
			}
		case <-time.After(MessageTimeout):
			t.Fatalf("held stream %d still open after %v", i, MessageTimeout)
		}
	}
	waitReleased(t, budget)
}

func waitReleased(t *testing.T, budget *inflight.Budget) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		all, _ := budget.Held("")
		if all == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the budget still holds %d bytes after the calls ended", all)
		}
	}
}

// TestShareRefusesTheKey: under a 4 MiB budget (a share of 1 MiB), a key
// whose streams' bytes go past its share has a stream refused at once
// (Unavailable, busy), while another key's calls are served; what the key
// holds never passes its share by more than one step.
func TestShareRefusesTheKey(t *testing.T) {
	t.Parallel()
	budget := inflight.New(4<<20, 0)
	addr := serveBudget(t, budget)
	const a = "Bearer a"
	first := openStream(t, addr, a, 3<<20, 600<<10)
	heldBy(budget, inflight.Caller(a), 600<<10)
	second := openStream(t, addr, a, 3<<20, 600<<10)
	var refused *stream
	select {
	case code := <-first.code:
		refused = first
		if code != codes.Unavailable {
			t.Errorf("the key's first stream: %v, want Unavailable", code)
		}
	case code := <-second.code:
		refused = second
		if code != codes.Unavailable {
			t.Errorf("the key's second stream: %v, want Unavailable", code)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("neither of a key's streams past its share was refused")
	}
	if took := time.Since(refused.begin); took > 2*time.Second {
		t.Errorf("the stream past the share was refused after %v, want at once", took)
	}
	if _, held := budget.Held(inflight.Caller(a)); held > budget.Share()+inflight.GrowStep {
		t.Errorf("the key holds %d bytes, want at most its share %d and a step", held, budget.Share())
	}
	times := echoes(t, addr, "Bearer b", 10)
	t.Logf("another key's 10 calls while the first is at its share: median %v, slowest %v", times[5], times[9])
}

// TestMessagesWhole: messages of sizes around the frame and the step,
// framed by grpc-go's own client over one connection, arrive whole through
// the meter; what they held is given back.
func TestMessagesWhole(t *testing.T) {
	budget := inflight.New(64<<20, 0)
	addr := serveBudget(t, budget)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer a")
	for _, n := range []int{0, 1, 16<<10 - 10, 16 << 10, 64<<10 + 3, 1<<20 - 16} {
		in, out := wrapperspb.String(strings.Repeat("x", n)), new(wrapperspb.StringValue)
		if err := conn.Invoke(ctx, echoMethod, in, out); err != nil || out.GetValue() != in.GetValue()+"|" {
			t.Errorf("echo of %d bytes: %d bytes back, %v", n, len(out.GetValue()), err)
		}
	}
	waitReleased(t, budget)
}

// TestMessageOverItsLimit: a message past its method's limit (1 MiB here)
// is refused ResourceExhausted as it arrives, without waiting for the rest
// of the 16 MiB it declared; a gRPC client's whole 2 MiB message too.
func TestMessageOverItsLimit(t *testing.T) {
	t.Parallel()
	budget := inflight.New(64<<20, 0)
	addr := serveBudget(t, budget)
	s := openStream(t, addr, "Bearer a", 16<<20, 3<<20)
	select {
	case code := <-s.code:
		if took := time.Since(s.begin); code != codes.ResourceExhausted || took > 2*time.Second {
			t.Errorf("a message past its limit: %v after %v, want ResourceExhausted at once", code, took)
		}
	case <-time.After(inflight.FirstProgress):
		t.Fatal("a message past its limit was not refused while it arrived")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer a")
	if st := status.Convert(conn.Invoke(ctx, echoMethod, wrapperspb.String(strings.Repeat("x", 2<<20)), new(wrapperspb.StringValue))); st.Code() != codes.ResourceExhausted {
		t.Errorf("echo of 2 MiB: %v, want ResourceExhausted", st.Code())
	}
	waitReleased(t, budget)
}

// TestOpenStreamBounded: a stream of a method that needs no credentials
// (server reflection) that sends more than OpenStreamBytes (a message
// declaring 16 MiB) has its connection closed at once, while reflection's
// own small requests are answered.
func TestOpenStreamBounded(t *testing.T) {
	t.Parallel()
	addr := serveBudget(t, inflight.New(64<<20, 0))
	s := openStreamTo(t, addr, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "", 16<<20, 1<<20)
	select {
	case code := <-s.code:
		if took := time.Since(s.begin); code != codes.Unknown || took > 2*time.Second {
			t.Errorf("an anonymous reflection message of 16 MiB: %v after %v, want its connection closed at once", code, took)
		}
	case <-time.After(inflight.FirstProgress):
		t.Fatal("an anonymous reflection message of 16 MiB was still being read")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	info, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := info.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			t.Fatal(err)
		}
		res, err := info.Recv()
		if err != nil || len(res.GetListServicesResponse().GetService()) == 0 {
			t.Fatalf("reflection's list of services: %v, %v", res, err)
		}
	}
	info.CloseSend()
}

// TestStreamsOfOneConnection: the streams of one connection are each
// counted to their own call, whatever their order (the meter links a call
// to its stream by the HEADERS frame grpc-go's reader has just read, which
// relies on grpc-go reading the connection frame by frame without a
// buffer of its own): key a's stream that sent 1 MiB holds it, key b's
// streams opened after it on the same connection their 100 bytes each,
// and a's stream opened last, sending 512 KiB, holds that (each with its
// 5-byte prefix).
func TestStreamsOfOneConnection(t *testing.T) {
	t.Parallel()
	budget := inflight.New(64<<20, 0)
	addr := serveBudget(t, budget)
	cc := dialH2(t, addr)
	const a, b = "Bearer a", "Bearer b"
	openStreamOn(t, cc, addr, echoMethod, a, 16<<20, 1<<20)
	heldBy(budget, inflight.Caller(a), 1<<20)
	for range 3 {
		openStreamOn(t, cc, addr, echoMethod, b, 16<<20, 100)
	}
	heldBy(budget, inflight.Caller(b), 3*105)
	openStreamOn(t, cc, addr, echoMethod, a, 16<<20, 512<<10)
	heldA := heldBy(budget, inflight.Caller(a), 1<<20+512<<10+10)
	_, heldB := budget.Held(inflight.Caller(b))
	if heldA != 1<<20+512<<10+10 || heldB != 3*105 {
		t.Errorf("key a holds %d bytes, b %d; want what their streams sent: a %d, b %d", heldA, heldB, 1<<20+512<<10+10, 3*105)
	}
}

// TestLargeBesideSmall: under a 4 MiB budget (a share of 1 MiB), a key's
// message larger than its share is taken while the key's other call holds
// a few bytes (a client's small calls beside its upload), and refused once
// its other calls hold more than a 64th of the share.
func TestLargeBesideSmall(t *testing.T) {
	t.Parallel()
	budget := inflight.New(4<<20, 0)
	addr := serveBudget(t, budget)
	const a = "Bearer a"
	openStream(t, addr, a, 16<<20, 100)
	heldBy(budget, inflight.Caller(a), 105)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", a)
	large := wrapperspb.String(strings.Repeat("x", 1<<20-100))
	if err := conn.Invoke(ctx, echoMethod, large, new(wrapperspb.StringValue)); err != nil {
		t.Errorf("a message past the key's share beside its call of 100 bytes: %v", err)
	}
	openStream(t, addr, a, 16<<20, 32<<10)
	heldBy(budget, inflight.Caller(a), 105+5+32<<10)
	if st := status.Convert(conn.Invoke(ctx, echoMethod, large, new(wrapperspb.StringValue))); st.Code() != codes.Unavailable {
		t.Errorf("a message past the key's share beside its calls of 32 KiB: %v, want Unavailable", st.Code())
	}
}
