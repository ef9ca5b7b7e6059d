package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// label describes one kind of label for the shared handlers.
type label struct {
	kind store.LabelKind
	noun string
	id   idKind
}

var (
	tagLabel      = label{store.Tags, "tag", tagID}
	categoryLabel = label{store.Categories, "category", categoryID}
)

// createLabel stores a tag or category: 422 for a missing, over-long or taken name.
func (s *Server) createLabel(ctx context.Context, l label, name string) (store.Label, error) {
	msgs := labelFieldProblems(name)
	if name == "" {
		msgs = append(msgs, "Name is required")
	}
	if len(msgs) > 0 {
		return store.Label{}, invalid(msgs)
	}
	created, err := s.store.CreateLabel(ctx, l.kind, name)
	if errors.Is(err, store.ErrAlreadyExists) {
		return store.Label{}, l.taken(name)
	}
	if err != nil {
		return store.Label{}, s.storeError(err, errInternal)
	}
	rest.SetStatus(ctx, http.StatusCreated)
	return created, nil
}

// getLabel reads a tag or category: 400 for an ID that is not a positive integer, 404 when there is none.
func (s *Server) getLabel(ctx context.Context, l label, idText string) (store.Label, error) {
	id, err := pathID(idText, l.id)
	if err != nil {
		return store.Label{}, err
	}
	got, err := s.store.GetLabel(ctx, l.kind, id)
	if err != nil {
		return store.Label{}, s.storeError(err, l.id.missing)
	}
	return got, nil
}

// renameLabel gives a tag or category a new name: 400 and 404 as getLabel,
// 422 for a missing, over-long or taken name.
func (s *Server) renameLabel(ctx context.Context, l label, idText, name string) (store.Label, error) {
	id, err := pathID(idText, l.id)
	if err != nil {
		return store.Label{}, err
	}
	msgs := labelFieldProblems(name)
	if name == "" {
		msgs = append(msgs, "Name is required")
	}
	if len(msgs) > 0 {
		return store.Label{}, invalid(msgs)
	}
	renamed, err := s.store.RenameLabel(ctx, l.kind, id, name)
	if errors.Is(err, store.ErrAlreadyExists) {
		return store.Label{}, l.taken(name)
	}
	if err != nil {
		return store.Label{}, s.storeError(err, l.id.missing)
	}
	return renamed, nil
}

// taken is the 422 for a name another label of the kind has.
func (l label) taken(name string) error {
	return rest.Error(codes.AlreadyExists, http.StatusUnprocessableEntity, fmt.Sprintf("Name: a %s named %s already exists", l.noun, quote(name)))
}

func (s *Server) deleteLabel(ctx context.Context, l label, idText string) error {
	id, err := pathID(idText, l.id)
	if err != nil {
		return err
	}
	if err := s.store.DeleteLabel(ctx, l.kind, id); err != nil {
		return s.storeError(err, l.id.missing)
	}
	return nil
}

func (s *Server) CreateTag(ctx context.Context, req *portalv1.CreateTagRequest) (*portalv1.CreateTagResponse, error) {
	l, err := s.createLabel(ctx, tagLabel, req.GetTag().GetName())
	if err != nil {
		return nil, err
	}
	return &portalv1.CreateTagResponse{Tag: &portalv1.Tag{Id: l.ID, Name: l.Name}}, nil
}

func (s *Server) ListTags(ctx context.Context, _ *portalv1.ListTagsRequest) (*portalv1.ListTagsResponse, error) {
	if s.streamAll(ctx, s.storeError, func(item func(proto.Message) error) error {
		return s.store.EachLabel(ctx, store.Tags, func(l store.Label) error { return item(&portalv1.Tag{Id: l.ID, Name: l.Name}) })
	}) {
		return &portalv1.ListTagsResponse{}, nil
	}
	list, err := s.store.ListLabels(ctx, store.Tags)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	resp := &portalv1.ListTagsResponse{Tags: make([]*portalv1.Tag, 0, len(list))}
	for _, l := range list {
		resp.Tags = append(resp.Tags, &portalv1.Tag{Id: l.ID, Name: l.Name})
	}
	return resp, nil
}

