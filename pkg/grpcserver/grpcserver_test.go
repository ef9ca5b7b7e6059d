package grpcserver

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

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
	},
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
	logs := &syncBuffer{}
	srv, _ := New(slog.New(slog.NewTextHandler(logs, nil)), auth)
	srv.RegisterService(&testService, struct{}{})
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

func call(conn *grpc.ClientConn, method string) error {
	return conn.Invoke(context.Background(), "/gatehouse.test.v1.TestService/"+method, new(emptypb.Empty), new(emptypb.Empty))
}

func TestErrorsReachTheFacadeWithTheirHTTPStatus(t *testing.T) {
	conn, logs := serve(t, nil)
	tests := []struct {
		method string
		code   codes.Code
		msg    string
		http   int
	}{
		{"Panic", codes.Internal, "internal error", 500},
		{"NotFound", codes.NotFound, "no such thing", 404},
		{"Teapot", codes.FailedPrecondition, "short and stout", 418},
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
	if !strings.Contains(out, "panic in handler") || !strings.Contains(out, "goroutine") {
		t.Errorf("the panic was not logged with its stack:\n%s", out)
	}
}

func TestAuthRunsForServiceMethodsOnly(t *testing.T) {
	denied := status.Error(codes.Unauthenticated, "who are you")
	conn, _ := serve(t, func(context.Context, string, any) (context.Context, error) { return nil, denied })
	if st := status.Convert(call(conn, "OK")); st.Code() != codes.Unauthenticated || st.Message() != "who are you" {
		t.Errorf("a service method without credentials: %v %q, want Unauthenticated", st.Code(), st.Message())
	}
	res, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without credentials: %v, %v; want SERVING", res, err)
	}
}
