package restfacade

import (
	"log/slog"
	"net/http"
)

// routePublic is the route label of every request a Public handler serves.
const routePublic = "site"

// Public wraps a service's public pages (the portal's site), served on a
// listener of their own: one span, metric sample and log line per request,
// as the facade's, under the route label "site", and at most maxInFlight
// requests at once (0: DefaultMaxInFlight); one more is answered 503 with
// Retry-After. The handler answers every path itself: no /healthz, /metrics
// or API route is mixed in.
func Public(h http.Handler, log *slog.Logger, maxInFlight int) http.Handler {
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	inFlight := make(chan struct{}, maxInFlight)
	return observe(log.With("component", "site"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setRoute(r, routePublic)
		select {
		case inFlight <- struct{}{}:
			defer func() { <-inFlight }()
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "server busy, retry later", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
}
