package restfacade

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gatehouse/gatehouse/pkg/inflight"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// handleError renders every error of a routed request in the service's shape.
// A handler's error carries its HTTP status (pkg/rest); an error without that
// detail never reached a handler: an unreadable request, an over-size body,
// or the gRPC server being unreachable.
func (f *facade) handleError(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	var httpErr *runtime.HTTPStatusError
	if errors.As(err, &httpErr) {
		f.handleRoutingError(r.Context(), nil, nil, w, r, httpErr.HTTPStatus)
		return
	}
	st := status.Convert(err)
	if code, msgs, ok := rest.Detail(st); ok {
		f.writeError(w, r, code, msgs)
		return
	}
	switch body := bodyOf(r.Context()); {
	case body.tooLarge:
		f.writeError(w, r, http.StatusRequestEntityTooLarge, []string{"request body too large"})
	case body.busy:
		w.Header().Set("Retry-After", inflight.RetryAfter)
		code, msgs, _ := rest.Detail(status.Convert(inflight.ErrBusy))
		f.writeError(w, r, code, msgs)
	case body.timedOut:
		f.writeError(w, r, http.StatusRequestTimeout, []string{"the request body did not arrive in time"})
	case st.Code() == codes.InvalidArgument && f.opts.RequestError != nil:
		if body.decodeErr != nil {
			err = body.decodeErr
		}
		code, msgs := f.opts.RequestError(r, err)
		f.writeError(w, r, code, msgs)
	case st.Code() == codes.InvalidArgument:
		f.writeError(w, r, http.StatusBadRequest, []string{cleanDecodeError(st.Message())})
	default:
		code := rest.HTTPStatus(st.Code())
		f.writeError(w, r, code, []string{strings.ToLower(http.StatusText(code))})
	}
}

// handleRoutingError answers paths the facade does not serve (404) and known
// paths asked with another method (405, with the methods it serves in Allow).
func (f *facade) handleRoutingError(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	if code == http.StatusMethodNotAllowed {
		if allow := f.routes.allowed(f.routePath(r)); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
		}
	}
	f.writeError(w, r, code, []string{http.StatusText(code)})
}

// cleanDecodeError turns a decoder's message into a sentence for a client.
func cleanDecodeError(msg string) string {
	msg = strings.TrimPrefix(msg, "proto:")
	msg = strings.TrimSpace(strings.ReplaceAll(msg, "\u00a0", " "))
	if strings.HasPrefix(msg, "the request body") {
		return msg
	}
	return "invalid request body: " + msg
}
