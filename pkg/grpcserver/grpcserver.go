// Package grpcserver builds the gRPC server every Gatehouse service runs:
// metrics (pkg/metrics) and a span per call (otelgrpc), the one map from a
// handler's errors to its caller's statuses (CallerError), request logging, panic recovery, the service's authentication
// hook, grpc.health.v1 and server reflection; and the in-process connection
// (Local) through which the facade calls the same handlers and interceptors.
package grpcserver

import (
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/idsize"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/pkg/tracing"
)

// MaxRecvMsgSize admits the largest message (bodylimit.Large) with room
// for framing; each method's own limit is checked by the codec (guard.go).
const MaxRecvMsgSize = bodylimit.Large + 64<<10

// MaxConcurrentStreams bounds the calls one connection has open at once
// (CONTRACT §0). A client that pings more often than every 10 s is
// disconnected (keepalive enforcement); an idle connection is closed after
// 5 minutes, a dead one noticed within 80 s.
const MaxConcurrentStreams = 100

// A stream's receive window is fixed (no BDP growth), so that what a
// connection's streams buffer before their calls are admitted stays small
// (MaxConcurrentStreams × StreamWindow); headers are bounded as REST's are.
const (
	StreamWindow      = 64 << 10
	ConnWindow        = 1 << 20
	MaxHeaderListSize = 64 << 10
)

// PingMinTime is the keepalive enforcement's shortest interval between a
// client's pings; three pings closer together get the connection closed
// (GOAWAY ENHANCE_YOUR_CALM "too_many_pings").
const PingMinTime = 10 * time.Second

// AuthFunc checks the caller of fullMethod from the incoming metadata — and,
// for authorization, may look at the decoded request — and returns the
// context the handler runs with (carrying the caller), or a status error
// (Unauthenticated, PermissionDenied). It runs before the handler, so before
// any lookup.
type AuthFunc func(ctx context.Context, fullMethod string, req any) (context.Context, error)

// Server is a service's gRPC server, its health service, and the
// in-process connection (Local) through which the REST facade calls the
// same handlers with the same interceptors.
type Server struct {
	GRPC   *grpc.Server
	Health *health.Server
	Local  *Local

	guards  Guards
	codec   *limitCodec
	guarded map[string]bool // full method names of the guarded calls; set before serving
}

// RegisterService registers a service implementation on the gRPC server and
// on Local alike.
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	s.GRPC.RegisterService(s.guard(desc), impl)
	s.Local.RegisterService(desc, impl)
}

// New returns a server with the interceptors in place and health and
// reflection registered (on the network server only); health reports
// SERVING until the caller changes it. auth may be nil. Health and
// reflection calls are never authenticated. audit, when not nil, runs
// around error mapping, panic recovery and authentication (pkg/audit's
// interceptor, which sees every answer as the caller does, refusals
// included). guards bound the network server's calls (guard.go,
// frontdoor.go). opts come after the defaults, so they replace them
// (pkg/server passes its configured limits this way).
func New(log *slog.Logger, auth AuthFunc, audit grpc.UnaryServerInterceptor, guards Guards, opts ...grpc.ServerOption) *Server {
	log = log.With("component", "grpc")
	if audit == nil {
		audit = func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			return next(ctx, req)
		}
	}
	unary := chain(metrics.GRPC.UnaryServerInterceptor(), logRequests(log), checkIDs, audit, markErrors(log), recoverPanics(log), authenticate(auth))
	codec := newLimitCodec()
	// Connections are read through a meter, without grpc-go's own buffer,
	// and every stream passes the tap (arrival.go).
	own := []grpc.ServerOption{grpc.ForceServerCodecV2(codec), grpc.Creds(newMeterCreds(guards.Creds)), grpc.ReadBufferSize(0)}
	opts = append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxRecvMsgSize),
		grpc.MaxSendMsgSize(math.MaxInt32),
		grpc.MaxConcurrentStreams(MaxConcurrentStreams),
		grpc.InitialWindowSize(StreamWindow),
		grpc.InitialConnWindowSize(ConnWindow),
		grpc.MaxHeaderListSize(MaxHeaderListSize),
		grpc.ConnectionTimeout(10 * time.Second),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: PingMinTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 5 * time.Minute, Time: time.Minute, Timeout: 20 * time.Second}),
		grpc.StatsHandler(otelgrpc.NewServerHandler()),
		grpc.UnaryInterceptor(unary),
		grpc.ChainStreamInterceptor(metrics.GRPC.StreamServerInterceptor(), recoverStreamPanics(log)),
	}, append(own, opts...)...)
	s := &Server{Local: &Local{chain: unary}, guards: guards, codec: codec, guarded: map[string]bool{}}
	srv := grpc.NewServer(append(opts, grpc.InTapHandle(s.tap))...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	s.GRPC, s.Health = srv, hs
	return s
}

// tap runs in a connection's reader as a stream starts: the front door,
// then the stream's bytes are followed as they arrive (arrival.go).
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if s.guards.Door != nil {
		var err error
		if ctx, err = s.guards.Door.tap(ctx, info); err != nil {
			return nil, err
		}
	}
	return track(ctx, !s.guarded[info.FullMethodName]), nil
}

func logRequests(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if inProcess(ctx) {
			return next(ctx, req) // the facade logs the request
		}
		start := time.Now()
		resp, err := next(ctx, req)
		code := status.Code(err)
		level := slog.LevelInfo
		switch {
		case strings.HasPrefix(info.FullMethod, "/grpc.health.v1."):
			level = slog.LevelDebug // probes: not an INFO line every few seconds
		case code == codes.Internal || code == codes.Unknown:
			level = slog.LevelError
		}
		log.Log(ctx, level, "rpc", "method", info.FullMethod, "code", code.String(), "duration", time.Since(start), "trace_id", tracing.ID(ctx))
		return resp, err
	}
}

// checkIDs refuses a request with an identifier over idsize.Max bytes
// (400, naming the field) before it is audited or authorized: the audit
// log never stores an id of a megabyte, and no lookup is made with one.
func checkIDs(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if m, ok := req.(proto.Message); ok {
		if err := idsize.Check(m); err != nil {
			return nil, err
		}
	}
	return next(ctx, req)
}

// errInternal is what a caller sees of a panic: never its text.
var errInternal = rest.Error(codes.Internal, 500, "internal error")

func recoverPanics(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("panic in handler", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
				resp, err = nil, errInternal
			}
		}()
		return next(ctx, req)
	}
}

func recoverStreamPanics(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("panic in stream handler", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
				err = errInternal
			}
		}()
		return next(srv, ss)
	}
}

// authenticate runs the service's AuthFunc.
func authenticate(auth AuthFunc) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if auth == nil || openMethod(info.FullMethod) {
			return next(ctx, req)
		}
		authCtx, err := auth(ctx, info.FullMethod, req)
		if err != nil {
			return nil, err
		}
		ctx = authCtx
		return next(ctx, req)
	}
}
