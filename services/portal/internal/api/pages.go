package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/liststream"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// pageType is the Type of every tutorial page.
const pageType = "tutorial"

func (s *Server) CreateTutorialPage(ctx context.Context, req *portalv1.CreateTutorialPageRequest) (*portalv1.CreateTutorialPageResponse, error) {
	product, err := pathID(req.GetProductId(), productID)
	if err != nil {
		return nil, err
	}
	in := pageInput(req.GetPage())
	msgs := pageFieldProblems(in)
	if in.Title == nil {
		msgs = append([]string{"Title is required"}, msgs...)
	}
	var render renderCheck
	if len(msgs) == 0 {
		if err := s.precheckPage(ctx, product, 0, in, &render); err != nil {
			return nil, err
		}
	}
	p, err := s.store.CreatePage(ctx, product, func(p *store.Page, exists store.LabelLookup) error {
		now := s.now().UTC()
		p.Status, p.CreatedAt = defaultStatus, now
		if err := applyPage(p, in, msgs, exists, now); err != nil {
			return err
		}
		return render.ensure(p)
	})
	if err != nil {
		return nil, s.storeError(err, productID.missing)
	}
	rest.SetStatus(ctx, http.StatusCreated)
	rest.SetHeader(ctx, "Location", "/portal-api/products/"+strconv.FormatUint(uint64(product), 10)+"/docs/"+strconv.FormatUint(uint64(p.ID), 10))
	return &portalv1.CreateTutorialPageResponse{Page: pageMessage(p), Hidden: hiddenMessage(p)}, nil
}

func (s *Server) ListTutorialPages(ctx context.Context, req *portalv1.ListTutorialPagesRequest) (*portalv1.ListTutorialPagesResponse, error) {
	product, err := pathID(req.GetProductId(), productID)
	if err != nil {
		return nil, err
	}
	offset, limit, err := paging(req.Page, req.PerPage)
	if err != nil {
		return nil, err
	}
	// written as read (a REST request): a page's content may be 16 MiB, and a page of the list 1,000 of them
	if liststream.Stream(ctx, func(w *liststream.Writer) error {
		err := w.Begin(nil, "pages", true)
		if err == nil {
			err = s.store.EachPage(ctx, product, offset, limit, func(p store.Page) error { return w.Item(pageMessage(p)) })
		}
		if err == nil {
			err = w.End()
		}
		if err != nil {
			return s.storeError(err, productID.missing)
		}
		return nil
	}) {
		return &portalv1.ListTutorialPagesResponse{}, nil
	}
	list, err := s.store.ListPages(ctx, product, offset, limit)
	if err != nil {
		return nil, s.storeError(err, productID.missing)
	}
	resp := &portalv1.ListTutorialPagesResponse{Pages: make([]*portalv1.TutorialPage, 0, len(list))}
	for _, p := range list {
		resp.Pages = append(resp.Pages, pageMessage(p))
	}
	return resp, nil
}

func (s *Server) GetTutorialPage(ctx context.Context, req *portalv1.GetTutorialPageRequest) (*portalv1.GetTutorialPageResponse, error) {
	product, doc, err := pagePath(req.GetProductId(), req.GetDocId())
	if err != nil {
		return nil, err
	}
	p, err := s.store.GetPage(ctx, product, doc)
	if err != nil {
		return nil, s.pageError(ctx, err, product)
	}
	return &portalv1.GetTutorialPageResponse{Page: pageMessage(p), Hidden: hiddenMessage(p)}, nil
}

// UpdateTutorialPage is specification 4.3a: a partial update. Every field
// present is checked (one message per problem) and nothing changes unless
// all are valid; UpdatedAt becomes now, CreatedAt never changes.
func (s *Server) UpdateTutorialPage(ctx context.Context, req *portalv1.UpdateTutorialPageRequest) (*portalv1.UpdateTutorialPageResponse, error) {
	product, doc, err := pagePath(req.GetProductId(), req.GetDocId())
	if err != nil {
		return nil, err
	}
	in := pageInput(req.GetPage())
	msgs := pageFieldProblems(in)
	var render renderCheck
	check := needsRender(in)
	if check && len(msgs) == 0 {
		if err := s.precheckPage(ctx, product, doc, in, &render); err != nil {
			return nil, err
		}
	}
	p, err := s.store.UpdatePage(ctx, product, doc, func(p *store.Page, exists store.LabelLookup) error {
		if err := applyPage(p, in, msgs, exists, s.now().UTC()); err != nil || !check {
			return err
		}
		return render.ensure(p)
	})
	if err != nil {
		return nil, s.pageError(ctx, err, product)
	}
	return &portalv1.UpdateTutorialPageResponse{Page: pageMessage(p), Hidden: hiddenMessage(p)}, nil
}

func (s *Server) DeleteTutorialPage(ctx context.Context, req *portalv1.DeleteTutorialPageRequest) (*portalv1.DeleteTutorialPageResponse, error) {
	product, doc, err := pagePath(req.GetProductId(), req.GetDocId())
	if err != nil {
		return nil, err
	}
	if err := s.store.DeletePage(ctx, product, doc); err != nil {
		return nil, s.pageError(ctx, err, product)
	}
	return &portalv1.DeleteTutorialPageResponse{Status: deleted}, nil
}

