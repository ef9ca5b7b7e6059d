// Package gateway builds a service's REST facade: grpc-gateway v2 in front of
// the service's gRPC server, bent to the exact REST contract in one place —
// success statuses and headers chosen by handlers (pkg/rest), the service's
// own error body for every error, 404 and 405 with Allow, 413 over 16 MiB,
// compact JSON, no Grpc-Metadata-* headers, /healthz and /openapi.json.
package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/gatehouse/gatehouse/pkg/rest"
)

// MaxBody is the largest request body accepted (CONTRACT §0).
const MaxBody = 16 << 20

// Options describe one service's facade.
type Options struct {
	// Register adds the service's generated handlers to mux, calling over conn.
	Register func(ctx context.Context, mux *runtime.ServeMux, conn *grpc.ClientConn) error
	// OpenAPI is the service's generated description: served at /openapi.json
	// and read for the routes that an Allow header lists.
	OpenAPI []byte
	// Marshal sets how responses are written as JSON (names, unpopulated fields).
	Marshal protojson.MarshalOptions
	// ErrorBody returns the service's error body for an HTTP status and its
	// messages (one per problem); it is written as JSON.
	ErrorBody func(r *http.Request, status int, msgs []string) any
	// RequestError answers a request the facade could not read (malformed
	// JSON, wrong types): its HTTP status and messages. When nil, 400 with the
	// decoder's message.
	RequestError func(r *http.Request, err error) (int, []string)
	// Authenticate, when set, checks a routed request's credentials before
	// the facade reads its body, so a caller without them is refused (401)
	// before learning anything about its body. The gRPC auth hook still
	// checks every call.
	Authenticate func(r *http.Request) error
	// MuxOptions are extra grpc-gateway options, such as marshalers for more
	// content types; they are applied after the ones set here.
	MuxOptions []runtime.ServeMuxOption
}

// New returns the facade's handler.
func New(ctx context.Context, conn *grpc.ClientConn, o Options) (http.Handler, error) {
	routes, err := parseRoutes(o.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("read the OpenAPI description: %w", err)
	}
	f := &facade{opts: o, routes: routes}
	jsonpb := CompactJSON{&runtime.JSONPb{
		MarshalOptions:   o.Marshal,
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
	}}
	var own []runtime.ServeMuxOption
	if o.Authenticate != nil {
		own = append(own, runtime.WithMiddlewares(f.authenticate))
	}
	muxOpts := append([]runtime.ServeMuxOption{
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{Marshaler: jsonpb}),
		runtime.WithErrorHandler(f.handleError),
		runtime.WithRoutingErrorHandler(f.handleRoutingError),
		runtime.WithForwardResponseOption(forwardStatus),
		runtime.WithOutgoingHeaderMatcher(outgoingHeader),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithDisablePathLengthFallback(),
	}, append(own, o.MuxOptions...)...)
	f.mux = runtime.NewServeMux(muxOpts...)
	if err := o.Register(ctx, f.mux, conn); err != nil {
		return nil, fmt.Errorf("register the REST handlers: %w", err)
	}
	return f, nil
}

type facade struct {
	opts   Options
	routes routes
	mux    *runtime.ServeMux
}

func (f *facade) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
		return
	case "/openapi.json":
		w.Header().Set("Content-Type", "application/json")
		w.Write(f.opts.OpenAPI)
		return
	}
	if r.ContentLength > MaxBody {
		w.Header().Set("Connection", "close")
		f.writeError(w, r, http.StatusRequestEntityTooLarge, []string{"request body too large"})
		return
	}
	r = limitBody(w, r)
	if r.Method == http.MethodHead { // answered as GET; net/http drops the body
		r.Method = http.MethodGet
	}
	f.mux.ServeHTTP(w, r)
}

// authenticate runs Options.Authenticate first of the middlewares.
func (f *facade) authenticate(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if err := f.opts.Authenticate(r); err != nil {
			f.handleError(r.Context(), nil, nil, w, r, err)
			return
		}
		next(w, r, params)
	}
}

// writeError writes the service's error body.
func (f *facade) writeError(w http.ResponseWriter, r *http.Request, status int, msgs []string) {
	body, err := json.Marshal(f.opts.ErrorBody(r, status, msgs))
	if err != nil {
		body = []byte(`{}`)
	}
	h := w.Header()
	h.Del("Content-Disposition")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// forwardStatus applies the HTTP status a handler chose with rest.SetStatus.
// A 204 has no body and no content type.
func forwardStatus(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
	md, ok := runtime.ServerMetadataFromContext(ctx)
	if !ok {
		return nil
	}
	vals := md.HeaderMD.Get(rest.StatusKey)
	if len(vals) == 0 {
		return nil
	}
	code, err := strconv.Atoi(vals[0])
	if err != nil || code < 200 || code > 599 {
		return nil
	}
	if code == http.StatusNoContent {
		w.Header().Del("Content-Type")
	}
	w.WriteHeader(code)
	return nil
}

// outgoingHeader sends only the headers handlers asked for (rest.SetHeader):
// no gRPC metadata leaks as Grpc-Metadata-*.
func outgoingHeader(key string) (string, bool) {
	name, ok := strings.CutPrefix(key, rest.HeaderPrefix)
	return name, ok && name != ""
}

// CompactJSON is grpc-gateway's protojson marshaler writing without the
// random spaces protojson inserts, so that responses are byte-stable. A
// service that brings its own marshaler (gateway.Options.MuxOptions) builds
// on it.
type CompactJSON struct{ *runtime.JSONPb }

// Marshal writes v as compact JSON.
func (c CompactJSON) Marshal(v any) ([]byte, error) {
	b, err := c.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
