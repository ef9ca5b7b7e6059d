package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// serveLimited runs Serve with an empty service and limits on 127.0.0.1:0
// and returns the gRPC address. The REST facade makes no gRPC call here, so
// it holds no gRPC connection.
func serveLimited(t *testing.T, limits config.Limits) string {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	l, err := Listen(loopback())
	if err != nil {
		t.Fatal(err)
	}
	grpcAddr := l.GRPC.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, log, l, Service{
			Name:     "gatehouse.test.v1.TestService",
			Register: func(grpc.ServiceRegistrar) {},
			Gateway: restfacade.Options{
				Register:  func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error { return nil },
				OpenAPI:   []byte(`{"paths":{}}`),
				ErrorBody: func(_ *http.Request, status int, msgs []string) any { return msgs },
			},
			Limits: limits,
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return grpcAddr
}

func dial(t *testing.T, addr string) (*grpc.ClientConn, healthpb.HealthClient) {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, healthpb.NewHealthClient(conn)
}

// check calls Health.Check with a deadline of d; WaitForReady lets it wait
// for the connection to come up.
func check(c healthpb.HealthClient, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := c.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	return err
}

// rawH2 is a bare HTTP/2 client on one TCP connection: it can ping as often
// as it likes, which grpc-go's own client refuses to do (it pings every 10 s
// at most).
type rawH2 struct {
	c net.Conn
	f *http2.Framer
}

func dialH2(t *testing.T, addr string) *rawH2 {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	f := http2.NewFramer(c, c)
	if err := f.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return &rawH2{c: c, f: f}
}

// ping sends one PING and reads frames until its ACK; a GOAWAY or a read
// error is returned instead.
func (r *rawH2) ping(n byte) (goAway *http2.GoAwayFrame, err error) {
	data := [8]byte{n}
	if err := r.f.WritePing(false, data); err != nil {
		return nil, err
	}
	for {
		fr, err := r.f.ReadFrame()
		if err != nil {
			return nil, err
		}
		switch fr := fr.(type) {
		case *http2.SettingsFrame:
			if !fr.IsAck() {
				r.f.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if fr.IsAck() && fr.Data == data {
				return nil, nil
			}
		case *http2.GoAwayFrame:
			return fr, nil
		}
	}
}

// TestGRPCKeepaliveEnforcement: a client pinging more often than
// GRPCPingMinTime is sent GOAWAY ENHANCE_YOUR_CALM "too_many_pings" and
// disconnected; one pinging at a slower pace, and a gRPC client making
// calls, keep working. Without the server's enforcement policy gRPC's
// default (5 minutes, no pings without a call) would disconnect the
// well-behaved pinger too.
func TestGRPCKeepaliveEnforcement(t *testing.T) {
	const minTime = 200 * time.Millisecond
	addr := serveLimited(t, config.Limits{GRPCPingMinTime: minTime})
	_, health := dial(t, addr)
	if err := check(health, 5*time.Second); err != nil {
		t.Fatalf("Check: %v", err)
	}

	polite, pr := make(chan error, 1), dialH2(t, addr)
	go func() {
		r := pr
		for i := byte(1); i <= 5; i++ { // a ping past the third strike is answered before the GOAWAY
			if i > 1 {
				time.Sleep(2 * minTime)
			}
			ga, err := r.ping(i)
			if err == nil && ga != nil {
				err = errors.New("GOAWAY " + ga.ErrCode.String() + " " + string(ga.DebugData()))
			}
			if err != nil {
				polite <- err
				return
			}
		}
		polite <- nil
	}()

	r := dialH2(t, addr)
	var goAway *http2.GoAwayFrame
	for i := byte(1); i <= 10 && goAway == nil; i++ {
		var err error
		if goAway, err = r.ping(i); err != nil {
			t.Fatalf("ping %d: %v before any GOAWAY", i, err)
		}
	}
	if goAway == nil {
		t.Fatal("10 pings back to back: no GOAWAY")
	}
	if goAway.ErrCode != http2.ErrCodeEnhanceYourCalm || string(goAway.DebugData()) != "too_many_pings" {
		t.Errorf("GOAWAY %v %q, want ENHANCE_YOUR_CALM too_many_pings", goAway.ErrCode, goAway.DebugData())
	}
	// The server closes the connection after its GOAWAY.
	for {
		if _, err := r.f.ReadFrame(); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the connection stayed open after GOAWAY")
			}
			break
		}
	}

	if err := <-polite; err != nil {
		t.Errorf("a client pinging every %v: %v", 2*minTime, err)
	}
	if err := check(health, 5*time.Second); err != nil {
		t.Errorf("Check on another connection after the GOAWAY: %v", err)
	}
}

