package restfacade

import (
	"net/http"
	"net/url"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
)

// readIntQuery passes a route's integer query parameters through
// Options.QueryInt before grpc-gateway reads the query into the request
// message: each value is replaced by the decimal integer QueryInt returns,
// dropped when it returns "", and an error it returns is the answer. A query
// that does not parse is left to grpc-gateway, which answers it 400.
func (f *facade) readIntQuery(next runtime.HandlerFunc) runtime.HandlerFunc {
	if f.opts.QueryInt == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		var names []string
		if doc := f.documented(r); doc != nil && r.URL.RawQuery != "" {
			names = doc.ints[r.Method]
		}
		if len(names) == 0 {
			next(w, r, params)
			return
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			next(w, r, params)
			return
		}
		for _, name := range names {
			texts, ok := q[name]
			if !ok {
				continue
			}
			var vals []string
			for _, text := range texts {
				v, err := f.opts.QueryInt(name, text)
				if err != nil {
					f.handleError(r.Context(), nil, nil, w, r, err)
					return
				}
				if v != "" {
					vals = append(vals, v)
				}
			}
			if len(vals) == 0 {
				delete(q, name)
			} else {
				q[name] = vals
			}
		}
		r.URL.RawQuery = q.Encode()
		next(w, r, params)
	}
}
