// Package site serves the developer portal's public pages: the catalogue of
// API products, each product's published tutorial pages in their order,
// and each page rendered safely (Markdown or HTML, always sanitised). No
// credentials; only published pages, and the products that have them, exist
// for a reader: anything else answers the same 404.
package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// Pages is what the site reads from the portal's store.
type Pages interface {
	// Outlines returns every product with its pages' summaries in their
	// order, and when pages last changed without an UpdatedAt moving.
	Outlines(ctx context.Context) ([]store.Outline, time.Time, error)
	// Outline is Outlines for one product; store.ErrNotFound when it does not exist.
	Outline(ctx context.Context, product uint32) (store.Outline, time.Time, error)
	// ShownPage reads one page without its source texts, with its kept
	// rendering (its HTML only when html is set); store.ErrNotFound when
	// the product has no such page.
	ShownPage(ctx context.Context, product, id uint32, html bool) (store.Page, error)
	// Unrendered and SetRendered serve RenderStored: pages without a
	// current rendering, and keeping one.
	Unrendered(ctx context.Context, version, limit int) ([]store.PageRef, error)
	SetRendered(ctx context.Context, ref store.PageRef, render func(store.Page) *store.Rendered) error
}

// published is the one status readers see.
const published = "published"

// CacheBudget bounds the renderings of products' content kept in memory,
// in bytes. (Pages are rendered when written and kept in the store.)
const CacheBudget = 32 << 20

// Security headers of every answer: no script at all, styles and images
// only from here (images also from https: and data:), never framed.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' https: data:; " +
		"frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"X-Frame-Options":        "DENY",
	"Cache-Control":          "no-cache", // always revalidate: a PUT shows on the next load
}

// Site is the public pages' handler.
type Site struct {
	pages  Pages
	log    *slog.Logger
	cache  *cache
	stale  chan struct{} // a GET met a page without a current rendering
	reads  flight        // of pages' HTML from the store
	mux    *http.ServeMux
	css    []byte
	cssTag string
}

// New returns the site over pages.
func New(pages Pages, log *slog.Logger) (*Site, error) {
	code, err := codeCSS()
	if err != nil {
		return nil, err
	}
	s := &Site{pages: pages, log: log.With("component", "site"), cache: newCache(CacheBudget), mux: http.NewServeMux(),
		stale: make(chan struct{}, 1)}
	s.css = append(append([]byte(themeCSS), '\n'), code...)
	s.cssTag = etag(s.css)
	// A GET pattern also answers HEAD (net/http drops the body); other
	// methods get 405 with Allow: GET, HEAD. Every unknown path is the 404 page.
	s.mux.HandleFunc("GET /{$}", s.catalogue)
	s.mux.HandleFunc("GET /products/{product_id}", s.product)
	s.mux.HandleFunc("GET /products/{product_id}/docs/{doc_id}", s.page)
	s.mux.HandleFunc("GET /products/{product_id}/{path...}", s.pageByPath)
	s.mux.HandleFunc("GET "+stylesheet, s.stylesheet)
	s.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { s.notFound(w) })
	return s, nil
}

// stylesheet is the theme's one asset.
const stylesheet = "/assets/site.css"

func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range securityHeaders {
		h.Set(k, v)
	}
	s.mux.ServeHTTP(w, r)
}

var decimal = regexp.MustCompile(`^[0-9]{1,10}$`)

// id reads a path ID; ok is false for anything that names no record.
func id(s string) (uint32, bool) {
	if !decimal.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil && n != 0
}

// view is what every template receives.
type view struct {
	Title      string
	Stylesheet string
	Catalogue  []productCard
	Product    *productView
	Page       *pageView
}

type productCard struct {
	Name, DisplayName, Description, URL string
	Pages                               int
}

type productView struct {
	ID          uint32
	Name        string
	Description string
	URL         string
	Content     template.HTML
	Pages       []pageLink
}

type pageLink struct {
	Title, Lede, URL string
	Current          bool
}

type pageView struct {
	Title, Lede      string
	Categories, Tags []string
	Body             Body
	Prev, Next       *pageLink
	Updated          time.Time
}

