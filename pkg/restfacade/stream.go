package restfacade

import (
	"context"
	"net/http"
	"reflect"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"

	"github.com/gatehouse/gatehouse/pkg/liststream"
)

// A list handler may hand its answer over instead of returning it
// (pkg/liststream): the facade gives every routed request a sink, and when
// the handler used it, writes the answer from the handler's function, from
// one store snapshot, in place of the handler's empty response — or the
// bytes the handler kept of an earlier answer (liststream.Answer), through
// the same path a marshalled answer takes (headers, status, length).

type streamed struct {
	sink *liststream.Sink // made by observe, offered by offerStream
	w    http.ResponseWriter
	r    *http.Request
	out  runtime.Marshaler
}

// offerStream offers the request's sink, whose messages are then
// marshalled as the request's answer would be.
func (f *facade) offerStream(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if o, ok := r.Context().Value(observationKey{}).(*observation); ok && o.stream.sink != nil {
			_, out := runtime.MarshalerForRequest(f.mux, r)
			o.stream.w, o.stream.r, o.stream.out = w, r, out
			o.stream.sink.Offer(f.marshalFunc(out))
		}
		next(w, r, params)
	}
}

// marshalFunc is out.Marshal as a sink takes it: made once per marshaler
// (the mux's, a fixed set; keyed when out is a pointer), not per request.
func (f *facade) marshalFunc(out runtime.Marshaler) func(proto.Message) ([]byte, error) {
	keyed := reflect.TypeOf(out).Kind() == reflect.Pointer
	if keyed {
		if fn, ok := f.marshalFuncs.Load(out); ok {
			return fn.(func(proto.Message) ([]byte, error))
		}
	}
	fn := func(m proto.Message) ([]byte, error) { return out.Marshal(m) }
	if keyed {
		f.marshalFuncs.Store(out, fn)
	}
	return fn
}

// marshaler is the outbound marshaler of r: the one offerStream found for
// it, else found now.
func (f *facade) marshaler(r *http.Request) runtime.Marshaler {
	if o, ok := r.Context().Value(observationKey{}).(*observation); ok && o.stream.r == r && o.stream.out != nil {
		return o.stream.out
	}
	_, out := runtime.MarshalerForRequest(f.mux, r)
	return out
}

// sendStream is the mux's ForwardResponseRewriter: when the handler handed
// its answer over, it writes it now. A failure before anything was sent is
// answered here as the handler's error would be (the mux would answer it
// too, but log it as a rewrite error first); after, the answer ends early
// (and the failure is logged).
func (f *facade) sendStream(ctx context.Context, resp proto.Message) (any, error) {
	o, _ := ctx.Value(observationKey{}).(*observation)
	if o == nil {
		return resp, nil
	}
	if b, ok := o.stream.sink.Answered(); ok {
		return prebuilt(b), nil // written as a marshalled answer is
	}
	if !o.stream.sink.Streaming() {
		return resp, nil
	}
	s := &o.stream
	sent, err := s.sink.Send(s.w)
	switch {
	case err != nil && !sent:
		runtime.HTTPError(ctx, f.mux, s.out, s.w, s.r, err)
	case err != nil:
		f.log.Warn("list answer ended early", "err", err)
	}
	return alreadyWritten{}, nil
}

// alreadyWritten is the response of a request whose answer was streamed:
// CompactJSON, which every service's marshaler writes messages with, makes
// nothing of it.
type alreadyWritten struct{}

// prebuilt is the response of a request whose handler answered with bytes
// the marshaler made before (liststream.Answer): CompactJSON writes them as
// they are.
type prebuilt []byte
