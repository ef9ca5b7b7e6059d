package gateway

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/metadata"
)

// TestIncomingHeader: a REST call's gRPC metadata holds its one Authorization
// and the permanent headers, never what a caller sends as Grpc-Metadata-*
// (issue 18 row 9: a second authorization value refused every REST call on
// etcd with authentication).
func TestIncomingHeader(t *testing.T) {
	mux := runtime.NewServeMux(runtime.WithIncomingHeaderMatcher(incomingHeader))
	r := httptest.NewRequest("GET", "/api/v1/x", nil)
	r.Header.Set("Authorization", "Bearer key")
	r.Header.Set("Accept", "application/json")
	r.Header.Set("Grpc-Metadata-Authorization", "Bearer caller")
	r.Header.Set("Grpc-Metadata-Token", "caller-token")
	r.Header.Set("X-Other", "x")
	ctx, err := runtime.AnnotateContext(context.Background(), mux, r, "/p.S/M")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	if got := md.Get("authorization"); !slices.Equal(got, []string{"Bearer key"}) {
		t.Errorf("authorization %q, want the Authorization header alone", got)
	}
	if got := md.Get("grpcgateway-accept"); !slices.Equal(got, []string{"application/json"}) {
		t.Errorf("grpcgateway-accept %q, want the Accept header", got)
	}
	for _, k := range []string{"token", "x-other"} {
		if got := md.Get(k); got != nil {
			t.Errorf("%s %q forwarded, want nothing", k, got)
		}
	}
}
