package grpcserver

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/gatehouse/gatehouse/pkg/tracing"
)

// Local is a client connection to the services registered on a Server that
// calls their handlers in-process: the REST facade's way in. A call runs
// through the same unary interceptor chain as a call over the network (so
// metrics, error marking, logging, panic recovery and authentication apply
// alike) but without HTTP/2 framing, a socket or a goroutine per call.
//
// What the network would do, it does too: the outgoing metadata becomes the
// handler's incoming metadata; the handler's header and trailer (grpc.SetHeader,
// grpc.SetTrailer) reach grpc.Header and grpc.Trailer call options; the
// request is copied, so the handler never shares the caller's message; the
// answer's fields are moved into the caller's reply (the handler gives its
// answer up, as a network answer leaves the server), not copied: an answer
// of many small messages was built twice, a tenth of a list request's
// allocations (grpc-gateway's own in-process form shares it too); an error that is not a status becomes one as gRPC makes it;
// a call whose context has ended is refused before the handler runs. Each
// call is one internal span named after its method, and is not logged apart
// (the facade's line for the request says it). Only unary calls exist.
type Local struct {
	chain   grpc.UnaryServerInterceptor
	mu      sync.RWMutex
	methods map[string]localMethod // by full method name, /package.Service/Method
}

type localMethod struct {
	impl    any
	handler grpc.MethodHandler
	// span is the name and start options of the call's span, the same for
	// every call of the method: made once.
	span     string
	spanOpts []trace.SpanStartOption
}

var _ grpc.ClientConnInterface = (*Local)(nil)

// RegisterService makes desc's unary methods callable through l.
func (l *Local) RegisterService(desc *grpc.ServiceDesc, impl any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.methods == nil {
		l.methods = map[string]localMethod{}
	}
	for _, m := range desc.Methods {
		l.methods["/"+desc.ServiceName+"/"+m.MethodName] = localMethod{impl: impl, handler: m.Handler,
			span: desc.ServiceName + "/" + m.MethodName,
			spanOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attribute.String("rpc.system", "grpc"),
				attribute.String("rpc.service", desc.ServiceName), attribute.String("rpc.method", m.MethodName))}}
	}
}

// Invoke calls method's handler with args and copies its answer into reply.
func (l *Local) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	// The caller's metadata becomes the handler's incoming metadata and
	// nothing else: a handler's own outgoing calls (its store's etcd
	// requests) must not carry the caller's authorization or other headers.
	md, _ := metadata.FromOutgoingContext(ctx)
	ctx = metadata.NewOutgoingContext(ctx, metadata.MD{})
	decode := func(in any) error {
		proto.Merge(in.(proto.Message), args.(proto.Message))
		return nil
	}
	out, stream, err := l.call(ctx, method, md, decode)
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = stream.header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = stream.trailer
		}
	}
	if err != nil {
		return err
	}
	moveInto(reply.(proto.Message), out)
	return nil
}

// Serve calls method's handler as Invoke does, for a caller that built the
// request message itself (the REST facade's direct routes): req is given to
// the handler (its fields moved into the handler's message, not copied), md
// is the handler's incoming metadata as it is, and the handler's answer
// and the header it set are returned as they are. ctx must carry no
// outgoing metadata (a REST request's does not).
func (l *Local) Serve(ctx context.Context, method string, md metadata.MD, req proto.Message) (proto.Message, metadata.MD, error) {
	out, stream, err := l.call(ctx, method, md, func(in any) error {
		moveInto(in.(proto.Message), req)
		return nil
	})
	return out, stream.header, err
}

