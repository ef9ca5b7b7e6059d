package api

import (
	"context"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
)

// ListAuditLogs answers a page of the audit log, newest first (CONTRACT §2).
func (s *Server) ListAuditLogs(ctx context.Context, req *managementv1.ListAuditLogsRequest) (*managementv1.ListAuditLogsResponse, error) {
	offset, limit, err := paging(req.P)
	if err != nil {
		return nil, err
	}
	page := 0 // every entry
	if limit > 0 {
		page = offset/pageSize + 1
	}
	q, err := audit.NewQuery(page, pageSize, req.GetUserId(), req.GetAction(), req.GetFrom(), req.GetTo())
	if err != nil {
		return nil, badRequest(err.Error())
	}
	entries, total, err := s.audit.List(ctx, q)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	resp := &managementv1.ListAuditLogsResponse{Logs: make([]*managementv1.AuditLogEntry, 0, len(entries)), Pages: pages(total)}
	if limit < 0 {
		resp.Pages = min(resp.Pages, 1)
	}
	for _, e := range entries {
		resp.Logs = append(resp.Logs, &managementv1.AuditLogEntry{Id: e.ID, Time: audit.Timestamp(e.Time), UserId: e.UserID,
			UserEmail: e.UserEmail, Action: e.Action, ObjectId: e.ObjectID, Status: int32(e.Status), RemoteAddr: e.RemoteAddr})
	}
	return resp, nil
}
