package restfacade

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/gatehouse/gatehouse/pkg/idsize"
)

// Path and query parameters reach the handlers as protobuf strings, which
// must be valid UTF-8: a client's %FF would otherwise reach a handler as
// text no gRPC client could send (and fail any later marshalling with a 500). The facade replaces each invalid byte sequence with U+FFFD, so
// the handler answers the parameter as it answers any other malformed or
// unknown value (400 or 404 as the route says).

// validPathParams is the first middleware of every route. Every path
// parameter is an identifier: one over idsize.Max bytes is answered 400
// naming it, before the request is authenticated or audited.
func (f *facade) validPathParams(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		for k, v := range params {
			if len(v) > idsize.Max {
				f.handleError(r.Context(), nil, nil, w, r, idsize.Error(k))
				return
			}
			if !utf8.ValidString(v) {
				params[k] = strings.ToValidUTF8(v, "\uFFFD")
			}
		}
		next(w, r, params)
	}
}

// validQuery rewrites a query string whose names or values are not valid
// UTF-8 once decoded. A query that does not parse is left to grpc-gateway,
// which answers it 400.
func validQuery(r *http.Request) {
	raw := r.URL.RawQuery
	if raw == "" {
		return
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return
	}
	clean := true
	for k, vs := range q {
		clean = clean && utf8.ValidString(k)
		for _, v := range vs {
			clean = clean && utf8.ValidString(v)
		}
	}
	if clean {
		return
	}
	fixed := make(url.Values, len(q))
	for k, vs := range q {
		k = strings.ToValidUTF8(k, "\uFFFD")
		for _, v := range vs {
			fixed[k] = append(fixed[k], strings.ToValidUTF8(v, "\uFFFD"))
		}
	}
	r.URL.RawQuery = fixed.Encode()
}