func (s *Site) catalogue(w http.ResponseWriter, r *http.Request) {
	all, changed, err := s.pages.Outlines(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	modified := changed
	v := view{Title: "API products"}
	for _, o := range all {
		modified = latest(modified, outlineModified(o, changed))
		links := publishedLinks(o)
		if len(links) == 0 {
			continue
		}
		v.Catalogue = append(v.Catalogue, productCard{
			Name: o.Product.Name, DisplayName: displayName(o.Product), Description: o.Product.Description,
			URL: productURL(o.Product.ID), Pages: len(links),
		})
	}
	s.write(w, r, "catalogue", v, modified)
}

func (s *Site) product(w http.ResponseWriter, r *http.Request) {
	o, changed, ok := s.outline(w, r)
	if !ok {
		return
	}
	pv := s.productView(o, 0)
	s.write(w, r, "product", view{Title: pv.Name, Product: pv}, outlineModified(o, changed))
}

func (s *Site) page(w http.ResponseWriter, r *http.Request) {
	doc, ok := id(r.PathValue("doc_id"))
	if !ok {
		s.notFound(w)
		return
	}
	o, changed, ok := s.outline(w, r)
	if !ok {
		return
	}
	s.showPage(w, r, o, changed, doc)
}

// pageByPath serves a page at its own Path under its product.
func (s *Site) pageByPath(w http.ResponseWriter, r *http.Request) {
	want := store.CleanPath(r.PathValue("path"))
	o, changed, ok := s.outline(w, r)
	if !ok {
		return
	}
	for _, p := range o.Pages {
		if p.Status == published && want != "" && store.PathProblem(p.Path) == "" && store.CleanPath(p.Path) == want {
			s.showPage(w, r, o, changed, p.ID)
			return
		}
	}
	s.notFound(w)
}

// outline reads the product of the request's path; it answers 404 itself
// when the product does not exist or has no published page.
func (s *Site) outline(w http.ResponseWriter, r *http.Request) (store.Outline, time.Time, bool) {
	product, ok := id(r.PathValue("product_id"))
	if !ok {
		s.notFound(w)
		return store.Outline{}, time.Time{}, false
	}
	o, changed, err := s.pages.Outline(r.Context(), product)
	if err != nil {
		s.fail(w, err)
		return o, changed, false
	}
	if len(publishedLinks(o)) == 0 {
		s.notFound(w)
		return o, changed, false
	}
	return o, changed, true
}

func (s *Site) showPage(w http.ResponseWriter, r *http.Request, o store.Outline, changed time.Time, doc uint32) {
	p, err := s.pages.ShownPage(r.Context(), o.Product.ID, doc, false)
	if err != nil || p.Status != published {
		if err == nil {
			err = store.ErrNotFound
		}
		s.fail(w, err)
		return
	}
	if p.Rendered == nil || p.Rendered.Version != RenderVersion {
		// stored before pages were rendered when written, or by another
		// renderer: RenderStored makes it; a GET never renders
		select {
		case s.stale <- struct{}{}:
		default:
		}
		w.Header().Set("Retry-After", "5")
		s.errorPage(w, http.StatusServiceUnavailable)
		return
	}
	body, err := s.pageBody(r.Context(), p)
	if err != nil {
		s.fail(w, err)
		return
	}
	pv := s.productView(o, doc)
	page := &pageView{Title: p.Title, Lede: p.Lede, Categories: p.CategoryNames, Tags: p.TagNames, Body: body, Updated: p.UpdatedAt}
	for i, l := range pv.Pages {
		if !l.Current {
			continue
		}
		if i > 0 {
			page.Prev = &pv.Pages[i-1]
		}
		if i+1 < len(pv.Pages) {
			page.Next = &pv.Pages[i+1]
		}
	}
	s.write(w, r, "page", view{Title: p.Title + " · " + pv.Name, Product: pv, Page: page}, latest(outlineModified(o, changed), p.UpdatedAt))
}

// pageBody is the kept rendering of p (read without its HTML): from the
// cache, else read once from the store however many readers ask at once,
// and cached under the UpdatedAt it was read at. Parallel readers of a
// large page so share one copy of its HTML.
func (s *Site) pageBody(ctx context.Context, p store.Page) (Body, error) {
	k := keyOf('p', p.ID, p.UpdatedAt)
	if b, err, ok := s.cache.get(k); ok {
		return b, err
	}
	return s.reads.do(k, func() (Body, error) {
		full, err := s.pages.ShownPage(ctx, p.ProductID, p.ID, true)
		if err != nil {
			return Body{}, err
		}
		if full.Rendered == nil || full.Rendered.Version != RenderVersion {
			return Body{}, store.ErrNotFound // removed or rewritten meanwhile
		}
		b := shown(full.Rendered)
		s.cache.put(keyOf('p', full.ID, full.UpdatedAt), b, nil)
		return b, nil
	})
}

// RenderStored keeps a current rendering of every stored page, until ctx
// ends: at start, and whenever a GET met a page without one, it renders
// each page whose kept rendering is missing (stored before pages were
// rendered when written) or of another RenderVersion, one at a time, and
// stores it beside the page. A page that cannot be rendered (content
// stored before the API checked it, or whose HTML is over MaxHTML) keeps a
// short notice instead, so it is never tried again.
func (s *Site) RenderStored(ctx context.Context) {
	for {
		for {
			refs, err := s.pages.Unrendered(ctx, RenderVersion, 100)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("render stored pages", "err", err)
				}
				break
			}
			if len(refs) == 0 {
				break
			}
			done := 0
			for _, ref := range refs {
				err := s.pages.SetRendered(ctx, ref, func(p store.Page) *store.Rendered {
					b, err := Render(p)
					if err != nil {
						s.log.Warn("stored page cannot be shown", "product", p.ProductID, "page", p.ID, "err", err)
						b = Body{HTML: template.HTML("<p>This page cannot be shown: " + template.HTMLEscapeString(strings.TrimPrefix(err.Error(), ErrUnrenderable.Error()+": ")) + ".</p>")}
					}
					return Stored(b)
				})
				if err != nil {
					if ctx.Err() == nil {
						s.log.Error("render stored page", "product", ref.Product, "page", ref.ID, "err", err)
					}
					continue
				}
				done++
			}
			if done == 0 {
				break // every one failed: wait for the next nudge
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.stale:
		}
	}
}

