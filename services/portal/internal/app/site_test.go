package app

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// get fetches a public page from the site listener, without credentials.
func (p *portal) get(method, path string, header ...string) reply {
	p.t.Helper()
	req, err := http.NewRequest(method, p.site+path, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultTransport.RoundTrip(req) // no redirects followed
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return reply{res.StatusCode, res.Header, b}
}

func (p *portal) html(path string, want ...string) reply {
	p.t.Helper()
	r := p.get("GET", path)
	if r.status != 200 {
		p.t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	for _, w := range want {
		if !strings.Contains(string(r.body), w) {
			p.t.Errorf("GET %s lacks %q:\n%s", path, w, r.body)
		}
	}
	return r
}

func TestPublicPages(t *testing.T) {
	p := newPortal(t)
	prod := p.id(p.expect(p.do("POST", "/portal-api/products", `{"Name":"payments","DisplayName":"Payments API","Description":"Take card payments."}`), 201, "product"))
	hidden := p.product("drafts-only")
	p.page(hidden, `{"Title":"Draft elsewhere"}`)
	cat := p.label("categories", "Guides")
	intro, _ := p.page(prod, `{"Title":"Introduction","Status":"published","Lede":"Start here","Content":"<h2>Why</h2><p>Because.</p>","Categories":["`+cat+`"]}`)
	draft, _ := p.page(prod, `{"Title":"Secret draft","Status":"draft","Content":"<p>unreleased</p>","Path":"secret"}`)
	review, _ := p.page(prod, `{"Title":"In review","Status":"review"}`)
	md, _ := p.page(prod, `{"Title":"Quick start","Status":"published","MarkdownEnabled":true,"Content":"ignored","MarkdownContent":"## Install\n\n`+"```sh\\ngo get x\\n```"+`","Path":"guides/quick-start"}`)

	r := p.html("/", "Payments API", "Take card payments.", `href="/products/`+prod+`"`)
	if strings.Contains(string(r.body), "drafts-only") {
		t.Errorf("the catalogue lists a product without published pages")
	}
	p.html("/products/"+prod, "Introduction", "Quick start", `href="/products/`+prod+`/guides/quick-start"`, `href="/products/`+prod+`/docs/`+intro+`"`)
	page := p.html("/products/"+prod+"/docs/"+intro, "<h1>Introduction</h1>", "Start here", "Guides", `<h2 id="why">Why</h2>`,
		`rel="next" href="/products/`+prod+`/guides/quick-start"`)
	if strings.Contains(string(page.body), "Secret draft") || strings.Contains(string(page.body), "In review") {
		t.Errorf("a page lists unpublished pages:\n%s", page.body)
	}
	p.html("/products/"+prod+"/guides/quick-start", "<h1>Quick start</h1>", `<pre class="chroma">`, `rel="prev"`)
	p.html("/products/"+prod+"/guides/quick-start/", "<h1>Quick start</h1>")
	p.html("/products/"+prod+"/docs/"+md, "<h1>Quick start</h1>")

	// Security headers on every answer.
	for _, path := range []string{"/", "/products/" + prod, "/products/" + prod + "/docs/" + intro, "/nope"} {
		h := p.get("GET", path).header
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" {
			t.Errorf("%s: headers %v", path, h)
		}
	}

	// Unpublished and missing answer the same 404, byte for byte.
	missing := p.get("GET", "/products/"+prod+"/docs/999999")
	for _, path := range []string{
		"/products/" + prod + "/docs/" + draft, "/products/" + prod + "/docs/" + review, "/products/" + prod + "/secret",
		"/products/" + hidden, "/products/" + hidden + "/docs/1", "/products/999999", "/products/abc", "/products/" + prod + "/docs/x",
		"/products/" + prod + "/nothing", "/no/such/page",
	} {
		r := p.get("GET", path)
		if r.status != 404 || string(r.body) != string(missing.body) || !sameHeaders(r.header, missing.header) {
			t.Errorf("%s: %d %v, want the 404 of a missing page (%v)", path, r.status, r.header, missing.header)
		}
	}
	if missing.status != 404 || !strings.Contains(missing.header.Get("Content-Type"), "text/html") {
		t.Errorf("404: %d %s", missing.status, missing.header.Get("Content-Type"))
	}
	// The API keeps its own JSON errors.
	p.errorsOf(p.do("GET", "/portal-api/nothing", ""), 404, "API 404")
	if r := p.do("DELETE", "/portal-api/products", ""); r.status != 405 || !strings.Contains(r.header.Get("Allow"), "POST") {
		t.Errorf("API 405: %d %v", r.status, r.header)
	}
	// Each listener serves its own (CONTRACT §0): the site nothing of the
	// API's, the API port none of the site.
	for _, path := range []string{"/portal-api/products", "/portal-api/products/" + prod, "/metrics", "/healthz", "/readyz", "/openapi.json"} {
		r := p.get("GET", path, "Authorization", token)
		if r.status != 404 || string(r.body) != string(missing.body) {
			t.Errorf("site listener, GET %s: %d %.80s, want the site's 404", path, r.status, r.body)
		}
	}
	for _, path := range []string{"/", "/products/" + prod, "/products/" + prod + "/docs/" + intro, "/assets/site.css"} {
		p.errorsOf(p.do("GET", path, ""), 404, "API port, GET "+path)
	}

	// HEAD, other methods.
	head := p.get("HEAD", "/products/"+prod)
	if head.status != 200 || len(head.body) != 0 || head.header.Get("ETag") == "" {
		t.Errorf("HEAD: %d %v %q", head.status, head.header, head.body)
	}
	if r := p.get("POST", "/products/"+prod); r.status != 405 || r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST on a page: %d Allow %q", r.status, r.header.Get("Allow"))
	}

	// Revalidation: 304 until something shown changes.
	path := "/products/" + prod + "/docs/" + intro
	first := p.get("GET", path)
	etag, modified := first.header.Get("ETag"), first.header.Get("Last-Modified")
	if etag == "" || modified == "" {
		t.Fatalf("validators missing: %v", first.header)
	}
	if r := p.get("GET", path, "If-None-Match", etag); r.status != 304 || len(r.body) != 0 {
		t.Errorf("If-None-Match: %d", r.status)
	}
	if r := p.get("GET", path, "If-Modified-Since", modified); r.status != 304 {
		t.Errorf("If-Modified-Since: %d", r.status)
	}
	time.Sleep(1100 * time.Millisecond) // Last-Modified counts whole seconds
	p.expect(p.do("PUT", docPath(prod, md), `{"Title":"Quick start, revised"}`), 200, "rename the next page")
	r = p.get("GET", path, "If-None-Match", etag)
	if r.status != 200 || !strings.Contains(string(r.body), "Quick start, revised") || r.header.Get("ETag") == etag {
		t.Errorf("after a neighbour's rename: %d %v", r.status, r.header)
	}
	if r := p.get("GET", path, "If-Modified-Since", modified); r.status != 200 {
		t.Errorf("If-Modified-Since after a change: %d", r.status)
	}

	// The stored content is never changed by rendering.
	v := p.expect(p.do("GET", docPath(prod, intro), ""), 200, "admin read").(map[string]any)
	if v["Content"] != "<h2>Why</h2><p>Because.</p>" {
		t.Errorf("stored content: %v", v["Content"])
	}

	// The stylesheet.
	css := p.get("GET", "/assets/site.css")
	if css.status != 200 || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") || !strings.Contains(string(css.body), "prefers-color-scheme: dark") {
		t.Errorf("stylesheet: %d %v", css.status, css.header)
	}
}

// sameHeaders compares two answers' headers but for Date.
func sameHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if k == "Date" {
			continue
		}
		if strings.Join(v, "\n") != strings.Join(b[k], "\n") {
			return false
		}
	}
	return true
}
