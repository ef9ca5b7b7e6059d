package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"time"
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
}

// watchBody caps the body at MaxBody (bodies of unknown length included),
// sets the read deadline for it, and records in the request's context what
// happened to it.
func (f *facade) watchBody(w http.ResponseWriter, r *http.Request) *http.Request {
	state := &bodyState{done: r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody}
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, state))
	if state.done {
		return r
	}
	rc := http.NewResponseController(w)
	size := r.ContentLength
	if size < 0 {
		size = MaxBody
	}
	rc.SetReadDeadline(time.Now().Add(f.limits.BodyGrace + time.Duration(size)*time.Second/time.Duration(f.limits.MinBodyRate)))
	r.Body = &watchedBody{ReadCloser: http.MaxBytesReader(w, r.Body, MaxBody), state: state, rc: rc}
	return r
}

type watchedBody struct {
	io.ReadCloser
	state *bodyState
	rc    *http.ResponseController
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
		b.rc.SetReadDeadline(time.Time{})
	case errors.As(err, &tooLarge):
		b.state.tooLarge = true
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.state.timedOut = true
	}
	return n, err
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
