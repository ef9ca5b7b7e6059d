package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/liststream"
	"github.com/gatehouse/gatehouse/services/management/internal/category"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// ListCategories answers from the counts of the store's revision. Over
// REST the answer's bytes are kept for that revision (the answer is the
// same for every caller allowed to ask), so a repeated GET writes them
// again instead of building and marshalling the message.
func (s *Server) ListCategories(ctx context.Context, _ *managementv1.ListCategoriesRequest) (*managementv1.ListCategoriesResponse, error) {
	cats, rev, known, err := s.store.CategoryCountsAt(ctx)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	if known {
		if b, ok := s.categoriesJSON.Get(rev); ok && liststream.Answer(ctx, b) {
			return &managementv1.ListCategoriesResponse{}, nil
		}
	}
	resp := &managementv1.ListCategoriesResponse{Categories: make([]*managementv1.CategoryCount, 0, len(cats))}
	for _, c := range cats {
		resp.Categories = append(resp.Categories, &managementv1.CategoryCount{Name: c.Name, Count: int32(c.Count)})
	}
	if known {
		if b, ok, err := liststream.Marshal(ctx, resp); ok && err == nil {
			s.categoriesJSON.Set(rev, b)
			if liststream.Answer(ctx, b) {
				return &managementv1.ListCategoriesResponse{}, nil
			}
		}
	}
	return resp, nil
}

// categoriesError maps a store error of the categories calls: an
// unreadable record is the contract's 500.
func (s *Server) categoriesError(err error) error {
	if errors.Is(err, store.ErrCorrupt) {
		s.log.Error("stored categories unreadable", "err", err)
		return errCategoriesCorrupt
	}
	return s.storeError(err, errAPINotFound)
}

func (s *Server) GetAPICategories(ctx context.Context, req *managementv1.GetAPICategoriesRequest) (*managementv1.GetAPICategoriesResponse, error) {
	a, err := s.getOAS(ctx, req.GetApiId())
	if err != nil {
		return nil, s.categoriesError(err)
	}
	cats := a.Categories
	if cats == nil {
		cats = []string{}
	}
	return &managementv1.GetAPICategoriesResponse{Categories: cats}, nil
}

// checkLabels refuses labels the index cannot hold or a listing cannot show.
func checkLabels(labels []string) error {
	for i, l := range labels {
		l = strings.TrimSpace(l)
		if len(l) > category.MaxLen {
			return badRequest(fmt.Sprintf("categories[%d] is longer than %d bytes", i, category.MaxLen))
		}
		if strings.ContainsFunc(l, unicode.IsControl) {
			return badRequest(fmt.Sprintf("categories[%d] holds a control character", i))
		}
	}
	return nil
}

func (s *Server) UpdateAPICategories(ctx context.Context, req *managementv1.UpdateAPICategoriesRequest) (*managementv1.UpdateAPICategoriesResponse, error) {
	if err := checkLabels(req.GetCategories()); err != nil {
		return nil, err
	}
	labels := category.Normalize(req.GetCategories())
	err := s.store.UpdateAPI(ctx, req.GetApiId(), store.OAS, func(a store.API) (store.API, error) {
		a.Categories = labels
		return s.records.Derived(a), nil
	})
	if err != nil {
		return nil, s.categoriesError(err)
	}
	return &managementv1.UpdateAPICategoriesResponse{Status: "OK", Message: "API categories updated."}, nil
}
