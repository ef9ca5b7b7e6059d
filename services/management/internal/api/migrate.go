package api

import (
	"context"

	"google.golang.org/genproto/googleapis/api/httpbody"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/services/management/internal/migration"
)

// Migrate translates the wire request for the migration engine and its
// report back (CONTRACT §2 "Migrate").
func (s *Server) Migrate(ctx context.Context, req *managementv1.MigrateRequest) (*managementv1.MigrateResponse, error) {
	rep, err := s.migration.Run(ctx, migration.Request{
		Mode:           migration.Mode(req.GetMode()),
		APIIDs:         req.GetApiIds(),
		All:            req.GetAll(),
		AbortOnFailure: req.GetAbortOnFailure(),
		OverrideStaged: req.GetOverrideStaged(),
	})
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.MigrateResponse{Report: &httpbody.HttpBody{ContentType: jsonType, Data: rep.JSON()}}, nil
}
