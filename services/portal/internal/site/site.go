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
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
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
	// GetPage reads one page; store.ErrNotFound when the product has no such page.
	GetPage(ctx context.Context, product, id uint32) (store.Page, error)
}

// published is the one status readers see.
const published = "published"

// CacheBudget bounds the rendered bodies kept in memory, in bytes.
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
	s := &Site{pages: pages, log: log.With("component", "site"), cache: newCache(CacheBudget), mux: http.NewServeMux()}
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
	p, err := s.pages.GetPage(r.Context(), o.Product.ID, doc)
	if err != nil || p.Status != published {
		if err == nil {
			err = store.ErrNotFound
		}
		s.fail(w, err)
		return
	}
	body, err := s.body(p)
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

// body renders a page, or takes its rendering from the cache. A rendering
// that failed (content stored before the API checked it at write time) is
// kept too, so that it is never tried again per request.
func (s *Site) body(p store.Page) (Body, error) {
	return s.rendered(keyOf('p', p.ID, p.UpdatedAt), func() (Body, error) { return Render(p) })
}

// rendered takes the rendering kept under k, else runs render once and
// keeps its result, success or failure.
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
func (s *Site) write(w http.ResponseWriter, r *http.Request, name string, v view, modified time.Time) {
	v.Stylesheet = stylesheet + "?v=" + strings.Trim(s.cssTag, `"`)
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, v); err != nil {
		s.fail(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("ETag", etag(buf.Bytes()))
	http.ServeContent(w, r, "", modified, bytes.NewReader(buf.Bytes()))
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