// rendered takes the rendering of a product's content kept under k, else
// runs render once and keeps its result, success or failure.
func (s *Site) rendered(k renderKey, render func() (Body, error)) (Body, error) {
	if b, err, ok := s.cache.get(k); ok {
		return b, err
	}
	b, err := render()
	s.cache.put(k, b, err)
	return b, err
}

func (s *Site) productView(o store.Outline, current uint32) *productView {
	pv := &productView{ID: o.Product.ID, Name: displayName(o.Product), Description: o.Product.Description, URL: productURL(o.Product.ID)}
	if o.Product.Content != "" {
		b, err := s.rendered(keyOf('P', o.Product.ID, o.Product.UpdatedAt), func() (Body, error) {
			b, err := renderText(o.Product.Content, false)
			if err != nil {
				s.log.Error("render product content", "product", o.Product.ID, "err", err)
			}
			return b, err
		})
		if err == nil {
			pv.Content = b.HTML
		}
	}
	for _, p := range o.Pages {
		if p.Status != published {
			continue
		}
		pv.Pages = append(pv.Pages, pageLink{Title: p.Title, Lede: p.Lede, URL: pageURL(o.Product.ID, p), Current: p.ID == current})
	}
	return pv
}

func publishedLinks(o store.Outline) []store.PageSummary {
	var out []store.PageSummary
	for _, p := range o.Pages {
		if p.Status == published {
			out = append(out, p)
		}
	}
	return out
}

