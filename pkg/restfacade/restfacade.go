// Package restfacade builds a service's REST facade: grpc-gateway v2 in front of
// the service's gRPC server, bent to the exact REST contract in one place —
// success statuses and headers chosen by handlers (pkg/rest), the service's
// own error body for every error, 404 and 405 with Allow, 413 over 16 MiB,
// compact JSON, no Grpc-Metadata-* headers, /healthz, /readyz, /metrics and
// /openapi.json; and for every request a span, HTTP metrics by route pattern
// and one log line (observe.go).
package restfacade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/pkg/inflight"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/pbjson"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// MaxBody is the largest request body accepted (CONTRACT §0).
const MaxBody = 16 << 20

// ReadyTimeout bounds how long /readyz waits for the store to answer.
const ReadyTimeout = 2 * time.Second

// ErrShuttingDown, from Options.Ready, makes /readyz answer 503 "shutting
// down" (the process drains after a stop signal) rather than "store
// unavailable".
var ErrShuttingDown = errors.New("shutting down")

// Options describe one service's facade.
type Options struct {
	// Register adds the service's generated handlers to mux, calling over conn.
	Register func(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error
	// OpenAPI is the service's generated description: served at /openapi.json
	// and read for the routes that an Allow header lists.
	OpenAPI []byte
	// Marshal sets how responses are written as JSON (names, unpopulated fields).
	Marshal protojson.MarshalOptions
	// ErrorBody returns the service's error body for an HTTP status and its
	// messages (one per problem); it is written as JSON.
	ErrorBody func(r *http.Request, status int, msgs []string) any
	// RequestError answers a request the facade could not read (malformed
	// JSON, wrong types): its HTTP status and messages. err is the body
	// decoder's own error when the decoder is a BodyDecoder, else the
	// status grpc-gateway made. When nil, 400 with the decoder's message.
	RequestError func(r *http.Request, err error) (int, []string)
	// QueryInt, when set, reads the REST query parameters that are integer
	// fields of a route's request (as the OpenAPI description lists them)
	// with the service's own rules, so that the gRPC API takes integers
	// while REST keeps the contract's answer to text that is not one. Given
	// a parameter's name and text it returns the decimal integer to pass on,
	// "" to leave the field unset, or an error to answer instead (such as a
	// rest.Error). When nil, grpc-gateway parses such values itself.
	QueryInt func(name, text string) (string, error)
	// Authenticate, when set, checks a routed request's credentials before
	// the facade reads its body, so a caller without them is refused (401)
	// before learning anything about its body. The gRPC auth hook still
	// checks every call. Its errors are answered as a handler's are
	// (grpcserver.CallerError).
	Authenticate func(r *http.Request) error
	// Ready reports whether the service's store answers: /readyz is 200
	// when it returns nil, else 503 in the service's error shape. When nil,
	// /readyz answers as /healthz does.
	Ready func(ctx context.Context) error
	// Log receives one line per request; nil discards them.
	Log *slog.Logger
	// SlashInParams keeps an escaped slash (%2F) inside the path parameter
	// it is written in instead of separating segments (grpc-gateway's
	// UnescapingModeAllExceptSlash: the parameter's value holds "%2F", every
	// other escape decoded), for ids that may hold a slash. Routes are then
	// matched on the escaped path everywhere in the facade.
	SlashInParams bool
	// MuxOptions are extra grpc-gateway options, such as marshalers for more
	// content types; they are applied after the ones set here. Middlewares
	// go in Middlewares, never here: the direct path (direct.go) would not
	// run them.
	MuxOptions []runtime.ServeMuxOption
	// Middlewares run on every routed request after the facade's own, on
	// grpc-gateway's routes and the direct path's alike.
	Middlewares []runtime.Middleware
	// Service is the full name of the gRPC service behind the routes (such
	// as gatehouse.management.v1.ManagementService): the direct path reads
	// its google.api.http rules. Without it, or when conn cannot call a
	// method directly (grpcserver.Local can), or when no descriptor of
	// that name is linked in, grpc-gateway serves every route.
	Service string
	// Limits bound the requests the facade serves at once and how long a
	// body may take; zero fields take the defaults.
	Limits Limits
	// NoMetrics leaves /metrics out of the facade (it is served on a
	// listener of its own, --metrics-addr): the path is then unknown here.
	NoMetrics bool
	// Plain are plain HTTP handlers on exact paths beside the gRPC API's
	// (management's gateway routes, CONTRACT §6), served within the same
	// in-flight limit, metrics and logs, labelled by their path; another
	// method on such a path is answered 405 with Allow. A handler checks its
	// own credentials before anything else and reads no body.
	Plain []PlainRoute
	// Pages, when set, serves every path under its Prefix (management's
	// web UI) within the same in-flight limit, metrics and logs, labelled
	// by the prefix. New is given the connection the facade calls the
	// service over, so that pages call the same RPCs, through the same
	// interceptors, as REST and gRPC clients. The handler bounds the
	// bodies it reads itself (at most MaxBody reach it).
	Pages *Pages
}

// Pages is a handler for the paths under a prefix (Options.Pages).
type Pages struct {
	Prefix string // such as "/ui/"
	New    func(conn grpc.ClientConnInterface) http.Handler
}

// PlainRoute is one plain HTTP handler of Options.Plain.
type PlainRoute struct {
	Method, Path string
	Handler      http.Handler
	// Serve, used when Handler is nil, serves the route and may return an
	// error instead of writing an answer: it is answered in the service's
	// error shape (a rest.Error with its status, any other error 500
	// internal error). The store backup is one.
	Serve func(w http.ResponseWriter, r *http.Request) error
}

// Limits bound what one client can hold of the facade.
type Limits struct {
	// MaxInFlight is how many requests are served at once; one more is
	// answered 503 at once. Default DefaultMaxInFlight.
	MaxInFlight int
	// BodyGrace and MinBodyRate size a body's read deadline: BodyGrace plus
	// its length at MinBodyRate bytes per second. Defaults
	// DefaultBodyGrace and DefaultMinBodyRate.
	BodyGrace   time.Duration
	MinBodyRate int
	// Bodies give each operation its largest body; over it, 413 before the
	// body is read.
	Bodies bodylimit.Table
	// Budget, when set, holds each body's bytes, for the caller's key, as
	// they arrive (after the caller's credentials are checked); a body that
	// finds no room within its wait gets 503 with Retry-After.
	Budget *inflight.Budget
}

// DefaultMaxInFlight is the default of Limits.MaxInFlight: with bodies of
// up to 16 MiB, enough for a management API's clients without letting them
// exhaust memory.
const DefaultMaxInFlight = 256

func (l Limits) withDefaults() Limits {
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.BodyGrace <= 0 {
		l.BodyGrace = DefaultBodyGrace
	}
	if l.MinBodyRate <= 0 {
		l.MinBodyRate = DefaultMinBodyRate
	}
	return l
}

// New returns the facade's handler.
func New(ctx context.Context, conn grpc.ClientConnInterface, o Options) (http.Handler, error) {
	routes, err := parseRoutes(o.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("read the OpenAPI description: %w", err)
	}
	limits := o.Limits.withDefaults()
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &facade{opts: o, routes: routes, limits: limits, inFlight: make(chan struct{}, limits.MaxInFlight), log: log.With("component", "http")}
	jsonpb := NewJSON(o.Marshal)
	middlewares := []runtime.Middleware{f.recordRoute, f.validPathParams, f.readIntQuery}
	if o.Authenticate != nil {
		middlewares = append(middlewares, f.authenticate)
	}
	middlewares = append(append(middlewares, f.admitBody, f.offerStream), o.Middlewares...)
	own := []runtime.ServeMuxOption{runtime.WithMiddlewares(middlewares...)}
	if o.SlashInParams {
		own = append(own, runtime.WithUnescapingMode(runtime.UnescapingModeAllExceptSlash))
	}
	muxOpts := append([]runtime.ServeMuxOption{
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{Marshaler: jsonpb}),
		runtime.WithForwardResponseRewriter(f.sendStream),
		runtime.WithErrorHandler(f.handleError),
		runtime.WithRoutingErrorHandler(f.handleRoutingError),
		runtime.WithForwardResponseOption(forwardStatus),
		runtime.WithForwardResponseOption(func(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
			closeUnread(ctx, w)
			return nil
		}),
		runtime.WithOutgoingHeaderMatcher(outgoingHeader),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithDisablePathLengthFallback(),
	}, append(own, o.MuxOptions...)...)
	f.mux = runtime.NewServeMux(muxOpts...)
	if o.Pages != nil {
		f.pages = o.Pages.New(conn)
	}
	if err := o.Register(ctx, f.mux, conn); err != nil {
		return nil, fmt.Errorf("register the REST handlers: %w", err)
	}
	if dc, ok := conn.(directConn); ok && o.Service != "" {
		if f.directRoutes, err = newDirectTable(o.Service); errors.Is(err, protoregistry.NotFound) {
			f.directRoutes = nil // a service without a descriptor (a test's): grpc-gateway serves it all
		} else if err != nil {
			return nil, fmt.Errorf("read the service's HTTP rules: %w", err)
		}
		f.direct = dc
		for _, rts := range f.directRoutes {
			for _, rt := range rts {
				if rt.served {
					rt.handler = f.callDirect(rt)
					for i := len(middlewares) - 1; i >= 0; i-- {
						rt.handler = middlewares[i](rt.handler)
					}
				}
			}
		}
	}
	return observe(f.log, f), nil
}

