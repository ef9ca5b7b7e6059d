package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/pkg/browsertest"
	"github.com/gatehouse/gatehouse/services/portal/internal/site/xsstest"
)

// The public pages in a real browser (pkg/browsertest). The screenshots
// are test artifacts: in $PORTAL_SCREENSHOTS when set, else in the test's
// temporary folder (logged).

func newBrowser(t *testing.T) *browsertest.Browser {
	return browsertest.New(t, browsertest.Options{ShotsEnv: "PORTAL_SCREENSHOTS", AlwaysShoot: true})
}

func sidebar(b *browsertest.Browser) []string {
	return browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll('.sidebar li a')).map(a => a.textContent.trim())`)
}

const guide = "Follow these steps to take your first payment.\n\n" +
	"## Install\n\nAdd the client library:\n\n```go\nimport \"example.com/payments\"\n\nfunc main() {\n\tc := payments.New(\"key\")\n\tc.Charge(100)\n}\n```\n\n" +
	"## Endpoints\n\n| Method | Path | Purpose |\n|---|---|---|\n| POST | `/charges` | Take a payment |\n| GET | `/charges/{id}` | Read one |\n\n" +
	"### Errors\n\nErrors are JSON; see [the reference](https://example.com/ref).\n\n> Keys are secret: never put them in a page.\n"

func TestBrowser(t *testing.T) {
	b := newBrowser(t)
	p := newPortal(t)
	prod := p.id(p.expect(p.do("POST", "/portal-api/products", `{"Name":"payments","DisplayName":"Payments API","Description":"Take card payments online."}`), 201, "product"))
	p.expect(p.do("POST", "/portal-api/products", `{"Name":"search","DisplayName":"Search API","Description":"Full-text search over your catalogue."}`), 201, "product")
	cat, tag := p.label("categories", "Guides"), p.label("tags", "beginner")
	mdBody, _ := json.Marshal(guide)
	first, _ := p.page(prod, `{"Title":"Getting started","Status":"published","Lede":"Your first payment in five minutes.","MarkdownEnabled":true,"MarkdownContent":`+string(mdBody)+`,"Categories":["`+cat+`"],"Tags":["`+tag+`"],"Path":"getting-started"}`)
	second, _ := p.page(prod, `{"Title":"Webhooks","Status":"published","Lede":"Hear about payments as they happen.","Content":"<h2>Register</h2><p>Send a <code>POST</code> to <a href=\"/products/`+prod+`\">the API</a>.</p><h2>Verify</h2><p>Check the signature.</p>"}`)
	draft, _ := p.page(prod, `{"Title":"Unreleased refunds","Status":"draft","Content":"<p>secret</p>"}`)

	// Catalogue → product → page, by clicking.
	if got := b.Open(p.site + "/"); got != 200 {
		t.Fatalf("catalogue: %d", got)
	}
	b.Shot("catalogue")
	if h := b.Text("h1"); h != "API products" {
		t.Errorf("catalogue h1 %q", h)
	}
	if cards := browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll('.card h2')).map(e => e.textContent.trim())`); !slices.Equal(cards, []string{"Payments API"}) {
		t.Errorf("catalogue lists %v, want only the product with published pages", cards)
	}
	if got := b.Follow(`.card a[href="/products/` + prod + `"]`); got != 200 {
		t.Fatalf("product: %d", got)
	}
	b.Shot("product")
	if h := b.Text("main h1"); h != "Payments API" {
		t.Errorf("product h1 %q", h)
	}
	if got, want := sidebar(b), []string{"Getting started", "Webhooks"}; !slices.Equal(got, want) {
		t.Errorf("sidebar %v, want %v", got, want)
	}
	if got := b.Follow(`.guides a[href="/products/` + prod + `/getting-started"]`); got != 200 {
		t.Fatalf("page: %d", got)
	}
	b.Shot("page-markdown")
	if h := b.Text("article h1"); h != "Getting started" {
		t.Errorf("page h1 %q", h)
	}
	if got, want := browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll('.content h2, .content h3')).map(e => e.id + ':' + e.textContent)`),
		[]string{"install:Install", "endpoints:Endpoints", "errors:Errors"}; !slices.Equal(got, want) {
		t.Errorf("headings %v, want %v", got, want)
	}
	if n := browsertest.Eval[int](b, `document.querySelectorAll('.toc a[href="#endpoints"]').length + document.querySelectorAll('.content table td').length + document.querySelectorAll('.content pre.chroma span.kd').length`); n < 1+6+1 {
		t.Errorf("table of contents, table cells and highlighted code: %d nodes", n)
	}
	if rel := browsertest.Eval[string](b, `document.querySelector('.content a[href="https://example.com/ref"]').rel`); !strings.Contains(rel, "nofollow") || !strings.Contains(rel, "noopener") {
		t.Errorf("external link rel %q", rel)
	}
	if got := b.Text(".labels"); !strings.Contains(got, "Guides") || !strings.Contains(got, "beginner") {
		t.Errorf("labels %q", got)
	}
	// The dark scheme, and a phone-sized screen (the sidebar goes above the page).
	background := `getComputedStyle(document.body).backgroundColor`
	light := browsertest.Eval[string](b, background)
	b.Scheme("dark")
	if dark := browsertest.Eval[string](b, background); dark == light {
		t.Errorf("dark scheme: background %s, the same as the light one", dark)
	}
	b.Shot("page-markdown-dark")
	b.Scheme("light")
	ctx, cancel := b.Step()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if layout := browsertest.Eval[string](b, `getComputedStyle(document.querySelector('.layout')).display`); layout != "block" {
		t.Errorf("narrow screen: layout display %s, want block", layout)
	}
	b.Shot("page-markdown-narrow")
	ctx, cancel = b.Step()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if got := b.Follow(`.pager a[rel="next"]`); got != 200 {
		t.Fatalf("next: %d", got)
	}
	b.Shot("page-html")
	if h := b.Text("article h1"); h != "Webhooks" {
		t.Errorf("next page h1 %q", h)
	}
	if cur := browsertest.Eval[string](b, `document.querySelector('.sidebar a[aria-current="page"]').textContent`); cur != "Webhooks" {
		t.Errorf("current page in the sidebar %q", cur)
	}

	// A reorder shows in the sidebar; a PUT shows on the next load.
	p.expect(p.do("POST", "/portal-api/products/"+prod+"/docs/reorder", "["+second+","+draft+","+first+"]"), 200, "reorder")
	b.Open(p.site + "/products/" + prod)
	if got, want := sidebar(b), []string{"Webhooks", "Getting started"}; !slices.Equal(got, want) {
		t.Errorf("sidebar after a reorder %v, want %v", got, want)
	}
	b.Shot("product-reordered")
	p.expect(p.do("PUT", docPath(prod, second), `{"Title":"Webhooks and events","Content":"<h2>Subscribe</h2><p>Changed.</p>"}`), 200, "put")
	b.Open(p.site + "/products/" + prod + "/docs/" + second)
	if h := b.Text("article h1"); h != "Webhooks and events" {
		t.Errorf("h1 after a PUT %q", h)
	}
	if got := b.Text(".content h2"); got != "Subscribe" {
		t.Errorf("body after a PUT %q", got)
	}
	b.Shot("page-after-put")

	// Drafts are 404, like a missing page.
	for _, path := range []string{"/products/" + prod + "/docs/" + draft, "/products/" + prod + "/docs/999999"} {
		if got := b.Open(p.site + path); got != 404 {
			t.Errorf("%s: %d, want 404", path, got)
		}
		if h := b.Text("h1"); h != "Page not found" {
			t.Errorf("%s: h1 %q", path, h)
		}
		if strings.Contains(browsertest.Eval[string](b, `document.body.innerText`), "Unreleased") {
			t.Errorf("%s shows the draft", path)
		}
	}
	b.Shot("not-found")

	storedXSS(t, b, p)
}

