package api

import (
	"context"
	"net/http"
	"strconv"

	"google.golang.org/grpc/codes"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// ListAuditLogs answers a page of the audit log, newest first, in the
// studio's paging style (page, page_size, X-Total-Count, X-Total-Pages).
func (s *Server) ListAuditLogs(ctx context.Context, req *studiov1.ListAuditLogsRequest) (*studiov1.ListAuditLogsResponse, error) {
	page, size, err := paging(req.Page, req.PageSize)
	if err != nil {
		return nil, err
	}
	q, err := audit.NewQuery(int(page), int(size), req.GetUserId(), req.GetAction(), req.GetFrom(), req.GetTo())
	if err != nil {
		return nil, rest.Error(codes.InvalidArgument, http.StatusBadRequest, err.Error())
	}
	entries, total, err := s.audit.List(ctx, q)
	if err != nil {
		return nil, s.status(err, nil)
	}
	rest.SetHeader(ctx, "X-Total-Count", strconv.Itoa(total))
	rest.SetHeader(ctx, "X-Total-Pages", strconv.Itoa((total+int(size)-1)/int(size)))
	resp := &studiov1.ListAuditLogsResponse{Data: make([]*studiov1.AuditLog, 0, len(entries))}
	for _, e := range entries {
		resp.Data = append(resp.Data, &studiov1.AuditLog{Type: "audit-logs", Id: e.ID, Attributes: &studiov1.AuditLogAttributes{
			Time: audit.Timestamp(e.Time), UserId: e.UserID, UserEmail: e.UserEmail, Action: e.Action,
			ObjectId: e.ObjectID, Status: int32(e.Status), RemoteAddr: e.RemoteAddr}})
	}
	return resp, nil
}
