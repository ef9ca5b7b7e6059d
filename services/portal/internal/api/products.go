package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/liststream"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

func (s *Server) CreateProduct(ctx context.Context, req *portalv1.CreateProductRequest) (*portalv1.CreateProductResponse, error) {
	in := req.GetProduct()
	if in == nil {
		in = &portalv1.ProductInput{}
	}
	msgs := productFieldProblems(in)
	if in.Name == nil { // an empty one is a field problem
		msgs = append([]string{"Name is required"}, msgs...)
	}
	if len(msgs) == 0 {
		msgs = checkProductContent(in)
	}
	if len(msgs) > 0 {
		return nil, invalid(msgs)
	}
	if err := s.checkOffer(ctx, in); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	p := store.Product{CreatedAt: now}
	applyProduct(&p, in, now)
	p, err := s.store.CreateProduct(ctx, p)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	rest.SetStatus(ctx, http.StatusCreated)
	rest.SetHeader(ctx, "Location", "/portal-api/products/"+strconv.FormatUint(uint64(p.ID), 10))
	return &portalv1.CreateProductResponse{Product: productMessage(p)}, nil
}

func (s *Server) ListProducts(ctx context.Context, req *portalv1.ListProductsRequest) (*portalv1.ListProductsResponse, error) {
	offset, limit, err := paging(req.Page, req.PerPage)
	if err != nil {
		return nil, err
	}
	// written as read (a REST request), not held: a page of the list is up to 1,000 products
	if liststream.Stream(ctx, func(w *liststream.Writer) error {
		err := w.Begin(nil, "products", true)
		if err == nil {
			err = s.store.EachProduct(ctx, offset, limit, func(p store.Product) error { return w.Item(productMessage(p)) })
		}
		if err == nil {
			err = w.End()
		}
		if err != nil {
			return s.storeError(err, errInternal)
		}
		return nil
	}) {
		return &portalv1.ListProductsResponse{}, nil
	}
	list, err := s.store.ListProducts(ctx, offset, limit)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	resp := &portalv1.ListProductsResponse{Products: make([]*portalv1.Product, 0, len(list))}
	for _, p := range list {
		resp.Products = append(resp.Products, productMessage(p))
	}
	return resp, nil
}

func (s *Server) GetProduct(ctx context.Context, req *portalv1.GetProductRequest) (*portalv1.GetProductResponse, error) {
	id, err := pathID(req.GetProductId(), productID)
	if err != nil {
		return nil, err
	}
	p, err := s.store.GetProduct(ctx, id)
	if err != nil {
		return nil, s.storeError(err, productID.missing)
	}
	return &portalv1.GetProductResponse{Product: productMessage(p)}, nil
}

// UpdateProduct changes the attributes present; like the tutorial pages,
// an absent (or null) attribute keeps its value.
func (s *Server) UpdateProduct(ctx context.Context, req *portalv1.UpdateProductRequest) (*portalv1.UpdateProductResponse, error) {
	id, err := pathID(req.GetProductId(), productID)
	if err != nil {
		return nil, err
	}
	in := req.GetProduct()
	if in == nil {
		in = &portalv1.ProductInput{}
	}
	msgs := productFieldProblems(in)
	if len(msgs) == 0 {
		msgs = checkProductContent(in)
	}
	if len(msgs) > 0 {
		return nil, invalid(msgs)
	}
	if err := s.checkOffer(ctx, in); err != nil {
		return nil, err
	}
	p, err := s.store.UpdateProduct(ctx, id, func(p *store.Product) error {
		applyProduct(p, in, s.now().UTC())
		return nil
	})
	if err != nil {
		return nil, s.storeError(err, productID.missing)
	}
	return &portalv1.UpdateProductResponse{Product: productMessage(p)}, nil
}

func (s *Server) DeleteProduct(ctx context.Context, req *portalv1.DeleteProductRequest) (*portalv1.DeleteProductResponse, error) {
	id, err := pathID(req.GetProductId(), productID)
	if err != nil {
		return nil, err
	}
	if err := s.store.DeleteProduct(ctx, id); err != nil {
		return nil, s.storeError(err, productID.missing)
	}
	return &portalv1.DeleteProductResponse{Status: deleted}, nil
}

func applyProduct(p *store.Product, in *portalv1.ProductInput, now time.Time) {
	set(&p.Name, in.Name)
	set(&p.DisplayName, in.DisplayName)
	set(&p.Description, in.Description)
	set(&p.Path, in.Path)
	set(&p.Content, in.Content)
	if in.PolicyIds != nil {
		p.PolicyIDs = dedupe(in.PolicyIds.GetIds())
	}
	if in.PlanIds != nil {
		refs, _ := labelIDs(nil, "PlanIDs", "plan", in.PlanIds)
		p.PlanIDs = []uint32{}
		for _, r := range refs {
			p.PlanIDs = append(p.PlanIDs, r.id)
		}
	}
	p.UpdatedAt = now
}

// checkOffer is 422 unless every plan the product is to offer exists and
// every policy it is to grant is a management policy (asked of
// management: 503 without it).
func (s *Server) checkOffer(ctx context.Context, in *portalv1.ProductInput) error {
	var msgs []string
	if in.PlanIds != nil {
		refs, _ := labelIDs(nil, "PlanIDs", "plan", in.PlanIds)
		ids := make([]uint32, 0, len(refs))
		for _, r := range refs {
			if r.id == 0 {
				msgs = append(msgs, fmt.Sprintf("PlanIDs: there is no plan with ID %s", quote(r.text)))
				continue
			}
			ids = append(ids, r.id)
		}
		missing, err := s.cons.MissingPlans(ctx, ids)
		if err != nil {
			return s.storeError(err, errInternal)
		}
		for _, id := range missing {
			msgs = append(msgs, fmt.Sprintf("PlanIDs: there is no plan with ID \"%d\"", id))
		}
	}
	if len(msgs) > 0 {
		return invalid(msgs)
	}
	if in.PolicyIds != nil {
		if err := s.cons.CheckPolicies(ctx, "PolicyIDs", dedupe(in.PolicyIds.GetIds())); err != nil {
			return s.consumerError(err, errInternal)
		}
	}
	return nil
}

// dedupe keeps the first of each value, in order.
func dedupe(list []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, v := range list {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func productMessage(p store.Product) *portalv1.Product {
	return &portalv1.Product{
		Id: p.ID, Name: p.Name, DisplayName: p.DisplayName, Description: p.Description, Path: p.Path, Content: p.Content,
		CreatedAt: formatTime(p.CreatedAt), UpdatedAt: formatTime(p.UpdatedAt),
		PolicyIds: append([]string{}, p.PolicyIDs...), PlanIds: idTexts(p.PlanIDs),
	}
}

// idTexts writes IDs as the decimal text the API uses for ID lists.
func idTexts(ids []uint32) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, strconv.FormatUint(uint64(id), 10))
	}
	return out
}
