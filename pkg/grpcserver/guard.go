package grpcserver

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/inflight"
)

// Guards bound what a call over the network can make the server hold
// (CONTRACT §0 "Resource bounds"); the in-process calls of the REST facade
// are bounded by the facade itself.
type Guards struct {
	// Door, when set, authenticates every stream before it exists.
	Door *FrontDoor
	// Budget, when set, admits each call for the call's key once
	// inflight.GrowStep bytes fit (waiting for room as REST requests do),
	// then holds what has arrived of its message, growing with it
	// (arrival.go), and once the message is read only its size until the
	// call ends.
	Budget *inflight.Budget
	// Limits give each method its largest message (decompressed).
	Limits bodylimit.Table
	// MessageTimeout: a call whose message is not complete this long after
	// its handler started is reset, whatever its rate. Default
	// MessageTimeout.
	MessageTimeout time.Duration
	// Creds are the transport's credentials (TLS); nil serves plain HTTP/2.
	Creds credentials.TransportCredentials
}

// MessageTimeout is the default of Guards.MessageTimeout.
const MessageTimeout = 30 * time.Second

// errIncomplete ends a call whose message stopped arriving (less than
// inflight.MinProgress in a window) or was not whole by MessageTimeout.
var errIncomplete = status.Error(codes.DeadlineExceeded, "request message not complete in time")

func errTooLarge() error { return status.Error(codes.ResourceExhausted, bodylimit.Message) }

// guard wraps the unary handlers of desc: budget, then the message read
// within the timeout. The codec checks the limit of each message type.
func (s *Server) guard(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	out := *desc
	out.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	sd, _ := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(desc.ServiceName))
	for i, m := range desc.Methods {
		full := "/" + desc.ServiceName + "/" + m.MethodName
		limit := s.guards.Limits.Of(full)
		s.guarded[full] = true
		if sd, ok := sd.(protoreflect.ServiceDescriptor); ok {
			if md := sd.Methods().ByName(protoreflect.Name(m.MethodName)); md != nil {
				s.codec.setLimit(md.Input().FullName(), limit)
			}
		}
		out.Methods[i] = grpc.MethodDesc{MethodName: m.MethodName, Handler: s.guardHandler(m.Handler, limit)}
	}
	return &out
}

func (s *Server) guardHandler(h grpc.MethodHandler, limit int64) grpc.MethodHandler {
	timeout := s.guards.MessageTimeout
	if timeout <= 0 {
		timeout = MessageTimeout
	}
	return func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		end := time.Now().Add(timeout)
		in := arrivalOf(ctx)
		if in != nil {
			in.limit(wireLimit(limit))
		}
		var hold *inflight.Hold
		if s.guards.Budget != nil {
			// A call not followed as it arrives holds the largest message.
			reserve := int64(MaxRecvMsgSize)
			if in != nil {
				reserve = inflight.GrowStep
			}
			var err error
			if hold, err = s.guards.Budget.Acquire(ctx, caller(ctx), reserve); err != nil {
				return nil, err
			}
			defer hold.Release()
			if in != nil {
				in.admit(hold, reserve)
			}
		}
		read := func(v any) error {
			err := receive(dec, v, in, end, func() { s.codec.refusal(v) })
			if in != nil {
				in.read()
			}
			if err != nil {
				return err
			}
			if err := s.codec.refusal(v); err != nil {
				return err
			}
			if hold != nil {
				if m, ok := v.(proto.Message); ok {
					hold.Shrink(int64(proto.Size(m)))
				}
			}
			return nil
		}
		return h(srv, ctx, read, ic)
	}
}

// caller names the call's caller for the in-flight budget by its key.
func caller(ctx context.Context) string {
	var key string
	if v := metadata.ValueFromIncomingContext(ctx, "authorization"); len(v) > 0 {
		key = v[0]
	}
	return inflight.Caller(key)
}

// wireLimit is the most a message within limit (decompressed) can take on
// the wire: its 5-byte prefix, and gzip's or deflate's worst expansion of
// incompressible bytes (5 bytes a 64 KiB block and a header; 1/1024 and
// 1 KiB leave room to spare). A message past it is refused as too large
// while it arrives, before the rest is read.
func wireLimit(limit int64) int64 { return limit + limit/1024 + 1<<10 }

// receive reads the call's message while it keeps arriving (in's
// deadline) and at the latest until end. When it stops, or its hold cannot
// grow, the handler returns at once, which resets the stream, and the read
// in progress ends with it (then abandoned runs). A call not followed (in
// nil) has end alone.
func receive(dec func(any) error, v any, in *arrival, end time.Time, abandoned func()) error {
	done := make(chan error, 1)
	go func() { done <- dec(v) }()
	var failed <-chan struct{}
	next := func() time.Time { return end }
	if in != nil {
		failed = in.failed
		next = func() time.Time {
			if d := in.deadline(); d.Before(end) {
				return d
			}
			return end
		}
	}
	t := time.NewTimer(time.Until(next()))
	defer t.Stop()
	for {
		var err error
		select {
		case err = <-done:
			return err
		case <-failed:
			err = in.err
		case <-t.C:
			if d := next(); time.Now().Before(d) {
				t.Reset(time.Until(d))
				continue
			}
			err = errIncomplete
		}
		go func() { <-done; abandoned() }()
		return err
	}
}

// limitCodec is the proto codec with a size limit per request message type
// of the guarded methods, checked on the decompressed message before it is
// decoded. gRPC turns a codec's error into Internal, so a refused message
// is left undecoded and its refusal kept for the guarded handler's read to
// return (refusal), keyed by the message the read decodes into.
type limitCodec struct {
	base    encoding.CodecV2
	mu      sync.RWMutex
	limits  map[protoreflect.FullName]int64
	refused sync.Map // message (pointer) → error
}

func newLimitCodec() *limitCodec {
	return &limitCodec{base: encoding.GetCodecV2("proto"), limits: map[protoreflect.FullName]int64{}}
}

func (c *limitCodec) setLimit(name protoreflect.FullName, limit int64) {
	c.mu.Lock()
	c.limits[name] = limit
	c.mu.Unlock()
}

func (c *limitCodec) Name() string { return c.base.Name() }

func (c *limitCodec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c *limitCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return c.base.Unmarshal(data, v)
	}
	c.mu.RLock()
	limit, guarded := c.limits[m.ProtoReflect().Descriptor().FullName()]
	c.mu.RUnlock()
	if !guarded {
		return c.base.Unmarshal(data, v)
	}
	if int64(data.Len()) > limit {
		c.refused.Store(v, errTooLarge())
		return nil
	}
	b := data.Materialize()
	if err := checkFree(b, m.ProtoReflect().Descriptor(), ""); err != nil {
		c.refused.Store(v, err)
		return nil
	}
	return proto.Unmarshal(b, m)
}

// refusal returns (and forgets) why the codec refused v's message.
func (c *limitCodec) refusal(v any) error {
	if err, ok := c.refused.LoadAndDelete(v); ok {
		return err.(error)
	}
	return nil
}