// outlineModified is the newest change a product's pages can show: the
// product, any of its pages (a page leaving "published" moves its
// UpdatedAt) and changes no UpdatedAt records (changed).
func outlineModified(o store.Outline, changed time.Time) time.Time {
	t := latest(changed, o.Product.UpdatedAt)
	for _, p := range o.Pages {
		t = latest(t, p.UpdatedAt)
	}
	return t
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func displayName(p store.Product) string {
	if strings.TrimSpace(p.DisplayName) != "" {
		return p.DisplayName
	}
	return p.Name
}

func productURL(product uint32) string {
	return "/products/" + strconv.FormatUint(uint64(product), 10)
}

// pageURL is a page's own URL: its Path under its product when it has a
// valid one (store.PathProblem: a Path stored before the rule could lead out
// of the product) that the docs route does not shadow, else
// /products/{id}/docs/{doc_id}.
func pageURL(product uint32, p store.PageSummary) string {
	if path := store.CleanPath(p.Path); path != "" && store.PathProblem(p.Path) == "" && !strings.HasPrefix(path+"/", "docs/") {
		segs := strings.Split(path, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		return productURL(product) + "/" + strings.Join(segs, "/")
	}
	return productURL(product) + "/docs/" + strconv.FormatUint(uint64(p.ID), 10)
}

// write renders a template and answers it, or 304 when the client's copy
// is current. The ETag is the hash of the answer, so it changes with
// anything shown (a neighbour's title, a renamed category), not only with
// the page's UpdatedAt; Last-Modified is the newest change the answer shows.
// A page's HTML (up to 4 MiB, and readers are anonymous and many) is never
// copied: the template runs with a marker in its place, and the answer is
// the template's output around the HTML as kept.
func (s *Site) write(w http.ResponseWriter, r *http.Request, name string, v view, modified time.Time) {
	v.Stylesheet = stylesheet + "?v=" + strings.Trim(s.cssTag, `"`)
	var big []string // the HTML in place of each marker, in marker order
	if v.Page != nil {
		page := *v.Page
		big = append(big, string(page.Body.HTML))
		page.Body.HTML = template.HTML(marker(0))
		v.Page = &page
	}
	if v.Product != nil && v.Product.Content != "" {
		product := *v.Product
		big = append(big, string(product.Content))
		product.Content = template.HTML(marker(len(big) - 1))
		v.Product = &product
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, v); err != nil {
		s.fail(w, err)
		return
	}
	parts := splitMarkers(buf.String(), big)
	sum := sha256.New()
	var size int64
	for _, p := range parts {
		io.WriteString(sum, p)
		size += int64(len(p))
	}
	tag := `"` + hex.EncodeToString(sum.Sum(nil)[:16]) + `"`
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("ETag", tag)
	if !modified.IsZero() && modified.Unix() > 0 {
		h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	}
	if notModified(r, tag, modified) {
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	for _, p := range parts {
		if _, err := io.WriteString(w, p); err != nil {
			return
		}
	}
}

// marker stands for the i-th large HTML of an answer in the template's
// output: a comment no rendering contains (the sanitiser drops comments).
func marker(i int) string { return "<!--gatehouse:html:" + strconv.Itoa(i) + "-->" }

// splitMarkers cuts out (the first of) each marker from out and puts the
// HTML it stands for in its place.
func splitMarkers(out string, big []string) []string {
	type at struct{ pos, i int }
	var found []at
	for i := range big {
		if pos := strings.Index(out, marker(i)); pos >= 0 {
			found = append(found, at{pos, i})
		}
	}
	slices.SortFunc(found, func(a, b at) int { return a.pos - b.pos })
	var parts []string
	last := 0
	for _, f := range found {
		parts = append(parts, out[last:f.pos], big[f.i])
		last = f.pos + len(marker(f.i))
	}
	return append(parts, out[last:])
}

// notModified applies If-None-Match, else If-Modified-Since, as
// http.ServeContent does for a GET or HEAD.
func notModified(r *http.Request, tag string, modified time.Time) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == tag {
				return true
			}
		}
		return false
	}
	ims, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
	return err == nil && !modified.IsZero() && !modified.Truncate(time.Second).After(ims)
}

func (s *Site) stylesheet(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("ETag", s.cssTag)
	if r.URL.Query().Get("v") == strings.Trim(s.cssTag, `"`) {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.css))
}

func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// notFound is the one 404 of the site: the same bytes and headers whether
// the product, the page or the path does not exist or is not published.
func (s *Site) notFound(w http.ResponseWriter) {
	s.errorPage(w, http.StatusNotFound)
}

func (s *Site) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.notFound(w)
		return
	}
	s.log.Error("public page", "err", err)
	s.errorPage(w, http.StatusInternalServerError)
}

func (s *Site) errorPage(w http.ResponseWriter, status int) {
	var buf bytes.Buffer
	name := "notfound"
	if status != http.StatusNotFound {
		name = "error"
	}
	if err := templates.ExecuteTemplate(&buf, name, view{Title: http.StatusText(status), Stylesheet: stylesheet + "?v=" + strings.Trim(s.cssTag, `"`)}); err != nil {
		s.log.Error("error page", "err", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
