package restfacade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The direct path. grpc-gateway serves a route by trying the patterns of
// the request's method one by one, then its generated handler builds the
// call's metadata from every header (AnnotateContext), a cancelable
// context, the request message, a client call that grpcserver.Local turns
// back into a server call (outgoing metadata copied to incoming, the
// request copied), and writes the answer (ForwardResponseMessage). For
// the routes of one kind the facade does that work itself, from a table
// it builds at start from the service's google.api.http rules:
//
//   - which routes: a unary RPC's binding (its rule or an additional
//     binding) with no body and no response_body, whose path is literal
//     segments and {field} variables naming top-level string fields of the
//     request; every other route stays grpc-gateway's;
//   - which requests: a path of unreserved characters only (letters,
//     digits, - . _ ~) in non-empty segments, so that it reads the same
//     escaped or not, and no Grpc-Metadata-* or *-Bin header (gRPC
//     metadata a client passes on, which grpc-gateway decodes and may
//     refuse); every other request goes to grpc-gateway;
//   - which route serves a request: the one grpc-gateway's mux would
//     pick, since the table keeps its order (the last registered binding
//     first) and hands the request to grpc-gateway when that binding is
//     not a direct one.
//
// A direct request runs the same middlewares in the same order, gets the
// same request message (path variables, then the query read by
// runtime.PopulateQueryParameters with the same filter, when the request
// has fields the path does not set), the same incoming metadata
// (directMetadata), the same interceptor chain (grpcserver.Local.Serve)
// and the same answer: the handler's headers, the content type, the
// forward-response options, the streamed or kept answer, and errors
// through the facade's one error handler. TestDirect in each service's
// app package answers every direct route both ways and compares.

// directConn is the connection a facade calls directly over: grpcserver.Local.
type directConn interface {
	Serve(ctx context.Context, method string, md metadata.MD, req proto.Message) (proto.Message, metadata.MD, error)
}

// directOff, when set, sends every request to grpc-gateway (SetDirect).
var directOff atomic.Bool

// SetDirect turns the direct path of every facade in the process on (the
// default) or off. The comparison tests answer the same request both ways.
func SetDirect(on bool) { directOff.Store(!on) }

// directRoute is one HTTP binding of an RPC, in the table.
type directRoute struct {
	method   string   // HTTP method
	pattern  string   // the rule's path, such as /api/apis/{api_id}
	segments []string // the path's segments; "" where a variable stands
	simple   bool     // literal segments and {name} variables: matched here
	served   bool     // served by the direct path; else its place in the order only
	rpc      string   // full method name, /package.Service/Method
	request  protoreflect.MessageType
	params   []directParam
	// query, when the request has fields the path does not set, is the
	// filter of the fields the query may not set (the path's).
	query   *utilities.DoubleArray
	handler runtime.HandlerFunc // the middlewares around callDirect
}

type directParam struct {
	segment int
	name    string
	field   protoreflect.FieldDescriptor
}

// directTable holds the bindings by HTTP method, in the order grpc-gateway's
// mux tries them.
type directTable map[string][]*directRoute

// newDirectTable reads service's google.api.http rules, in the order the
// generated handlers register them.
func newDirectTable(service string) (directTable, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
	if err != nil {
		return nil, err
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", service)
	}
	t := directTable{}
	methods := sd.Methods()
	for i := range methods.Len() {
		md := methods.Get(i)
		rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
		if rule == nil {
			continue
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			return nil, err
		}
		rpc := "/" + string(sd.FullName()) + "/" + string(md.Name())
		unary := !md.IsStreamingClient() && !md.IsStreamingServer()
		for _, b := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
			rt := newDirectRoute(b, rpc, mt, unary)
			if rt.method == "" {
				continue // a custom verb grpc-gateway does not route either
			}
			t[rt.method] = append([]*directRoute{rt}, t[rt.method]...) // the last registered first, as the mux
		}
	}
	return t, nil
}

func newDirectRoute(b *annotations.HttpRule, rpc string, mt protoreflect.MessageType, unary bool) *directRoute {
	rt := &directRoute{rpc: rpc, request: mt}
	var path string
	switch p := b.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		rt.method, path = http.MethodGet, p.Get
	case *annotations.HttpRule_Put:
		rt.method, path = http.MethodPut, p.Put
	case *annotations.HttpRule_Post:
		rt.method, path = http.MethodPost, p.Post
	case *annotations.HttpRule_Delete:
		rt.method, path = http.MethodDelete, p.Delete
	case *annotations.HttpRule_Patch:
		rt.method, path = http.MethodPatch, p.Patch
	case *annotations.HttpRule_Custom:
		rt.method, path = p.Custom.GetKind(), p.Custom.GetPath()
	}
	rt.pattern = path
	if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, ":*=.") {
		return rt // not simple: grpc-gateway matches it
	}
	rt.simple = true
	fields := mt.Descriptor().Fields()
	bound := map[protoreflect.FullName]bool{}
	served := unary && b.GetBody() == "" && b.GetResponseBody() == ""
	var filter [][]string
	for i, seg := range strings.Split(path[1:], "/") {
		name, isVar := strings.CutPrefix(seg, "{")
		if !isVar {
			rt.segments = append(rt.segments, seg)
			continue
		}
		name = strings.TrimSuffix(name, "}")
		rt.segments = append(rt.segments, "")
		fd := fields.ByName(protoreflect.Name(name))
		if fd == nil || fd.Kind() != protoreflect.StringKind || fd.Cardinality() == protoreflect.Repeated || fd.ContainingOneof() != nil {
			served = false
			continue
		}
		rt.params = append(rt.params, directParam{segment: i, name: name, field: fd})
		bound[fd.FullName()] = true
		filter = append(filter, []string{name})
	}
	rt.served = served
	if len(bound) < fields.Len() {
		rt.query = utilities.NewDoubleArray(filter)
	}
	return rt
}

