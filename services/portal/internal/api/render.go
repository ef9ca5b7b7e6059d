package api

import (
	"context"
	"fmt"
	"strings"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/services/portal/internal/site"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// Content the public site cannot render (HTML nested deeper than the
// parser's limit, or whose HTML would be over site.MaxHTML, 4 MiB) is
// refused at write time with 422 naming the field it came from (CONTRACT
// §3), so no published page fails to render. What renders is kept: the
// write stores the page's rendering beside it (store.Page.Rendered), so a
// reader's GET never renders.
//
// A page's shown text depends on fields a partial update may leave alone
// (MarkdownEnabled picks Content or MarkdownContent), so the rendering is
// made of the page as it will be. It is made before the write transaction,
// on the page as read then, so that a slow rendering holds no transaction;
// inside the transaction the page's text is compared with the one
// rendered, and rendered again only if a concurrent write changed it.

// renderCheck remembers the text that last rendered, and its rendering.
type renderCheck struct {
	text     string
	md, set  bool
	rendered *store.Rendered
}

// needsRender reports whether a page request can change what the site
// renders, or publish a page.
func needsRender(in *portalv1.TutorialPageInput) bool {
	return in.Content != nil || in.MarkdownContent != nil || in.MarkdownEnabled != nil || in.GetStatus() == "published"
}

// ensure refuses p when its shown text does not render, and otherwise sets
// its rendering.
func (c *renderCheck) ensure(p *store.Page) error {
	text, md := site.Source(*p)
	if c.set && c.md == md && c.text == text {
		p.Rendered = c.rendered
		return nil
	}
	body, err := site.Render(*p)
	if err != nil {
		field := "Content"
		if md && p.MarkdownContent != "" {
			field = "MarkdownContent"
		}
		return invalid([]string{unrenderable(field, err)})
	}
	c.text, c.md, c.set, c.rendered = text, md, true, site.Stored(body)
	p.Rendered = c.rendered
	return nil
}

// unrenderable is the 422 message for a field whose content does not render.
func unrenderable(field string, err error) string {
	return fmt.Sprintf("%s cannot be shown on the public site: %s", field, strings.TrimPrefix(err.Error(), site.ErrUnrenderable.Error()+": "))
}

// precheckPage checks the page a create or update of product's page doc (0:
// a new page) would store, before the transaction.
func (s *Server) precheckPage(ctx context.Context, product, doc uint32, in *portalv1.TutorialPageInput, c *renderCheck) error {
	var p store.Page
	if doc != 0 {
		var err error
		if p, err = s.store.GetPage(ctx, product, doc); err != nil {
			return nil // the transaction answers a missing page
		}
	}
	set(&p.Content, in.Content)
	set(&p.MarkdownEnabled, in.MarkdownEnabled)
	set(&p.MarkdownContent, in.MarkdownContent)
	return c.ensure(&p)
}

// checkProductContent refuses a product's Content that does not render (the
// site shows it on the product's page).
func checkProductContent(in *portalv1.ProductInput) []string {
	if in.Content == nil {
		return nil
	}
	if err := site.Renderable(*in.Content, false); err != nil {
		return []string{unrenderable("Content", err)}
	}
	return nil
}
