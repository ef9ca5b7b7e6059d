package restfacade

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/liststream"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/tracing"
)

// Route labels for requests that matched no route pattern. Together with the
// patterns of the OpenAPI description they are the only values the route
// label and log attribute take: never a raw path.
const (
	routeUnmatched    = "unmatched"    // 404 and 405 answered by the facade
	routeUndocumented = "undocumented" // routed, but absent from the description (a bug)
)

// probeRoutes are the routes of probes and scrapes: logged at DEBUG, so a
// kubelet and a Prometheus do not fill the log at INFO.
var probeRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// observation is what the layers below observe learn about one request:
// one record per request, so that they need no copy of the request to
// carry what they learn (net/http's WithContext copies it).
type observation struct {
	route, method, operation, path string
	body                           bodyState // what became of the body, once bodyWatched (watchBody)
	bodyWatched                    bool
	stream                         streamed // the list answer a handler may hand over (stream.go)
	caller                         any      // whom Options.Authenticate admitted to operation (SetCaller)
	// doc is the documented route recordRoute found (nil: undocumented),
	// once routed is set: the later middlewares read it instead of
	// finding it again.
	doc    *route
	routed bool
	w      statusWriter // the response writer the layers below write to

	// ctx is the request's context (requestContext), which carries the
	// record itself, the list answer's sink and the caller lookup memo:
	// one allocation for all of them, and one context node to pass on a
	// Value lookup for them.
	ctx  requestContext
	sink liststream.Sink
	memo credential.Memo // one caller lookup per request (see authenticate)
}

type observationKey struct{}

// requestContext is a request's context below observe: it answers the
// keys of its observation, the list answer's sink (liststream.Key) and
// the caller lookup memo (credential.MemoKey) from the record, and passes
// every other key to the context it was made from.
type requestContext struct {
	context.Context
	o *observation
}

func (c *requestContext) Value(key any) any {
	switch key {
	case observationKey{}:
		return c.o
	case liststream.Key:
		return &c.o.sink
	case credential.MemoKey:
		return &c.o.memo
	}
	return c.Context.Value(key)
}

// setRoute records the route pattern (or fixed name) r was served by.
func setRoute(r *http.Request, route string) {
	if o, ok := r.Context().Value(observationKey{}).(*observation); ok {
		o.route = route
	}
}

// Route returns the method and documented route pattern (such as
// /api/v1/llm-settings/{id}) of the REST request ctx belongs to, once the
// facade has routed it; ok is false outside a routed REST request. The
// audit log names actions by it.
func Route(ctx context.Context) (method, pattern string, ok bool) {
	o, found := ctx.Value(observationKey{}).(*observation)
	if !found || o.method == "" {
		return "", "", false
	}
	return o.method, o.route, true
}

// Operation returns the gRPC method (such as CreateAPI: the operationId's
// part after "Service_") serving the REST request ctx belongs to, once the
// facade has routed it; ok is false outside a routed REST request. A
// service's REST authentication reads the same rule by it as its gRPC
// authentication does.
func Operation(ctx context.Context) (string, bool) {
	o, found := ctx.Value(observationKey{}).(*observation)
	if !found || o.operation == "" {
		return "", false
	}
	return o.operation, true
}

// Path returns the path, as the client wrote it (percent-encoded), of the
// REST request ctx belongs to, once the facade has routed it to an RPC;
// ok is false outside such a request (a gRPC call over the network, a web
// UI page's calls). A handler names it in a 403. It is a context value of
// the facade's own, so no client can set it.
func Path(ctx context.Context) (string, bool) {
	o, found := ctx.Value(observationKey{}).(*observation)
	if !found || o.operation == "" {
		return "", false
	}
	return o.path, true
}

// SetCaller, in Options.Authenticate, keeps the caller the REST door found
// and admitted to the request's operation, so that the in-process call
// serving the request takes it from there (Caller) instead of finding it
// again from the same credentials. Outside a routed REST request it keeps
// nothing.
func SetCaller(ctx context.Context, caller any) {
	if o, ok := ctx.Value(observationKey{}).(*observation); ok && o.operation != "" {
		o.caller = caller
	}
}

