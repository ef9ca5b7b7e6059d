package restfacade

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/metadata"
)

// TestDirectMetadata: the direct path's incoming metadata is what
// grpc-gateway's AnnotateIncomingContext makes of the same request, for
// requests without Grpc-Metadata-* or *-Bin headers (the ones the direct
// path serves): repeated headers, forwarded hosts and addresses, values
// that are not printable ASCII, headers that are not canonical.
func TestDirectMetadata(t *testing.T) {
	mux := runtime.NewServeMux()
	requests := []func(r *http.Request){
		func(r *http.Request) {},
		func(r *http.Request) {
			r.Header.Set("Authorization", "key-1")
			r.Header.Set("User-Agent", "client/1")
			r.Header.Set("Accept-Encoding", "gzip")
			r.Header.Set("X-Custom", "v")
		},
		func(r *http.Request) {
			r.Header["Authorization"] = []string{"a", "b\x01", "c"}
			r.Header["Accept"] = []string{"application/json", "text/plain"}
			r.Header["cookie"] = []string{"x=1"}
			r.Header.Set("X-Forwarded-For", "192.0.2.1, 192.0.2.2")
			r.Header.Add("X-Forwarded-For", "192.0.2.3")
			r.Header.Set("X-Forwarded-Host", "example.test")
		},
		func(r *http.Request) {
			r.Header.Set("X-Forwarded-Host", "h\xffst")
			r.Header.Set("X-Forwarded-For", "caf\xc3\xa9")
			r.RemoteAddr = "[::1]:4000"
			r.Host = "host.test:80"
		},
		func(r *http.Request) { r.RemoteAddr, r.Host = "not an address", "" },
	}
	for i, change := range requests {
		for range 2 { // the second time, the metadata keys are the ones kept
			r := httptest.NewRequest("GET", "/api/things/7", nil)
			change(r)
			ctx, err := runtime.AnnotateIncomingContext(context.Background(), mux, r, "/x.Service/Get")
			if err != nil {
				t.Fatal(err)
			}
			want, _ := metadata.FromIncomingContext(ctx)
			if got := directMetadata(r); !maps.EqualFunc(got, want, slices.Equal) {
				t.Errorf("request %d: metadata %v, want grpc-gateway's %v", i, got, want)
			}
		}
	}
}
