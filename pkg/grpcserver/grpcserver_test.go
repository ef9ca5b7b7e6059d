package grpcserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// testService is a hand-written service with one method per behaviour.
var testService = grpc.ServiceDesc{
	ServiceName: "gatehouse.test.v1.TestService",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Panic", Handler: unary(func() error { panic("boom: secret detail") })},
		{MethodName: "NotFound", Handler: unary(func() error { return status.Error(codes.NotFound, "no such thing") })},
		{MethodName: "Teapot", Handler: unary(func() error { return rest.Error(codes.FailedPrecondition, 418, "short and stout") })},
		{MethodName: "OK", Handler: unary(func() error { return nil })},
		{MethodName: "Plain", Handler: unary(func() error { return errors.New("plain: not a status") })},
		{MethodName: "Canceled", Handler: unary(func() error { return fmt.Errorf("gave up: %w", context.Canceled) })},
		{MethodName: "Deadline", Handler: unary(func() error { return fmt.Errorf("read: %w", context.DeadlineExceeded) })},
		{MethodName: "Unavailable", Handler: unary(func() error { return fmt.Errorf("get: %w", kv.ErrUnavailable) })},
		{MethodName: "TooLarge", Handler: unary(func() error { return fmt.Errorf("%w: etcd takes requests up to 1.5 MiB", kv.ErrTooLarge) })},
		{MethodName: "Conflict", Handler: unary(func() error { return fmt.Errorf("update: %w", kv.ErrConflict) })},
		{MethodName: "Echo", Handler: echo},
	},
}

// echoed holds the last request message Echo's handler received, to check
// that a caller's later change does not reach it.
var echoed struct {
	sync.Mutex
	in *wrapperspb.StringValue
}

// echo answers the request's value joined to the caller's x-echo metadata,
// and sets a header and a trailer.
func echo(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
	in := new(wrapperspb.StringValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	echoed.Lock()
	echoed.in = in
	echoed.Unlock()
	h := func(ctx context.Context, req any) (any, error) {
		method, _ := grpc.Method(ctx)
		if err := grpc.SetHeader(ctx, metadata.Pairs("x-header", "h:"+method)); err != nil {
			return nil, err
		}
		if err := grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "t")); err != nil {
			return nil, err
		}
		got := metadata.ValueFromIncomingContext(ctx, "x-echo")
		answer := req.(*wrapperspb.StringValue).GetValue() + "|" + strings.Join(got, ",")
		// What the handler's own outgoing calls (its store's etcd requests)
		// would carry: nothing of the caller's (issue 18 row 9).
		if out, _ := metadata.FromOutgoingContext(ctx); len(out) > 0 {
			answer += fmt.Sprintf("|outgoing %v", out)
		}
		return wrapperspb.String(answer), nil
	}
	return ic(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/gatehouse.test.v1.TestService/Echo"}, h)
}