func (s *Server) DeleteTag(ctx context.Context, req *portalv1.DeleteTagRequest) (*portalv1.DeleteTagResponse, error) {
	if err := s.deleteLabel(ctx, tagLabel, req.GetTagId()); err != nil {
		return nil, err
	}
	return &portalv1.DeleteTagResponse{Status: deleted}, nil
}

func (s *Server) CreateCategory(ctx context.Context, req *portalv1.CreateCategoryRequest) (*portalv1.CreateCategoryResponse, error) {
	l, err := s.createLabel(ctx, categoryLabel, req.GetCategory().GetName())
	if err != nil {
		return nil, err
	}
	return &portalv1.CreateCategoryResponse{Category: &portalv1.Category{Id: l.ID, Name: l.Name}}, nil
}

func (s *Server) ListCategories(ctx context.Context, _ *portalv1.ListCategoriesRequest) (*portalv1.ListCategoriesResponse, error) {
	if s.streamAll(ctx, s.storeError, func(item func(proto.Message) error) error {
		return s.store.EachLabel(ctx, store.Categories, func(l store.Label) error { return item(&portalv1.Category{Id: l.ID, Name: l.Name}) })
	}) {
		return &portalv1.ListCategoriesResponse{}, nil
	}
	list, err := s.store.ListLabels(ctx, store.Categories)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	resp := &portalv1.ListCategoriesResponse{Categories: make([]*portalv1.Category, 0, len(list))}
	for _, l := range list {
		resp.Categories = append(resp.Categories, &portalv1.Category{Id: l.ID, Name: l.Name})
	}
	return resp, nil
}

func (s *Server) DeleteCategory(ctx context.Context, req *portalv1.DeleteCategoryRequest) (*portalv1.DeleteCategoryResponse, error) {
	if err := s.deleteLabel(ctx, categoryLabel, req.GetCategoryId()); err != nil {
		return nil, err
	}
	return &portalv1.DeleteCategoryResponse{Status: deleted}, nil
}

func (s *Server) GetTag(ctx context.Context, req *portalv1.GetTagRequest) (*portalv1.GetTagResponse, error) {
	l, err := s.getLabel(ctx, tagLabel, req.GetTagId())
	if err != nil {
		return nil, err
	}
	return &portalv1.GetTagResponse{Tag: &portalv1.Tag{Id: l.ID, Name: l.Name}}, nil
}

func (s *Server) UpdateTag(ctx context.Context, req *portalv1.UpdateTagRequest) (*portalv1.UpdateTagResponse, error) {
	l, err := s.renameLabel(ctx, tagLabel, req.GetTagId(), req.GetTag().GetName())
	if err != nil {
		return nil, err
	}
	return &portalv1.UpdateTagResponse{Tag: &portalv1.Tag{Id: l.ID, Name: l.Name}}, nil
}

func (s *Server) GetCategory(ctx context.Context, req *portalv1.GetCategoryRequest) (*portalv1.GetCategoryResponse, error) {
	l, err := s.getLabel(ctx, categoryLabel, req.GetCategoryId())
	if err != nil {
		return nil, err
	}
	return &portalv1.GetCategoryResponse{Category: &portalv1.Category{Id: l.ID, Name: l.Name}}, nil
}

func (s *Server) UpdateCategory(ctx context.Context, req *portalv1.UpdateCategoryRequest) (*portalv1.UpdateCategoryResponse, error) {
	l, err := s.renameLabel(ctx, categoryLabel, req.GetCategoryId(), req.GetCategory().GetName())
	if err != nil {
		return nil, err
	}
	return &portalv1.UpdateCategoryResponse{Category: &portalv1.Category{Id: l.ID, Name: l.Name}}, nil
}
