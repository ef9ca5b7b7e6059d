package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"google.golang.org/protobuf/proto"
)

// BenchmarkPutRoundTrip is one REST PUT of a tutorial page: facade, gRPC
// hop, validation, one fsynced bbolt transaction, response.
func BenchmarkPutRoundTrip(b *testing.B) {
	p := newPortal(b)
	prod := p.product("bench")
	cat, tag := p.label("categories", "c"), p.label("tags", "t")
	id, _ := p.page(prod, `{"Title":"t"}`)
	body := fmt.Sprintf(`{"Title":"Getting started","Content":"%s","MarkdownEnabled":true,"Status":"published","Lede":"Short",`+
		`"Categories":[%q],"Tags":[%q],"MarkdownContent":"md","PreviewContent":"pre"}`, strings.Repeat("x", 2000), cat, tag)
	url := p.base + docPath(prod, id)
	client := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("PUT", url, strings.NewReader(body))
		req.Header.Set("Authorization", token)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}

// BenchmarkGRPCUpdate is the same update over gRPC, without the facade.
func BenchmarkGRPCUpdate(b *testing.B) {
	p := newPortal(b)
	prod := p.product("bench")
	id, _ := p.page(prod, `{"Title":"t"}`)
	req := &portalv1.UpdateTutorialPageRequest{ProductId: prod, DocId: id, Page: &portalv1.TutorialPageInput{
		Title: proto.String("Getting started"), Content: proto.String(strings.Repeat("x", 2000)), Status: proto.String("published")}}
	ctx := rpc()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.client.UpdateTutorialPage(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListPages1000 is one REST GET answering 1,000 tutorial pages.
func BenchmarkListPages1000(b *testing.B) {
	p := newPortal(b)
	prod := p.product("bench")
	cat, tag := p.label("categories", "c"), p.label("tags", "t")
	body := fmt.Sprintf(`{"Title":"A tutorial page","Content":"<p>Some content for the page</p>","Lede":"Short","Categories":[%q],"Tags":[%q]}`, cat, tag)
	for range 1000 {
		p.page(prod, body)
	}
	url := p.base + "/portal-api/products/" + prod + "/docs?per_page=1000"
	client := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", token)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || bytes.Count(got, []byte(`"Type":"tutorial"`)) != 1000 {
			b.Fatalf("status %d, %d bytes", res.StatusCode, len(got))
		}
	}
}

// BenchmarkPublicPage is one public page request end to end: HTTP, the
// store's outline and page reads, the cached 20 KB Markdown body, the
// template, the ETag hash.
func BenchmarkPublicPage(b *testing.B) {
	p := newPortal(b)
	prod := p.product("bench")
	for i := range 10 {
		p.page(prod, fmt.Sprintf(`{"Title":"Page %d","Status":"published"}`, i))
	}
	var md strings.Builder
	for md.Len() < 20<<10 {
		md.WriteString("## Step\n\nCall the **payments** API; see [the reference](https://example.com/ref).\n\n```go\nfunc main() { payments.Charge(100) }\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n")
	}
	body, _ := json.Marshal(md.String())
	id, _ := p.page(prod, `{"Title":"Guide","Status":"published","MarkdownEnabled":true,"MarkdownContent":`+string(body)+`}`)
	url := p.site + "/products/" + prod + "/docs/" + id
	client := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		res, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}