// DirectRoutes lists the routes of service (a full name, as
// Options.Service) that the direct path serves, as method and pattern
// ("GET /api/apis/{api_id}"), for the tests that compare its answers with
// grpc-gateway's.
func DirectRoutes(service string) ([]string, error) {
	t, err := newDirectTable(service)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rts := range t {
		for _, rt := range rts {
			if rt.served {
				out = append(out, rt.method+" "+rt.pattern)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// find returns the direct route serving r with its path parameters, or
// nil when grpc-gateway serves r.
func (t directTable) find(r *http.Request) (*directRoute, map[string]string) {
	routes := t[r.Method]
	if len(routes) == 0 || directOff.Load() || r.URL.RawPath != "" || !plainPath(r.URL.Path) {
		return nil, nil
	}
	for key := range r.Header {
		key = textproto.CanonicalMIMEHeaderKey(key)
		if strings.HasPrefix(key, runtime.MetadataHeaderPrefix) || strings.HasSuffix(key, "-Bin") {
			return nil, nil
		}
	}
	path := r.URL.Path[1:]
	n := strings.Count(path, "/") + 1
	for _, rt := range routes {
		if !rt.simple {
			return nil, nil // it may match: grpc-gateway decides
		}
		if !rt.matches(path, n) {
			continue
		}
		if !rt.served {
			return nil, nil
		}
		if len(rt.params) == 0 {
			return rt, nil // read only, as an empty map is (validPathParams, callDirect)
		}
		params := make(map[string]string, len(rt.params))
		for _, p := range rt.params {
			params[p.name] = segment(path, p.segment)
		}
		return rt, params
	}
	return nil, nil // no route: grpc-gateway answers 404 or 405
}

// matches reports whether path (without its leading slash), of n
// segments, matches rt's literal segments.
func (rt *directRoute) matches(path string, n int) bool {
	if n != len(rt.segments) {
		return false
	}
	for _, s := range rt.segments {
		seg, rest, _ := strings.Cut(path, "/")
		if s != "" && s != seg {
			return false
		}
		path = rest
	}
	return true
}

// segment returns path's i-th segment (from 0).
func segment(path string, i int) string {
	for range i {
		_, path, _ = strings.Cut(path, "/")
	}
	seg, _, _ := strings.Cut(path, "/")
	return seg
}

// plainPath reports whether path is "/" followed by non-empty segments of
// unreserved characters (RFC 3986: letters, digits, - . _ ~).
func plainPath(path string) bool {
	if len(path) < 2 || path[0] != '/' || path[len(path)-1] == '/' {
		return false
	}
	for i := 1; i < len(path); i++ {
		c := path[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
		case c == '/' && path[i-1] != '/':
		default:
			return false
		}
	}
	return true
}

// callDirect serves a direct route: the request message, the call and
// the answer, as the generated handler and ForwardResponseMessage do.
func (f *facade) callDirect(rt *directRoute) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		out := f.marshaler(r)
		req := rt.request.New()
		for _, p := range rt.params {
			v, ok := params[p.name]
			if !ok {
				f.handleError(r.Context(), f.mux, out, w, r, status.Errorf(codes.InvalidArgument, "missing parameter %s", p.name))
				return
			}
			req.Set(p.field, protoreflect.ValueOfString(v))
		}
		if rt.query != nil {
			if err := r.ParseForm(); err != nil {
				f.handleError(r.Context(), f.mux, out, w, r, status.Errorf(codes.InvalidArgument, "%v", err))
				return
			}
			if err := runtime.PopulateQueryParameters(req.Interface(), r.Form, rt.query); err != nil {
				f.handleError(r.Context(), f.mux, out, w, r, status.Errorf(codes.InvalidArgument, "%v", err))
				return
			}
		}
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		resp, header, err := f.direct.Serve(r.Context(), rt.rpc, directMetadata(r), req.Interface())
		ctx := r.Context()
		if len(header) > 0 { // none: what reads it (forward, forwardStatus) finds nothing either way
			ctx = runtime.NewServerMetadataContext(ctx, runtime.ServerMetadata{HeaderMD: header})
		}
		if err != nil {
			f.handleError(ctx, f.mux, out, w, r, err)
			return
		}
		f.forward(ctx, w, r, out, resp)
	}
}

// forward writes a direct route's answer as runtime.ForwardResponseMessage
// does with the facade's options: the headers the handler set (through
// outgoingHeader), chunked when the client accepts trailers (no trailer
// passes the facade's matcher), the marshaler's content type, the
// forward-response options, the streamed or kept answer (sendStream).
func (f *facade) forward(ctx context.Context, w http.ResponseWriter, r *http.Request, out runtime.Marshaler, resp proto.Message) {
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		for k, vs := range md.HeaderMD {
			if h, ok := outgoingHeader(k); ok {
				for _, v := range vs {
					w.Header().Add(h, v)
				}
			}
		}
	}
	if strings.Contains(strings.ToLower(r.Header.Get("TE")), "trailers") {
		w.Header().Set("Transfer-Encoding", "chunked")
	}
	w.Header().Set("Content-Type", out.ContentType(resp))
	for _, opt := range f.mux.GetForwardResponseOptions() {
		if err := opt(ctx, w, resp); err != nil {
			f.handleError(ctx, f.mux, out, w, r, fmt.Errorf("error handling ForwardResponseOptions: %w", err))
			return
		}
	}
	answer, err := f.sendStream(ctx, resp)
	if err != nil {
		grpclog.Errorf("Rewrite error: %v", err)
		f.handleError(ctx, f.mux, out, w, r, err)
		return
	}
	buf, err := out.Marshal(answer)
	if err != nil {
		grpclog.Errorf("Marshal error: %v", err)
		f.handleError(ctx, f.mux, out, w, r, err)
		return
	}
	if _, err := w.Write(buf); err != nil && !errors.Is(err, http.ErrBodyNotAllowed) {
		grpclog.Errorf("Failed to write response: %v", err)
	}
}

// directMetadata is the incoming metadata grpc-gateway's AnnotateContext
// gives a call, for a request without Grpc-Metadata-* or *-Bin headers
// (directTable.find): the authorization header as it is, the permanent
// HTTP headers prefixed grpcgateway- (runtime.DefaultHeaderMatcher),
// x-forwarded-host (the header, else the request's host) and
// x-forwarded-for (the header's values, then the client's address); a
// value that is not printable ASCII is left out.
func directMetadata(r *http.Request) metadata.MD {
	n := 2
	for _, vals := range r.Header {
		n += 2 * len(vals)
	}
	md := make(metadata.MD, len(r.Header)+3)
	one := make([]string, 0, n) // the backing of the keys' first values
	add := func(k, v string) {
		if vals, ok := md[k]; ok {
			md[k] = append(vals, v)
			return
		}
		one = append(one, v)
		md[k] = one[len(one)-1 : len(one) : len(one)]
	}
	for key, vals := range r.Header {
		key = textproto.CanonicalMIMEHeaderKey(key)
		if key == "X-Forwarded-For" || key == "X-Forwarded-Host" {
			continue
		}
		h, mapped := mdKey(key)
		for _, v := range vals {
			if !printable(v) {
				continue
			}
			if key == "Authorization" {
				add("authorization", v)
			}
			if mapped {
				add(h, v)
			}
		}
	}
	if host := r.Header.Get("X-Forwarded-Host"); host != "" && printable(host) {
		add("x-forwarded-host", host)
	} else if r.Host != "" && printable(r.Host) {
		add("x-forwarded-host", r.Host)
	}
	xff := r.Header.Values("X-Forwarded-For")
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err == nil {
		xff = append(xff[:len(xff):len(xff)], host)
	}
	if v := strings.Join(xff, ", "); len(xff) > 0 && printable(v) {
		add("x-forwarded-for", v)
	}
	return md
}

// mdKeys holds the metadata key, lower-cased, of each header
// runtime.DefaultHeaderMatcher maps: the permanent HTTP headers, a closed
// set (directTable.find leaves Grpc-Metadata-* headers to grpc-gateway).
var mdKeys sync.Map

// mdKey is runtime.DefaultHeaderMatcher's key for the canonical header
// key, lower-cased as metadata keeps it.
func mdKey(key string) (string, bool) {
	if h, ok := mdKeys.Load(key); ok {
		return h.(string), true
	}
	h, ok := runtime.DefaultHeaderMatcher(key)
	if !ok {
		return "", false
	}
	h = strings.ToLower(h)
	if strings.HasPrefix(h, runtime.MetadataPrefix) { // a permanent header's: kept
		mdKeys.Store(key, h)
	}
	return h, true
}

// printable reports whether v is a gRPC metadata text value: bytes 0x20
// to 0x7E.
func printable(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7E {
			return false
		}
	}
	return true
}