// call runs method's handler, through the interceptor chain, with md as
// its incoming metadata and decode filling its request; one internal span.
// The stream holds the header and trailer the handler set.
func (l *Local) call(ctx context.Context, method string, md metadata.MD, decode func(any) error) (proto.Message, *localStream, error) {
	stream := &localStream{method: method}
	l.mu.RLock()
	m, ok := l.methods[method]
	l.mu.RUnlock()
	if !ok {
		return nil, stream, status.Errorf(codes.Unimplemented, "unknown method %s", method)
	}
	if err := ctx.Err(); err != nil {
		return nil, stream, status.FromContextError(err).Err()
	}
	ctx, span := tracing.Start(ctx, m.span, m.spanOpts...)
	defer span.End()

	ctx = grpc.NewContextWithServerTransportStream(metadata.NewIncomingContext(ctx, md), stream)
	resp, err := m.handler(m.impl, ctx, decode, l.chain)
	if err != nil {
		st, ok := status.FromError(err)
		if !ok {
			st = status.FromContextError(err)
		}
		if span.IsRecording() {
			span.SetAttributes(attribute.Int("rpc.grpc.status_code", int(st.Code())))
			span.SetStatus(otelcodes.Error, st.Message())
		}
		return nil, stream, st.Err()
	}
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("rpc.grpc.status_code", int(codes.OK)))
	}
	out, ok := resp.(proto.Message)
	if !ok {
		return nil, stream, status.Errorf(codes.Internal, "%s answered %T, not a message", method, resp)
	}
	return out, stream, nil
}

// moveInto gives dst the fields of src, an answer the handler gave up:
// its lists and messages are dst's from then on, not copies. A dst of
// another Go type gets a copy (proto.Merge).
func moveInto(dst, src proto.Message) {
	d, s := dst.ProtoReflect(), src.ProtoReflect()
	if d.Type() != s.Type() {
		proto.Merge(dst, src)
		return
	}
	fields := s.Descriptor().Fields() // the fields Range would give, without its closure
	for i := range fields.Len() {
		if fd := fields.Get(i); s.Has(fd) {
			d.Set(fd, s.Get(fd))
		}
	}
	if u := s.GetUnknown(); len(u) > 0 {
		d.SetUnknown(u)
	}
}

// NewStream refuses: the facade makes unary calls only.
func (l *Local) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "streams are not served in-process")
}

// inProcess tells whether ctx is an in-process call's: its transport
// stream is Local's.
func inProcess(ctx context.Context) bool {
	_, ok := grpc.ServerTransportStreamFromContext(ctx).(*localStream)
	return ok
}

// localStream holds what a handler sets of its call's header and trailer.
type localStream struct {
	method          string
	header, trailer metadata.MD
}

func (s *localStream) Method() string { return s.method }

func (s *localStream) SetHeader(md metadata.MD) error {
	s.header = metadata.Join(s.header, md)
	return nil
}

func (s *localStream) SendHeader(md metadata.MD) error { return s.SetHeader(md) }

func (s *localStream) SetTrailer(md metadata.MD) error {
	s.trailer = metadata.Join(s.trailer, md)
	return nil
}

// chain runs interceptors in order around a handler, as
// grpc.ChainUnaryInterceptor does: the first is outermost. A call walks the
// chain with one pooled record (chainCall) instead of a closure per
// interceptor per call (seven allocations a call).
func chain(interceptors ...grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	pool := sync.Pool{New: func() any {
		c := &chainCall{interceptors: interceptors}
		c.nextFunc = c.next
		return c
	}}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		c := pool.Get().(*chainCall)
		c.info, c.handler, c.i = info, handler, 0
		resp, err := c.next(ctx, req)
		*c = chainCall{interceptors: interceptors, nextFunc: c.nextFunc}
		pool.Put(c)
		return resp, err
	}
}

// chainCall is one call's walk of the chain: i is the interceptor the
// next step runs. Each step sets i past itself while its interceptor runs
// and back when it returns, so an interceptor may call its next more than
// once, one call after the other (never at the same time, which no
// interceptor does, nor after it returned).
type chainCall struct {
	interceptors []grpc.UnaryServerInterceptor
	nextFunc     grpc.UnaryHandler // next, bound once per record
	info         *grpc.UnaryServerInfo
	handler      grpc.UnaryHandler
	i            int
}

func (c *chainCall) next(ctx context.Context, req any) (any, error) {
	i := c.i
	if i == len(c.interceptors) {
		return c.handler(ctx, req)
	}
	c.i = i + 1
	resp, err := c.interceptors[i](ctx, req, c.info, c.nextFunc)
	c.i = i
	return resp, err
}
