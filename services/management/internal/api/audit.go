package api

import (
	"context"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/liststream"
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
	// every entry: written as it is read (a REST request), not held
	if limit < 0 && liststream.Stream(ctx, func(w *liststream.Writer) error {
		err := s.audit.Each(ctx, q, func(total int) error {
			return w.Begin(&managementv1.ListAuditLogsResponse{Pages: min(pages(total), 1)}, "logs", false)
		}, func(e audit.Entry) error { return w.Item(auditEntry(e)) })
		if err == nil {
			err = w.End()
		}
		if err != nil {
			return s.storeError(err, errInternal)
		}
		return nil
	}) {
		return &managementv1.ListAuditLogsResponse{}, nil
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
		resp.Logs = append(resp.Logs, auditEntry(e))
	}
	return resp, nil
}

func auditEntry(e audit.Entry) *managementv1.AuditLogEntry {
	return &managementv1.AuditLogEntry{Id: e.ID, Time: audit.Timestamp(e.Time), UserId: e.UserID,
		UserEmail: e.UserEmail, Action: e.Action, ObjectId: e.ObjectID, Status: int32(e.Status), RemoteAddr: e.RemoteAddr}
}
