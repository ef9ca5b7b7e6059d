package app

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/server/servertest"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// TestPageListStreams (issue 32): a product's page list answers every page
// with its content, written as it is read, one page at a time: 12 pages of
// 3 MiB (36 MiB answered) raise the heap by about 30 MiB — what one page
// costs on its way out (its record, message and JSON), not the list — and
// the answer holds what gRPC's one message does.
func TestPageListStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 36 MiB of pages")
	}
	p := newPortal(t)
	prod := p.product("big")
	for range 12 {
		p.page(prod, `{"Title":"t","Content":"`+strings.Repeat("c", 3<<20)+`"}`)
	}
	peak, size := servertest.GETPeak(t, p.base+"/portal-api/products/"+prod+"/docs?per_page=100", token)
	if peak > 40<<20 {
		t.Errorf("heap grew by %.1f MiB answering %.1f MiB, want under 40 MiB", float64(peak)/(1<<20), float64(size)/(1<<20))
	} else {
		t.Logf("%.1f MiB of pages answered: heap +%.1f MiB", float64(size)/(1<<20), float64(peak)/(1<<20))
	}
	r := p.do("GET", "/portal-api/products/"+prod+"/docs?per_page=100", "")
	p.expect(r, 200, "list pages")
	whole, err := p.client.ListTutorialPages(rpc(), &portalv1.ListTutorialPagesRequest{ProductId: prod, PerPage: proto.Int64(100)}, grpc.MaxCallRecvMsgSize(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := protojson.Marshal(whole)
	if n := strings.Count(string(r.body), `"Content":`); n != 12 || len(r.body) < 36<<20 || len(want) < 36<<20 {
		t.Errorf("streamed answer: %d pages, %d bytes; gRPC %d bytes", n, len(r.body), len(want))
	}
}
