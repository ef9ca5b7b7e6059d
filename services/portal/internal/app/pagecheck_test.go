package app

import (
	"encoding/json"
	"strings"
	"testing"
)

// nested is HTML nesting n elements, as a JSON string.
func nested(n int) string {
	b, _ := json.Marshal(strings.Repeat("<div>", n) + "x" + strings.Repeat("</div>", n))
	return string(b)
}

// TestUnrenderableContentRefused: content the public site cannot render
// (nested deeper than the HTML parser's 512 elements) is refused at write
// time with 422 naming its field, and nothing is stored (CONTRACT §3).
func TestUnrenderableContentRefused(t *testing.T) {
	p := newPortal(t)
	prod := p.product("deep")
	ok, _ := p.page(prod, `{"Title":"fine","Status":"published","Content":"<p>ok</p>"}`)
	deep := nested(600)
	for _, tt := range []struct{ name, method, path, body, field string }{
		{"create with deep HTML", "POST", "/portal-api/products/" + prod + "/docs", `{"Title":"t","Content":` + deep + `}`, "Content"},
		{"create a draft with deep HTML", "POST", "/portal-api/products/" + prod + "/docs", `{"Title":"t","Status":"draft","Content":` + deep + `}`, "Content"},
		{"update to deep HTML", "PUT", docPath(prod, ok), `{"Content":` + deep + `}`, "Content"},
		{"update to deep Markdown", "PUT", docPath(prod, ok), `{"MarkdownEnabled":true,"MarkdownContent":` + deep + `}`, "MarkdownContent"},
		{"product with deep content", "POST", "/portal-api/products", `{"Name":"deeper","Content":` + deep + `}`, "Content"},
		{"product updated to deep content", "PUT", "/portal-api/products/" + prod, `{"Content":` + deep + `}`, "Content"},
	} {
		msgs := p.errorsOf(p.do(tt.method, tt.path, tt.body), 422, tt.name)
		if len(msgs) != 1 || !strings.HasPrefix(msgs[0], tt.field+" cannot be shown on the public site") {
			t.Errorf("%s: %q, want one message naming %s", tt.name, msgs, tt.field)
		}
	}
	// Deep Markdown stored while Markdown is off renders nothing; turning
	// Markdown on is then refused, naming the field that would be shown.
	hidden, _ := p.page(prod, `{"Title":"hidden","MarkdownContent":`+deep+`}`)
	msgs := p.errorsOf(p.do("PUT", docPath(prod, hidden), `{"MarkdownEnabled":true}`), 422, "turn Markdown on")
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "MarkdownContent cannot be shown") {
		t.Errorf("turn Markdown on over deep MarkdownContent: %q", msgs)
	}

	// Nothing was stored: two pages, the first unchanged; the product too.
	list := p.expect(p.do("GET", "/portal-api/products/"+prod+"/docs", ""), 200, "list").([]any)
	if len(list) != 2 || list[0].(map[string]any)["Content"] != "<p>ok</p>" || list[1].(map[string]any)["Title"] != "hidden" {
		t.Errorf("pages after the refusals: %v", list)
	}
	if r := p.get("GET", "/products/"+prod+"/docs/"+ok); r.status != 200 {
		t.Errorf("the published page: %d", r.status)
	}
	// Nested within the limit is fine.
	p.page(prod, `{"Title":"ok deep","Status":"published","Content":`+nested(100)+`}`)
}

// TestPagePathRule: a page's Path is a clean path inside its product, else
// 422 naming Path (CONTRACT §3); the site never links out of the product.
func TestPagePathRule(t *testing.T) {
	p := newPortal(t)
	prod := p.product("paths")
	for _, path := range []string{
		"../../portal-api/products", "guides/../../x", "./x", "a//b", "//evil.example/x", "/",
		"https://evil.example/", "javascript:alert(1)", "x?y=1", "x#top", `a\b`, "a%2e%2e", "with space", strings.Repeat("a", 256),
	} {
		body, _ := json.Marshal(map[string]string{"Title": "t", "Path": path})
		msgs := p.errorsOf(p.do("POST", "/portal-api/products/"+prod+"/docs", string(body)), 422, "Path "+path)
		if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "Path ") {
			t.Errorf("Path %q: %q, want one message naming Path", path, msgs)
		}
	}
	doc, _ := p.page(prod, `{"Title":"good","Status":"published","Path":"/guides/v1.2/get_started"}`)
	p.errorsOf(p.do("PUT", docPath(prod, doc), `{"Path":"../x"}`), 422, "PUT a bad Path")
	if v := p.expect(p.do("GET", docPath(prod, doc), ""), 200, "read").(map[string]any); v["Path"] != "/guides/v1.2/get_started" {
		t.Errorf("Path after a refused PUT: %v", v["Path"])
	}
	p.html("/products/"+prod+"/guides/v1.2/get_started", "<h1>good</h1>")
	// Unique within the product (another product may reuse it).
	p.errorsOf(p.do("POST", "/portal-api/products/"+prod+"/docs", `{"Title":"again","Path":"guides/v1.2/get_started/"}`), 422, "a taken Path")
	p.page(p.product("other"), `{"Title":"elsewhere","Path":"guides/v1.2/get_started"}`)
}
