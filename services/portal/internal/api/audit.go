package api

import (
	"context"
	"net/http"

	"google.golang.org/grpc/codes"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// ListAuditLogs answers a page of the audit log, newest first, in the
// portal's paging style (page, per_page, a bare array).
func (s *Server) ListAuditLogs(ctx context.Context, req *portalv1.ListAuditLogsRequest) (*portalv1.ListAuditLogsResponse, error) {
	offset, limit, err := paging(req.Page, req.PerPage)
	if err != nil {
		return nil, err
	}
	q, err := audit.NewQuery(offset/limit+1, limit, req.GetUserId(), req.GetAction(), req.GetFrom(), req.GetTo())
	if err != nil {
		return nil, rest.Error(codes.InvalidArgument, http.StatusBadRequest, err.Error())
	}
	entries, _, err := s.audit.List(ctx, q)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	resp := &portalv1.ListAuditLogsResponse{Logs: make([]*portalv1.AuditLogEntry, 0, len(entries))}
	for _, e := range entries {
		resp.Logs = append(resp.Logs, &portalv1.AuditLogEntry{Id: e.ID, Time: audit.Timestamp(e.Time), UserId: e.UserID,
			UserEmail: e.UserEmail, Action: e.Action, ObjectId: e.ObjectID, Status: int32(e.Status), RemoteAddr: e.RemoteAddr})
	}
	return resp, nil
}