// pagePath reads the two IDs of a page's path, the product's first.
func pagePath(productText, docText string) (product, doc uint32, err error) {
	if product, err = pathID(productText, productID); err != nil {
		return 0, 0, err
	}
	if doc, err = pathID(docText, docID); err != nil {
		return 0, 0, err
	}
	return product, doc, nil
}

// pageError answers a failed page lookup: "Product not found" when the
// product is missing, else "Tutorial page not found" (which also covers a
// page of another product).
func (s *Server) pageError(ctx context.Context, err error, product uint32) error {
	err = s.storeError(err, docID.missing)
	if err != docID.missing {
		return err
	}
	if _, perr := s.store.GetProduct(ctx, product); perr != nil {
		return s.storeError(perr, productID.missing)
	}
	return err
}

func pageInput(in *portalv1.TutorialPageInput) *portalv1.TutorialPageInput {
	if in == nil {
		return &portalv1.TutorialPageInput{}
	}
	return in
}

// applyPage sets on p the fields present in in, after checking that the
// categories and tags named exist; msgs are the problems found so far, and
// any problem leaves p unchanged and aborts the transaction.
func applyPage(p *store.Page, in *portalv1.TutorialPageInput, msgs []string, exists store.LabelLookup, now time.Time) error {
	cats, msgs := existingLabels(msgs, "Categories", "category", store.Categories, in.GetCategories(), exists)
	tags, msgs := existingLabels(msgs, "Tags", "tag", store.Tags, in.GetTags(), exists)
	if len(msgs) > 0 {
		return invalid(msgs)
	}
	set(&p.Content, in.Content)
	set(&p.MarkdownEnabled, in.MarkdownEnabled)
	set(&p.Status, in.Status)
	set(&p.Title, in.Title)
	set(&p.Lede, in.Lede)
	set(&p.Path, in.Path)
	set(&p.MarkdownContent, in.MarkdownContent)
	set(&p.PreviewContent, in.PreviewContent)
	if in.Categories != nil {
		p.Categories = cats
	}
	if in.Tags != nil {
		p.Tags = tags
	}
	p.UpdatedAt = now
	return nil
}

func pageMessage(p store.Page) *portalv1.TutorialPage {
	return &portalv1.TutorialPage{
		Id: p.ID, Content: p.Content, MarkdownEnabled: p.MarkdownEnabled, Status: p.Status, Title: p.Title,
		Lede: p.Lede, Type: pageType, Path: p.Path, Categories: p.CategoryNames, Tags: p.TagNames,
		CreatedAt: formatTime(p.CreatedAt), UpdatedAt: formatTime(p.UpdatedAt),
	}
}

func hiddenMessage(p store.Page) *portalv1.TutorialPageHidden {
	return &portalv1.TutorialPageHidden{MarkdownContent: p.MarkdownContent, PreviewContent: p.PreviewContent}
}

// ReorderTutorialPages sets the order of a product's pages. The list must
// name every page of the product exactly once: a partial list is refused
// rather than guessed at, so that a client working from a stale list learns
// that the pages changed.
func (s *Server) ReorderTutorialPages(ctx context.Context, req *portalv1.ReorderTutorialPagesRequest) (*portalv1.ReorderTutorialPagesResponse, error) {
	product, err := pathID(req.GetProductId(), productID)
	if err != nil {
		return nil, err
	}
	list, err := s.store.ReorderPages(ctx, product, func(current []uint32) ([]uint32, error) {
		return checkOrder(req.GetOrder().GetDocIds(), current)
	})
	if err != nil {
		return nil, s.storeError(err, productID.missing)
	}
	resp := &portalv1.ReorderTutorialPagesResponse{Pages: make([]*portalv1.TutorialPage, 0, len(list))}
	for _, p := range list {
		resp.Pages = append(resp.Pages, pageMessage(p))
	}
	return resp, nil
}

// checkOrder reads a requested page order against the product's pages: one
// message per element that is not an ID, names no page of the product or
// repeats one, then one for the pages left out.
func checkOrder(ids []string, current []uint32) ([]uint32, error) {
	pages := make(map[uint32]bool, len(current))
	for _, id := range current {
		pages[id] = true
	}
	var msgs []string
	seen := make(map[uint32]bool, len(ids))
	order := make([]uint32, 0, len(ids))
	for i, text := range ids {
		id, ok, exists := parseID(text)
		switch {
		case !ok:
			msgs = append(msgs, fmt.Sprintf("Item %d must be a tutorial page ID (a positive integer); got %s", i+1, quote(text)))
		case !exists || !pages[id]:
			msgs = append(msgs, fmt.Sprintf("Item %d: tutorial page %s is not a page of this product", i+1, text))
		case seen[id]:
			msgs = append(msgs, fmt.Sprintf("Item %d: tutorial page %d is listed twice", i+1, id))
		default:
			seen[id] = true
			order = append(order, id)
		}
	}
	var missing []string
	for _, id := range current {
		if !seen[id] {
			missing = append(missing, strconv.FormatUint(uint64(id), 10))
		}
	}
	if len(missing) > 0 {
		msgs = append(msgs, "The list must name every page of the product exactly once; missing: "+strings.Join(missing, ", "))
	}
	if len(msgs) > 0 {
		return nil, invalid(msgs)
	}
	return order, nil
}