func unary(f func() error) grpc.MethodHandler {
	return func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(emptypb.Empty)
		if err := dec(in); err != nil {
			return nil, err
		}
		h := func(context.Context, any) (any, error) { return new(emptypb.Empty), f() }
		return ic(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/gatehouse.test.v1.TestService/x"}, h)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// serve starts a server with the test service and returns a client connection and the log.
func serve(t *testing.T, auth AuthFunc) (*grpc.ClientConn, *syncBuffer) {
	t.Helper()
	s, logs := newServer(t, auth)
	srv := s.GRPC
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, logs
}

func newServer(t *testing.T, auth AuthFunc) (*Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	s := New(slog.New(slog.NewTextHandler(logs, nil)), auth, nil, Guards{})
	s.RegisterService(&testService, struct{}{})
	return s, logs
}

// transports serves the test service and returns a connection over the
// network and the in-process one, each with the log it writes to.
func transports(t *testing.T, auth AuthFunc) map[string]struct {
	conn grpc.ClientConnInterface
	logs *syncBuffer
} {
	conn, logs := serve(t, auth)
	s, localLogs := newServer(t, auth)
	return map[string]struct {
		conn grpc.ClientConnInterface
		logs *syncBuffer
	}{"network": {conn, logs}, "local": {s.Local, localLogs}}
}

func call(conn grpc.ClientConnInterface, method string) error {
	return conn.Invoke(context.Background(), "/gatehouse.test.v1.TestService/"+method, new(emptypb.Empty), new(emptypb.Empty))
}

func TestErrorsReachTheFacadeWithTheirHTTPStatus(t *testing.T) {
	for name, tr := range transports(t, nil) {
		t.Run(name, func(t *testing.T) { checkErrors(t, tr.conn, tr.logs) })
	}
}

func checkErrors(t *testing.T, conn grpc.ClientConnInterface, logs *syncBuffer) {
	tests := []struct {
		method string
		code   codes.Code
		msg    string
		http   int
	}{
		{"Panic", codes.Internal, "internal error", 500},
		{"NotFound", codes.NotFound, "no such thing", 404},
		{"Teapot", codes.FailedPrecondition, "short and stout", 418},
		{"Plain", codes.Internal, "internal error", 500}, // logged, never its text
		{"Canceled", codes.Canceled, "request cancelled", 499},
		{"Deadline", codes.DeadlineExceeded, "deadline exceeded", 504},
		{"Unavailable", codes.Unavailable, "store unavailable", 503},
		{"TooLarge", codes.ResourceExhausted, "write too large for the store: etcd takes requests up to 1.5 MiB", 413},
		{"Conflict", codes.Unavailable, kv.ErrConflict.Error(), 503}, // the store is busy: retry later
	}
	for _, tt := range tests {
		st := status.Convert(call(conn, tt.method))
		httpStatus, msgs, ok := rest.Detail(st)
		if st.Code() != tt.code || st.Message() != tt.msg || !ok || httpStatus != tt.http || len(msgs) != 1 || msgs[0] != tt.msg {
			t.Errorf("%s: %v %q (REST %d %v %v), want %v %q (REST %d)", tt.method, st.Code(), st.Message(), httpStatus, msgs, ok, tt.code, tt.msg, tt.http)
		}
	}
	if err := call(conn, "OK"); err != nil {
		t.Errorf("OK: %v", err)
	}
	out := logs.String()
	if !strings.Contains(out, "plain: not a status") {
		t.Errorf("the internal failure was not logged:\n%s", out)
	}
	if !strings.Contains(out, "panic in handler") || !strings.Contains(out, "goroutine") {
		t.Errorf("the panic was not logged with its stack:\n%s", out)
	}
}

func TestAuthRunsForServiceMethodsOnly(t *testing.T) {
	denied := status.Error(codes.Unauthenticated, "who are you")
	auth := func(context.Context, string, any) (context.Context, error) { return nil, denied }
	for name, tr := range transports(t, auth) {
		if st := status.Convert(call(tr.conn, "OK")); st.Code() != codes.Unauthenticated || st.Message() != "who are you" {
			t.Errorf("%s: a service method without credentials: %v %q, want Unauthenticated", name, st.Code(), st.Message())
		}
	}
	conn, _ := serve(t, auth)
	res, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without credentials: %v, %v; want SERVING", res, err)
	}
}

// TestLocalCallsLikeTheNetwork: through Local, metadata, header, trailer,
// request and answer reach each side as they do over the network, and
// neither side shares a message with the other; the caller's metadata is
// the handler's incoming metadata only, never on its outgoing calls.
func TestLocalCallsLikeTheNetwork(t *testing.T) {
	for name, tr := range transports(t, nil) {
		t.Run(name, func(t *testing.T) {
			ctx := metadata.AppendToOutgoingContext(context.Background(), "x-echo", "a", "x-echo", "b")
			req, reply := wrapperspb.String("ping"), new(wrapperspb.StringValue)
			var header, trailer metadata.MD
			err := tr.conn.Invoke(ctx, "/gatehouse.test.v1.TestService/Echo", req, reply, grpc.Header(&header), grpc.Trailer(&trailer))
			if err != nil || reply.GetValue() != "ping|a,b" {
				t.Fatalf("echo: %q %v, want %q", reply.GetValue(), err, "ping|a,b")
			}
			if got := header.Get("x-header"); len(got) != 1 || got[0] != "h:/gatehouse.test.v1.TestService/Echo" {
				t.Errorf("header x-header %q, want the method set by the handler", got)
			}
			if got := trailer.Get("x-trailer"); len(got) != 1 || got[0] != "t" {
				t.Errorf("trailer x-trailer %q, want t", got)
			}
			if logged := strings.Contains(tr.logs.String(), "msg=rpc"); logged != (name == "network") {
				t.Errorf("rpc line logged: %v; want one for a network call only (the facade logs in-process calls)", logged)
			}
			req.Value = "changed after the call"
			echoed.Lock()
			kept := echoed.in.GetValue()
			echoed.Unlock()
			if kept != "ping" {
				t.Errorf("the handler's request became %q after the caller changed its own", kept)
			}

			done, cancel := context.WithCancel(context.Background())
			cancel()
			if st := status.Convert(tr.conn.Invoke(done, "/gatehouse.test.v1.TestService/Echo", req, reply)); st.Code() != codes.Canceled {
				t.Errorf("a call with an ended context: %v, want Canceled", st.Code())
			}
			if st := status.Convert(tr.conn.Invoke(ctx, "/gatehouse.test.v1.TestService/Missing", req, reply)); st.Code() != codes.Unimplemented {
				t.Errorf("an unknown method: %v, want Unimplemented", st.Code())
			}
		})
	}
}
