package servertest

import (
	"io"
	"net/http"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/heaptest"
)

// GETPeak sends GET url with the Authorization value auth, reads the
// whole answer, which must be 200, and returns the most heap that took
// above idle (heaptest.Peak) and the answer's size: the figure of a list
// answer's memory bound.
func GETPeak(tb testing.TB, url, auth string) (peak uint64, size int64) {
	tb.Helper()
	peak = heaptest.Peak(func() {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", auth)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			body, _ := io.ReadAll(io.LimitReader(res.Body, 300))
			tb.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
		}
		size, _ = io.Copy(io.Discard, res.Body)
	})
	return peak, size
}
