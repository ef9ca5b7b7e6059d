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

// A body is read against two deadlines. It must keep arriving at the
// minimum rate of inflight.Progress (the first 64 KiB, or all of a smaller
// body, within 11 s, then each further 64 KiB within 10 s of the last);
// and all of it within BodyGrace plus its length at MinBodyRate (a 16 MiB
// body: 10 s + 256 s at 64 KiB/s; one of unknown length, chunked, gets the
// time of the largest). A client that announces a body and then sends
// nothing is cut off (408) after 11 s, one that trickles it after at most
// the whole body's time.
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
	busy     bool // found no room in the in-flight budget
	done     bool // read to its end (or there was none)
	// decodeErr is what the body's decoder refused it with (BodyDecoder),
	// for Options.RequestError: grpc-gateway passes on only its text.
	decodeErr error
}

// watchBody caps the body at MaxBody (bodies of unknown length included),
// sets the read deadline for it, and records in the request's context what
// happened to it.
func (f *facade) watchBody(w http.ResponseWriter, r *http.Request) *http.Request {
	done := r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody
	var state *bodyState
	if o, ok := r.Context().Value(observationKey{}).(*observation); ok {
		// the request's one record (observe), not a copy of the request
		o.body, o.bodyWatched = bodyState{done: done}, true
		state = &o.body
	} else {
		state = &bodyState{done: done}
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, state))
	}
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
	now := time.Now()
	wb := &watchedBody{ReadCloser: http.MaxBytesReader(w, r.Body, MaxBody), body: r.Body, w: w, state: state, rc: rc,
		end:      now.Add(f.limits.BodyGrace + time.Duration(size)*time.Second/time.Duration(f.limits.MinBodyRate)),
		progress: inflight.NewProgress(now)}
	wb.setDeadline(wb.progress.Deadline())
	r.Body = wb
	return r
}

type watchedBody struct {
	io.ReadCloser
	body  io.ReadCloser // the request's own, under the cap
	w     http.ResponseWriter
	state *bodyState
	rc    *http.ResponseController

	end      time.Time // the whole body's deadline
	read     int64     // bytes read so far
	progress inflight.Progress

	// hold, once the body is admitted (admitBody), grows as the body
	// arrives, up to max.
	ctx      context.Context
	hold     *inflight.Hold
	reserved int64
	max      int64
}

// setDeadline sets the connection's read deadline to t, or to the whole
// body's deadline when that comes first.
func (b *watchedBody) setDeadline(t time.Time) {
	if b.end.Before(t) {
		t = b.end
	}
	b.rc.SetReadDeadline(t)
}

// admitBody runs after authentication: a body over its operation's limit
// is refused (413) before it is read, one of unknown length is capped at
// that limit; then the body's bytes are held in the in-flight budget, for
// the caller's key, as they arrive (watchedBody.Read), until the request
// ends.
func (f *facade) admitBody(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		wb, ok := r.Body.(*watchedBody)
		if !ok || bodyOf(r.Context()).done {
			next(w, r, params)
			return
		}
		var op string
		if doc := f.documented(r); doc != nil {
			op = doc.ops[r.Method]
		}
		limit := f.limits.Bodies.Of(op)
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
			hold, err := f.limits.Budget.Acquire(r.Context(), inflight.Caller(r.Header.Get("Authorization")), 0)
			if err != nil {
				f.handleError(r.Context(), nil, nil, w, r, err)
				return
			}
			defer hold.Release()
			wb.ctx, wb.hold, wb.max = r.Context(), hold, size
		}
		next(w, r, params)
	}
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.hold != nil && b.read+int64(len(p)) > b.reserved && b.reserved < b.max {
		grow := min(max(b.read+int64(len(p))-b.reserved, inflight.GrowStep), b.max-b.reserved)
		if err := b.hold.Grow(b.ctx, grow); err != nil {
			b.state.busy = true
			return 0, err
		}
		b.reserved += grow
	}
	n, err := b.ReadCloser.Read(p)
	if b.read += int64(n); b.rc != nil && b.progress.Arrived(b.read) {
		b.setDeadline(b.progress.Deadline())
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		b.state.done = true
		// The rest of the request's life has no read deadline: net/http's
		// background read must not cancel a long handler.
		if b.rc != nil {
			b.rc.SetReadDeadline(time.Time{})
		}
	case isTooLarge(err):
		b.state.tooLarge = true
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.state.timedOut = true
	}
	return n, err
}

// isTooLarge reports whether err is http.MaxBytesReader's: a function of
// its own, so that the target errors.As needs is made only for an error
// (every Read's, to EOF included, was one allocation).
func isTooLarge(err error) bool {
	var tooLarge *http.MaxBytesError
	return errors.As(err, &tooLarge)
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
	if o, ok := ctx.Value(observationKey{}).(*observation); ok && o.bodyWatched {
		return &o.body
	}
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