// TestGRPCMaxConcurrentStreams: with GRPCMaxStreams calls open on a
// connection, one more waits, and starts when one of them ends.
func TestGRPCMaxConcurrentStreams(t *testing.T) {
	const max = 4
	addr := serveLimited(t, config.Limits{GRPCMaxStreams: max})
	_, health := dial(t, addr)
	if err := check(health, 5*time.Second); err != nil {
		t.Fatalf("Check: %v", err)
	}
	var cancels []context.CancelFunc
	for i := 0; i < max; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cancels = append(cancels, cancel)
		w, err := health.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatalf("Watch %d: %v", i, err)
		}
		if res, err := w.Recv(); err != nil || res.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("Watch %d: %v %v", i, res, err)
		}
	}

	if err := check(health, 300*time.Millisecond); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("call %d with %d open: %v, want it to wait (DeadlineExceeded)", max+1, max, err)
	}
	started := make(chan error, 1)
	go func() { started <- check(health, 5*time.Second) }()
	select {
	case err := <-started:
		t.Fatalf("call %d answered (%v) while %d were open", max+1, err, max)
	case <-time.After(200 * time.Millisecond):
	}
	cancels[0]()
	if err := <-started; err != nil {
		t.Errorf("call %d after one ended: %v", max+1, err)
	}
}

// TestGRPCOpenStreamBytes: a stream of a method that needs no
// credentials may send grpcserver.OpenStreamBytes: a health request of
// that size on the wire reaches the handler; one byte more has its
// connection closed (the client sees Unavailable), and the next Check, on a
// new connection, is answered. (grpc-go would read up to
// grpcserver.MaxRecvMsgSize for it, anonymously.)
func TestGRPCOpenStreamBytes(t *testing.T) {
	addr := serveLimited(t, config.Limits{})
	_, health := dial(t, addr)
	// HealthCheckRequest{service: s} is framed in a 5-byte prefix, a 1-byte
	// tag, a 3-byte length and s (s under 2^21 bytes).
	name := strings.Repeat("x", grpcserver.OpenStreamBytes-9)
	req := &healthpb.HealthCheckRequest{Service: name}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := health.Check(ctx, req, grpc.WaitForReady(true)); status.Code(err) != codes.NotFound {
		t.Errorf("%d bytes: %v, want the handler's NotFound (unknown service)", grpcserver.OpenStreamBytes, err)
	}
	req.Service += "x"
	if _, err := health.Check(ctx, req); status.Code(err) != codes.Unavailable {
		t.Errorf("%d bytes: %v, want Unavailable (the connection closed)", grpcserver.OpenStreamBytes+1, err)
	}
	if err := check(health, 5*time.Second); err != nil {
		t.Errorf("Check after the refused message: %v", err)
	}
}

// TestGRPCMaxConns: --max-conns bounds gRPC connections too: one over the
// cap is closed before the handshake, the open ones keep working, and a
// slot freed by a closed connection is taken again.
func TestGRPCMaxConns(t *testing.T) {
	const max = 2
	addr := serveLimited(t, config.Limits{MaxConns: max})
	var conns []*grpc.ClientConn
	for i := 0; i < max; i++ {
		conn, health := dial(t, addr)
		if err := check(health, 5*time.Second); err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		conns = append(conns, conn)
	}
	extraConn, extra := dial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := extra.Check(ctx, &healthpb.HealthCheckRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("connection %d: %v, want Unavailable", max+1, err)
	}
	for i, conn := range conns {
		if err := check(healthpb.NewHealthClient(conn), 5*time.Second); err != nil {
			t.Errorf("connection %d beside a refused one: %v", i+1, err)
		}
	}
	extraConn.Close() // it would take the freed slot when it retries
	conns[0].Close()
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// A refused connection retries in the background: close it, or it
		// takes the slot later.
		again, health := dial(t, addr)
		if err = check(health, time.Second); err == nil {
			return
		}
		again.Close()
	}
	t.Errorf("a new connection after one closed: %v", err)
}
