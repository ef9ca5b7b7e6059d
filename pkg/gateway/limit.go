package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
)

type limitKey struct{}

// limitHit records that a request's body went over MaxBody.
type limitHit struct{ hit bool }

// limitBody caps the body at MaxBody (bodies of unknown length included) and
// remembers in the request's context when the cap was hit, for handleError.
func limitBody(w http.ResponseWriter, r *http.Request) *http.Request {
	state := &limitHit{}
	r = r.WithContext(context.WithValue(r.Context(), limitKey{}, state))
	r.Body = &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, MaxBody), state: state}
	return r
}

type limitedBody struct {
	io.ReadCloser
	state *limitHit
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		b.state.hit = true
	}
	return n, err
}

func bodyTooLarge(r *http.Request) bool {
	state, _ := r.Context().Value(limitKey{}).(*limitHit)
	return state != nil && state.hit
}