// metricsHandler serves GET /metrics.
var metricsHandler = metrics.Handler()

// Metrics serves GET /metrics alone (404 for any other path), for a
// listener of its own (--metrics-addr).
func Metrics() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler)
	return mux
}

type facade struct {
	opts     Options
	routes   routes
	mux      *runtime.ServeMux
	limits   Limits
	inFlight chan struct{} // one token per request being served
	log      *slog.Logger
	pages    http.Handler // Options.Pages, nil without

	direct       directConn  // the connection direct routes call over, nil without
	directRoutes directTable // the routes the facade serves itself (direct.go)

	marshalFuncs sync.Map // runtime.Marshaler → its Marshal for a sink (marshalFunc)
}

func (f *facade) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		setRoute(r, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
		return
	case "/readyz":
		setRoute(r, r.URL.Path)
		if f.opts.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
			err := f.opts.Ready(ctx)
			cancel()
			if err != nil {
				msg := "store unavailable"
				switch {
				case errors.Is(err, ErrShuttingDown):
					msg = ErrShuttingDown.Error()
				case errors.Is(err, kv.ErrNoSpace):
					msg = "store full"
				}
				f.writeError(w, r, http.StatusServiceUnavailable, []string{msg})
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
		return
	case "/metrics":
		if !f.opts.NoMetrics {
			setRoute(r, r.URL.Path)
			metricsHandler.ServeHTTP(w, r)
			return
		}
	case "/openapi.json":
		setRoute(r, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.Write(f.opts.OpenAPI)
		return
	}
	r = f.watchBody(w, r)
	select {
	case f.inFlight <- struct{}{}:
		defer func() { <-f.inFlight }()
	default:
		w.Header().Set("Retry-After", "1")
		f.writeError(w, r, http.StatusServiceUnavailable, []string{"server busy: too many requests in flight, retry later"})
		return
	}
	if f.servePlain(w, r) {
		return
	}
	if p := f.opts.Pages; p != nil && (strings.HasPrefix(r.URL.Path, p.Prefix) || r.URL.Path+"/" == p.Prefix) {
		setRoute(r, p.Prefix)
		f.pages.ServeHTTP(w, r)
		return
	}
	if r.ContentLength > MaxBody {
		f.writeError(w, r, http.StatusRequestEntityTooLarge, []string{"request body too large"})
		return
	}
	validQuery(r)
	// grpc-gateway would give the call the client's own deadline: a REST
	// client's Grpc-Timeout: 1n answered 504.
	r.Header.Del("Grpc-Timeout")
	if r.Method == http.MethodHead { // answered as GET; net/http drops the body
		r.Method = http.MethodGet
	}
	if rt, params := f.directRoutes.find(r); rt != nil {
		rt.handler(w, r, params)
		return
	}
	f.mux.ServeHTTP(w, r)
}

// routePath is the path routes are matched on: the escaped path with
// Options.SlashInParams, so a %2F stays within its segment as in the mux.
func (f *facade) routePath(r *http.Request) string {
	if f.opts.SlashInParams {
		return r.URL.EscapedPath()
	}
	return r.URL.Path
}

// servePlain serves r when its path is one of Options.Plain: with the
// route's handler, or 405 with Allow for another method. It reports whether
// it answered.
func (f *facade) servePlain(w http.ResponseWriter, r *http.Request) bool {
	var allow []string
	for _, rt := range f.opts.Plain {
		if rt.Path != r.URL.Path {
			continue
		}
		if rt.Method == r.Method {
			setRoute(r, rt.Path)
			closeUnread(r.Context(), w) // the handler reads no body
			if rt.Handler != nil {
				rt.Handler.ServeHTTP(w, r)
			} else if err := rt.Serve(w, r); err != nil {
				f.handleError(r.Context(), nil, nil, w, r, err)
			}
			return true
		}
		allow = append(allow, rt.Method)
	}
	if len(allow) == 0 {
		return false
	}
	setRoute(r, r.URL.Path)
	w.Header().Set("Allow", strings.Join(allow, ", "))
	f.writeError(w, r, http.StatusMethodNotAllowed, []string{http.StatusText(http.StatusMethodNotAllowed)})
	return true
}

// authenticate runs Options.Authenticate first of the middlewares. The
// request carries a lookup memo (credential.WithLookupMemo, set by observe),
// so the interceptor's check of the same key reads nothing again.
func (f *facade) authenticate(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if err := f.opts.Authenticate(r); err != nil {
			f.handleError(r.Context(), nil, nil, w, r, grpcserver.CallerError(f.log, err))
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
	closeUnread(r.Context(), w)
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

// Marshal writes v as compact JSON. A message pkg/pbjson covers is written
// by it, byte for byte as protojson would; other messages by protojson.
// Single-line protojson differs from compact JSON only by a space after
// each comma, in builds where its per-binary randomness says so
// (commaSpaces): a message is written once and, only then, those spaces
// dropped in place. Other values go through json.Compact.
func (c CompactJSON) Marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case alreadyWritten:
		return nil, nil // streamed (stream.go)
	case prebuilt:
		return v, nil // kept by the handler (stream.go)
	}
	if m, ok := v.(proto.Message); ok {
		if b, ok := pbjson.Marshal(m, c.MarshalOptions); ok {
			return b, nil
		}
	}
	b, err := c.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(proto.Message); ok && c.Indent == "" && !c.Multiline {
		if commaSpaces {
			b = dropCommaSpaces(b)
		}
		return b, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// commaSpaces tells whether this binary's protojson writes ", " between
// values (it decides once per binary).
var commaSpaces = func() bool {
	b, _ := protojson.Marshal(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(1), structpb.NewNumberValue(2)}})
	return bytes.Contains(b, []byte(", "))
}()

// dropCommaSpaces removes, in place, the space after each comma outside
// strings in single-line protojson output, the only whitespace it writes.
func dropCommaSpaces(b []byte) []byte {
	out := b[:0]
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		out = append(out, c)
		switch {
		case inString && c == '\\' && i+1 < len(b):
			i++
			out = append(out, b[i])
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == ',' && i+1 < len(b) && b[i+1] == ' ':
			i++
		}
	}
	return out
}