// Caller returns the caller SetCaller kept when ctx is a routed REST
// request's and operation (such as CreateAPI) is the RPC its route maps
// to: only the call that serves the request, never a handler's other
// calls, takes the door's caller. The call is still authorized by its
// RPC's rule; the caller is only not looked up twice.
func Caller(ctx context.Context, operation string) (any, bool) {
	o, ok := ctx.Value(observationKey{}).(*observation)
	if !ok || o.caller == nil || o.operation == "" || o.operation != operation {
		return nil, false
	}
	return o.caller, true
}

// recordRoute is the first grpc-gateway middleware: it records the route
// pattern of the request the mux routed, as the OpenAPI description writes
// it (such as /api/v1/llm-settings/{id}).
func (f *facade) recordRoute(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		o, _ := r.Context().Value(observationKey{}).(*observation)
		if i := f.routes.find(r.Method, f.routePath(r)); i >= 0 {
			setRoute(r, f.routes[i].pattern)
			if o != nil {
				o.method, o.operation, o.path = r.Method, f.routes[i].ops[r.Method], r.URL.EscapedPath()
				o.doc = &f.routes[i]
			}
		} else {
			setRoute(r, routeUndocumented)
		}
		if o != nil {
			o.routed = true
		}
		next(w, r, params)
	}
}

// documented returns the documented route serving r, nil when none: the
// one recordRoute found, or else found now.
func (f *facade) documented(r *http.Request) *route {
	if o, ok := r.Context().Value(observationKey{}).(*observation); ok && o.routed {
		return o.doc
	}
	if i := f.routes.find(r.Method, f.routePath(r)); i >= 0 {
		return &f.routes[i]
	}
	return nil
}

// serverSpan are the start options of a request's span.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// observe wraps the facade so that every request has one server span (a
// W3C traceparent it carries continues its trace), one sample of the HTTP
// metrics by route pattern, and one log line with method, route, status,
// duration and trace id. Headers and bodies are never logged.
func observe(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := tracing.Extract(r.Context(), r.Header)
		ctx, span := tracing.Start(ctx, r.Method, serverSpan...)
		o := &observation{route: routeUnmatched}
		o.ctx = requestContext{Context: ctx, o: o}
		ctx = &o.ctx
		o.stream.sink = &o.sink // offered once routed to an RPC (offerStream)
		o.w.ResponseWriter = w
		method := metrics.HTTPMethod(r.Method)

		next.ServeHTTP(&o.w, r.WithContext(ctx))

		status := o.w.status
		if status == 0 {
			status = http.StatusOK
		}
		d := time.Since(start)
		if span.IsRecording() {
			span.SetName(method + " " + o.route)
			span.SetAttributes(
				attribute.String("http.request.method", method),
				attribute.String("http.route", o.route),
				attribute.Int("http.response.status_code", status),
			)
			if status >= 500 {
				span.SetStatus(otelcodes.Error, http.StatusText(status))
			}
		}
		span.End()
		metrics.ObserveHTTP(o.route, method, status, d)
		level := slog.LevelInfo
		switch {
		case probeRoutes[o.route]:
			level = slog.LevelDebug
		case status >= 500:
			level = slog.LevelError
		}
		// The record is made here, as Logger.LogAttrs makes it, without the
		// caller's program counter it looks up (1–2 % of a request's CPU):
		// the service's log handlers write no source (server.NewLogger).
		if h := log.Handler(); h.Enabled(ctx, level) {
			rec := slog.NewRecord(time.Now(), level, "http", 0)
			rec.AddAttrs(slog.String("method", method), slog.String("route", o.route), slog.Int("status", status),
				slog.Duration("duration", d), slog.String("trace_id", tracing.ID(ctx)))
			_ = h.Handle(ctx, rec)
		}
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets streamed answers through.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