// storedXSS stores the payload corpus in published pages, as HTML and as
// Markdown, ten payloads a page, and checks that opening each page runs no
// script: each payload would set window.__xss.
func storedXSS(t *testing.T, b *browsertest.Browser, p *portal) {
	prod := p.product("xss")
	var pages []string
	for i := 0; i < len(xsstest.Payloads); i += 10 {
		chunk := xsstest.Payloads[i:min(i+10, len(xsstest.Payloads))]
		for _, md := range []bool{false, true} {
			content, _ := json.Marshal(strings.Join(chunk, "\n\n"))
			id, _ := p.page(prod, fmt.Sprintf(`{"Title":"Payloads %d (markdown %v)","Status":"published","MarkdownEnabled":%v,"Content":%s}`, i, md, md, content))
			pages = append(pages, id)
		}
	}
	// The probe works: a script run through DevTools sets the global.
	b.Open(p.site + "/products/" + prod + "/docs/" + pages[0])
	if v := browsertest.Eval[bool](b, `(window.__xss = 1, window.__xss === 1)`); !v {
		t.Fatal("the probe cannot see a global set by a script")
	}
	for i, id := range pages {
		if got := b.Open(p.site + "/products/" + prod + "/docs/" + id); got != 200 {
			t.Fatalf("payload page %s: %d", id, got)
		}
		ctx, cancel := b.Step()
		chromedp.Do(ctx, chromedp.Sleep(100*time.Millisecond)) // let error and load events fire
		cancel()
		if ran := browsertest.Eval[string](b, `typeof window.__xss`); ran != "undefined" {
			t.Errorf("payload page %s: window.__xss is %s", id, ran)
		}
		if n := browsertest.Eval[int](b, `document.querySelectorAll('script, iframe, object, embed, form, base, style, svg, math').length`); n != 0 {
			t.Errorf("payload page %s holds %d active elements", id, n)
		}
		b.Shot(fmt.Sprintf("xss-%02d", i))
	}
}
