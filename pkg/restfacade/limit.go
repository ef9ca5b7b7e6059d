package restfacade

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/inflight"
)

// A body is read against a deadline sized for it: BodyGrace plus its length
// at MinBodyRate (a 16 MiB body: 10 s + 256 s at 64 KiB/s), so a client
// that announces a body and then trickles it, or stops, is cut off instead
// of holding the connection for as long as it likes. A body of unknown
// length (chunked) gets the time of the largest one.
const (
	DefaultBodyGrace   = 10 * time.Second
	DefaultMinBodyRate = 64 << 10 // bytes per second
)

type bodyKey struct{}

// bodyState records what became of a request's body, for the error handler
// and for the decision to close the connection.
type bodyState struct {
	tooLarge bool // went over MaxBody
	timedOut bool // the read deadline passed
	done     bool // read to its end (or there was none)
	// decodeErr is what the body's decoder refused it with (BodyDecoder),
	// for Options.RequestError: grpc-gateway passes on only its text.
	decodeErr error
}

// watchBody caps the body at MaxBody (bodies of unknown length included),
// sets the read deadline for it, and records in the request's context what
// happened to it.
func (f *facade) watchBody(w http.ResponseWriter, r *http.Request) *http.Request {
	state := &bodyState{done: r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody}
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, state))
	if state.done {
		if r.Body == nil {
			r.Body = http.NoBody
		}
		r.Body = &watchedBody{ReadCloser: r.Body, state: state} // for BodyDecoder
		return r
	}
	rc := http.NewResponseController(w)
	size := r.ContentLength
	if size < 0 {
		size = MaxBody
	}
	rc.SetReadDeadline(time.Now().Add(f.limits.BodyGrace + time.Duration(size)*time.Second/time.Duration(f.limits.MinBodyRate)))
	r.Body = &watchedBody{ReadCloser: http.MaxBytesReader(w, r.Body, MaxBody), body: r.Body, w: w, state: state, rc: rc}
	return r
}

type watchedBody struct {
	io.ReadCloser
	body  io.ReadCloser // the request's own, under the cap
	w     http.ResponseWriter
	state *bodyState
	rc    *http.ResponseController
}

// admitBody runs after authentication: a body over its operation's limit
// is refused (413) before it is read, one of unknown length is capped at
// that limit; then the body's bytes are admitted against the in-flight
// budget, held until the request ends.
func (f *facade) admitBody(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		wb, ok := r.Body.(*watchedBody)
		if !ok || bodyOf(r.Context()).done {
			next(w, r, params)
			return
		}
		limit := f.limits.Bodies.Of(f.routes.operation(r.Method, r.URL.Path))
		if r.ContentLength > limit {
			f.writeError(w, r, http.StatusRequestEntityTooLarge, []string{bodylimit.Message})
			return
		}
		wb.ReadCloser = http.MaxBytesReader(wb.w, wb.body, limit)
		size := r.ContentLength
		if size < 0 {
			size = limit
		}
		if f.limits.Budget != nil {
			hold, err := f.limits.Budget.Acquire(r.Context(), size)
			if err != nil {
				if errors.Is(err, inflight.ErrBusy) {
					w.Header().Set("Retry-After", inflight.RetryAfter)
				}
				f.handleError(r.Context(), nil, nil, w, r, err)
				return
			}
			defer hold.Release()
		}
		next(w, r, params)
	}
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		b.state.done = true
		// The rest of the request's life has no read deadline: net/http's
		// background read must not cancel a long handler.
		if b.rc != nil {
			b.rc.SetReadDeadline(time.Time{})
		}
	case errors.As(err, &tooLarge):
		b.state.tooLarge = true
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.state.timedOut = true
	}
	return n, err
}

// BodyDecoder reads a request body whole (the facade caps its size and
// time) and decodes it with decode. When decode refuses it, the facade
// keeps the error as decode returned it, for Options.RequestError, which so
// sees a structured error rather than the text grpc-gateway passes on.
func BodyDecoder(r io.Reader, decode func(data []byte, v any) error) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		err = decode(data, v)
		if b, ok := r.(*watchedBody); ok && err != nil {
			b.state.decodeErr = err
		}
		return err
	})
}

func bodyOf(ctx context.Context) *bodyState {
	state, _ := ctx.Value(bodyKey{}).(*bodyState)
	if state == nil {
		return &bodyState{done: true}
	}
	return state
}

// closeUnread makes a response close the connection when the request's
// body was not read to its end: net/http would otherwise read (up to 256
// KiB of) the rest before answering, at the pace of the client.
func closeUnread(ctx context.Context, w http.ResponseWriter) {
	if !bodyOf(ctx).done {
		w.Header().Set("Connection", "close")
	}
}
