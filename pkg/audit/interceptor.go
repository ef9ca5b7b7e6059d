package audit

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// action is what the OpenAPI description says of one RPC's REST route.
type action struct {
	method, pattern string
	success         int    // the first 2xx response listed
	param           string // the pattern's last path parameter, the object's id
}

// parseActions maps each operation (operationId Service_Method; an RPC's
// further bindings are Service_Method2, ...) to its route.
func parseActions(openapi []byte) (map[string]action, error) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi, &doc); err != nil {
		return nil, err
	}
	out := map[string]action{}
	for path, ops := range doc.Paths {
		for m, raw := range ops {
			var op struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			a := action{method: strings.ToUpper(m), pattern: path, success: successStatus(op.Responses)}
			if i := strings.LastIndex(path, "{"); i >= 0 {
				a.param, _, _ = strings.Cut(path[i+1:], "}")
			}
			out[op.OperationID] = a
		}
	}
	return out, nil
}

// successStatus is the lowest 2xx response an operation lists (200 when none).
func successStatus(responses map[string]json.RawMessage) int {
	best := 0
	for code := range responses {
		if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 && (best == 0 || n < best) {
			best = n
		}
	}
	if best == 0 {
		return http.StatusOK
	}
	return best
}

// action returns the action of fullMethod (/pkg.Service/Method), which
// actions keys as Service_Method; the key is built in a buffer on the
// stack (a map index by string(bytes) copies nothing).
func (l *Log) action(fullMethod string) (action, bool) {
	svc, m, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if i := strings.LastIndex(svc, "."); i >= 0 {
		svc = svc[i+1:]
	}
	var buf [128]byte
	k := append(append(append(buf[:0], svc...), '_'), m...)
	a, ok := l.actions[string(k)]
	return a, ok
}

// Interceptor audits every call of an RPC whose REST route writes (any
// method but GET). It belongs outside the authentication interceptor, which
// calls auditctx.SetCaller; a call that never got a caller is only counted when it
// failed authentication.
func (l *Log) Interceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		a, ok := l.action(info.FullMethod)
		if !ok || a.method == http.MethodGet {
			resp, err := next(ctx, req)
			if status.Code(err) == codes.Unauthenticated {
				metrics.CountAuthFailure(l.opts.Service)
			}
			return resp, err
		}
		if m, p, ok := restfacade.Route(ctx); ok {
			a.method, a.pattern = m, p // the REST binding actually called
		}
		now := time.Now().UTC()
		r := newRecord(Entry{ID: newID(now), Time: now, Action: a.method + " " + a.pattern,
			ObjectID: l.object(a.param, field(req, a.param)), RemoteAddr: remoteAddr(ctx)})
		r.success = a.success
		resp, err := next(withRecord(ctx, r), req)
		l.finish(ctx, r, err)
		return resp, err
	}
}

// finish stores the entry of a request no transaction recorded.
func (l *Log) finish(ctx context.Context, r *record, err error) {
	e, caller := r.current()
	r.mu.Lock()
	written := r.written
	r.mu.Unlock()
	switch {
	case written:
		return
	case !caller:
		if status.Code(err) == codes.Unauthenticated {
			metrics.CountAuthFailure(l.opts.Service)
		}
		return
	case err == nil:
		e.Status = r.success
		l.store(ctx, e)
		return
	}
	e.Status = httpStatus(err)
	if !l.refused.allow(e.UserID, e.Time) {
		metrics.CountAuditDropped(l.opts.Service)
		return
	}
	l.store(ctx, e)
}

// httpStatus is the REST status a handler's error answers.
func httpStatus(err error) int {
	st := status.Convert(err)
	if code, _, ok := rest.Detail(st); ok {
		return code
	}
	return rest.HTTPStatus(st.Code())
}

// REST wraps the facade's authentication hook (restfacade.Options.Authenticate),
// so that a write request it refuses with a caller known (403 before the
// body is read) is audited too, and one without valid credentials counted.
func (l *Log) REST(check func(*http.Request) error) func(*http.Request) error {
	return func(req *http.Request) error {
		if req.Method == http.MethodGet || req.Method == http.MethodHead {
			err := check(req)
			if status.Code(err) == codes.Unauthenticated {
				metrics.CountAuthFailure(l.opts.Service)
			}
			return err
		}
		now := time.Now().UTC()
		r := newRecord(Entry{ID: newID(now), Time: now, RemoteAddr: hostOf(req.RemoteAddr)})
		err := check(req.WithContext(withRecord(req.Context(), r)))
		if err == nil {
			return nil
		}
		_, pattern, _ := restfacade.Route(req.Context())
		r.mu.Lock()
		r.entry.Action = req.Method + " " + pattern
		r.mu.Unlock()
		r.req.SetObject(l.object(lastParam(pattern, req.URL.Path)))
		l.finish(req.Context(), r, err)
		return err
	}
}

// lastParam is pattern's last {parameter} and the path segment where it stands.
func lastParam(pattern, path string) (param, value string) {
	ps, segs := strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(segs) {
		return "", ""
	}
	for i := len(ps) - 1; i >= 0; i-- {
		if strings.HasPrefix(ps[i], "{") {
			return strings.Trim(ps[i], "{}"), segs[i]
		}
	}
	return "", ""
}

// object is the object id an entry records for a path parameter's value:
// the value, or what Options.Conceal makes of it.
func (l *Log) object(param, value string) string {
	if f := l.opts.Conceal[param]; f != nil && value != "" {
		return f(value)
	}
	return value
}

// field reads the request's string field named name (its proto or JSON name).
func field(req any, name string) string {
	m, ok := req.(proto.Message)
	if !ok || name == "" {
		return ""
	}
	msg := m.ProtoReflect()
	fd := msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		fd = msg.Descriptor().Fields().ByJSONName(name)
	}
	if fd == nil || fd.IsList() || fd.IsMap() {
		return ""
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return msg.Get(fd).String()
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Int32Kind, protoreflect.Int64Kind:
		return msg.Get(fd).String()
	}
	return ""
}

// remoteAddr is the client's address: the network peer of a gRPC call, or,
// for a REST call through the in-process facade, the address grpc-gateway
// appends last to x-forwarded-for (earlier values are the client's own).
func remoteAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return hostOf(p.Addr.String())
	}
	v := metadata.ValueFromIncomingContext(ctx, "x-forwarded-for")
	if len(v) == 0 {
		return ""
	}
	last := v[len(v)-1]
	if i := strings.LastIndex(last, ","); i >= 0 {
		last = last[i+1:]
	}
	return strings.TrimSpace(last)
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
