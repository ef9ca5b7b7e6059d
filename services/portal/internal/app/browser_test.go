package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/services/portal/internal/site/xsstest"
)

// The public pages in a real browser: headless Chromium (Debian's chromium
// package; .ci/run installs it) driven over the DevTools protocol. The
// screenshots are test artifacts: in $PORTAL_SCREENSHOTS when set, else in
// the test's temporary folder (logged).

// browserFlags keep Chromium quiet on a closed network: without the
// background-networking flags it keeps trying to reach Google.
func browserFlags(bin, profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 900),
	}
}

// browser is one headless Chromium tab and where its screenshots go.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
	n     int
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("Chromium is not installed (apt-get install chromium; .ci/run installs it): browser tests skipped")
	}
	shots := os.Getenv("PORTAL_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), browserFlags(bin, t.TempDir())...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", bin, err)
	}
	return &browser{t: t, ctx: ctx, shots: shots}
}

// timeout bounds one step.
func (b *browser) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, 30*time.Second)
}

// open navigates to url and returns the HTTP status of the document.
func (b *browser) open(url string) int64 {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(url))
	if err != nil {
		b.t.Fatalf("open %s: %v", url, err)
	}
	return resp.Status
}

// follow clicks the link matched by css and waits for the page it loads.
func (b *browser) follow(css string) int64 {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(css), chromedp.NodeVisible))
	if err != nil {
		b.t.Fatalf("follow %s: %v", css, err)
	}
	return resp.Status
}

func (b *browser) text(css string) string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css), chromedp.NodeVisible))
	if err != nil {
		b.t.Fatalf("text of %s: %v", css, err)
	}
	return strings.TrimSpace(s)
}

// eval runs a JavaScript expression through DevTools (not subject to the
// page's CSP) and decodes its JSON value.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func (b *browser) sidebar() []string {
	return eval[[]string](b, `Array.from(document.querySelectorAll('.sidebar li a')).map(a => a.textContent.trim())`)
}

// shot saves a screenshot of the whole page.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.n++
	if err := os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name)), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// scheme makes the page see prefers-color-scheme: dark or light.
func (b *browser) scheme(value string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}},
		})
		return err
	}))
	if err != nil {
		b.t.Fatalf("prefers-color-scheme %s: %v", value, err)
	}
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
	if got := b.open(p.site + "/"); got != 200 {
		t.Fatalf("catalogue: %d", got)
	}
	b.shot("catalogue")
	if h := b.text("h1"); h != "API products" {
		t.Errorf("catalogue h1 %q", h)
	}
	if cards := eval[[]string](b, `Array.from(document.querySelectorAll('.card h2')).map(e => e.textContent.trim())`); !slices.Equal(cards, []string{"Payments API"}) {
		t.Errorf("catalogue lists %v, want only the product with published pages", cards)
	}
	if got := b.follow(`.card a[href="/products/` + prod + `"]`); got != 200 {
		t.Fatalf("product: %d", got)
	}
	b.shot("product")
	if h := b.text("main h1"); h != "Payments API" {
		t.Errorf("product h1 %q", h)
	}
	if got, want := b.sidebar(), []string{"Getting started", "Webhooks"}; !slices.Equal(got, want) {
		t.Errorf("sidebar %v, want %v", got, want)
	}
	if got := b.follow(`.guides a[href="/products/` + prod + `/getting-started"]`); got != 200 {
		t.Fatalf("page: %d", got)
	}
	b.shot("page-markdown")
	if h := b.text("article h1"); h != "Getting started" {
		t.Errorf("page h1 %q", h)
	}
	if got, want := eval[[]string](b, `Array.from(document.querySelectorAll('.content h2, .content h3')).map(e => e.id + ':' + e.textContent)`),
		[]string{"install:Install", "endpoints:Endpoints", "errors:Errors"}; !slices.Equal(got, want) {
		t.Errorf("headings %v, want %v", got, want)
	}
	if n := eval[int](b, `document.querySelectorAll('.toc a[href="#endpoints"]').length + document.querySelectorAll('.content table td').length + document.querySelectorAll('.content pre.chroma span.kd').length`); n < 1+6+1 {
		t.Errorf("table of contents, table cells and highlighted code: %d nodes", n)
	}
	if rel := eval[string](b, `document.querySelector('.content a[href="https://example.com/ref"]').rel`); !strings.Contains(rel, "nofollow") || !strings.Contains(rel, "noopener") {
		t.Errorf("external link rel %q", rel)
	}
	if got := b.text(".labels"); !strings.Contains(got, "Guides") || !strings.Contains(got, "beginner") {
		t.Errorf("labels %q", got)
	}
	// The dark scheme, and a phone-sized screen (the sidebar goes above the page).
	background := `getComputedStyle(document.body).backgroundColor`
	light := eval[string](b, background)
	b.scheme("dark")
	if dark := eval[string](b, background); dark == light {
		t.Errorf("dark scheme: background %s, the same as the light one", dark)
	}
	b.shot("page-markdown-dark")
	b.scheme("light")
	ctx, cancel := b.step()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if layout := eval[string](b, `getComputedStyle(document.querySelector('.layout')).display`); layout != "block" {
		t.Errorf("narrow screen: layout display %s, want block", layout)
	}
	b.shot("page-markdown-narrow")
	ctx, cancel = b.step()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if got := b.follow(`.pager a[rel="next"]`); got != 200 {
		t.Fatalf("next: %d", got)
	}
	b.shot("page-html")
	if h := b.text("article h1"); h != "Webhooks" {
		t.Errorf("next page h1 %q", h)
	}
	if cur := eval[string](b, `document.querySelector('.sidebar a[aria-current="page"]').textContent`); cur != "Webhooks" {
		t.Errorf("current page in the sidebar %q", cur)
	}

	// A reorder shows in the sidebar; a PUT shows on the next load.
	p.expect(p.do("POST", "/portal-api/products/"+prod+"/docs/reorder", "["+second+","+draft+","+first+"]"), 200, "reorder")
	b.open(p.site + "/products/" + prod)
	if got, want := b.sidebar(), []string{"Webhooks", "Getting started"}; !slices.Equal(got, want) {
		t.Errorf("sidebar after a reorder %v, want %v", got, want)
	}
	b.shot("product-reordered")
	p.expect(p.do("PUT", docPath(prod, second), `{"Title":"Webhooks and events","Content":"<h2>Subscribe</h2><p>Changed.</p>"}`), 200, "put")
	b.open(p.site + "/products/" + prod + "/docs/" + second)
	if h := b.text("article h1"); h != "Webhooks and events" {
		t.Errorf("h1 after a PUT %q", h)
	}
	if got := b.text(".content h2"); got != "Subscribe" {
		t.Errorf("body after a PUT %q", got)
	}
	b.shot("page-after-put")

	// Drafts are 404, like a missing page.
	for _, path := range []string{"/products/" + prod + "/docs/" + draft, "/products/" + prod + "/docs/999999"} {
		if got := b.open(p.site + path); got != 404 {
			t.Errorf("%s: %d, want 404", path, got)
		}
		if h := b.text("h1"); h != "Page not found" {
			t.Errorf("%s: h1 %q", path, h)
		}
		if strings.Contains(eval[string](b, `document.body.innerText`), "Unreleased") {
			t.Errorf("%s shows the draft", path)
		}
	}
	b.shot("not-found")

	storedXSS(t, b, p)
}

// storedXSS stores the payload corpus in published pages, as HTML and as
// Markdown, ten payloads a page, and checks that opening each page runs no
// script: each payload would set window.__xss.
func storedXSS(t *testing.T, b *browser, p *portal) {
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
	b.open(p.site + "/products/" + prod + "/docs/" + pages[0])
	if v := eval[bool](b, `(window.__xss = 1, window.__xss === 1)`); !v {
		t.Fatal("the probe cannot see a global set by a script")
	}
	for i, id := range pages {
		if got := b.open(p.site + "/products/" + prod + "/docs/" + id); got != 200 {
			t.Fatalf("payload page %s: %d", id, got)
		}
		ctx, cancel := b.step()
		chromedp.Do(ctx, chromedp.Sleep(100*time.Millisecond)) // let error and load events fire
		cancel()
		if ran := eval[string](b, `typeof window.__xss`); ran != "undefined" {
			t.Errorf("payload page %s: window.__xss is %s", id, ran)
		}
		if n := eval[int](b, `document.querySelectorAll('script, iframe, object, embed, form, base, style, svg, math').length`); n != 0 {
			t.Errorf("payload page %s holds %d active elements", id, n)
		}
		b.shot(fmt.Sprintf("xss-%02d", i))
	}
}
