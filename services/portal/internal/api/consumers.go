package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// The admin routes of the consumer side (CONTRACT §3 "Consumers"): plans,
// developers (/portal-api/users), apps and their credentials, access
// requests. Every one calls internal/consumers, which pairs store writes
// with management calls.

var (
	planID = idKind{"plan_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid plan ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "Plan not found")}
	userID = idKind{"user_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid user ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "User not found")}
	appID = idKind{"app_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid app ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "App not found")}
	credentialID = idKind{"credential_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid credential ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "Credential not found")}
	requestID = idKind{"request_id",
		rest.Error(codes.InvalidArgument, http.StatusBadRequest, "Invalid access request ID: it must be a positive integer"),
		rest.Error(codes.NotFound, http.StatusNotFound, "Access request not found")}
	errBadStatus = rest.Error(codes.InvalidArgument, http.StatusBadRequest, "status must be one of pending, approved, rejected")
)

// consumerError maps the consumer service's errors to answers: 503 naming
// the missing setting or the failed management call, 422 for a request's
// problems (and for a key management refused), the not-found of the route.
func (s *Server) consumerError(err error, notFound error) error {
	var invalidErr *consumers.Invalid
	var mgmt *consumers.ManagementError
	switch {
	case errors.Is(err, consumers.ErrNoManagement):
		return rest.Error(codes.Unavailable, http.StatusServiceUnavailable, "This route needs management: start the portal with --management-grpc-addr and --management-key-file")
	case errors.As(err, &invalidErr):
		return invalid(invalidErr.Problems)
	case errors.Is(err, consumers.ErrNotPending):
		return rest.Error(codes.FailedPrecondition, http.StatusUnprocessableEntity, "The access request is not pending")
	case errors.As(err, &mgmt):
		st := status.Convert(mgmt.Err)
		switch st.Code() {
		case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.AlreadyExists:
			return rest.Error(codes.FailedPrecondition, http.StatusUnprocessableEntity, fmt.Sprintf("Management refused the %s: %s", mgmt.Op, st.Message()))
		}
		s.log.Warn("management call failed", "op", mgmt.Op, "code", st.Code().String())
		return rest.Error(codes.Unavailable, http.StatusServiceUnavailable, fmt.Sprintf("Management did not answer the %s (%s); nothing changed", mgmt.Op, st.Code()))
	}
	return s.storeError(err, notFound)
}

func planMessage(p store.Plan) *portalv1.Plan {
	return &portalv1.Plan{Id: p.ID, Name: p.Name, PolicyId: p.PolicyID, AutoApprove: p.AutoApprove,
		CreatedAt: formatTime(p.CreatedAt), UpdatedAt: formatTime(p.UpdatedAt)}
}

func planInputProblems(in *portalv1.PlanInput) []string {
	var msgs []string
	msgs = text(msgs, "Name", in.Name, maxShort, true)
	return text(msgs, "PolicyID", in.PolicyId, maxShort, true)
}

func (s *Server) CreatePlan(ctx context.Context, req *portalv1.CreatePlanRequest) (*portalv1.CreatePlanResponse, error) {
	in := req.GetPlan()
	if in == nil {
		in = &portalv1.PlanInput{}
	}
	msgs := planInputProblems(in)
	if in.Name == nil {
		msgs = append(msgs, "Name is required")
	}
	if in.PolicyId == nil {
		msgs = append(msgs, "PolicyID is required")
	}
	if len(msgs) > 0 {
		return nil, invalid(msgs)
	}
	p, err := s.cons.CreatePlan(ctx, in.GetName(), in.GetPolicyId(), in.GetAutoApprove())
	if err != nil {
		return nil, s.consumerError(err, errInternal)
	}
	rest.SetStatus(ctx, http.StatusCreated)
	rest.SetHeader(ctx, "Location", "/portal-api/plans/"+strconv.FormatUint(uint64(p.ID), 10))
	return &portalv1.CreatePlanResponse{Plan: planMessage(p)}, nil
}

func (s *Server) ListPlans(ctx context.Context, _ *portalv1.ListPlansRequest) (*portalv1.ListPlansResponse, error) {
	if s.streamAll(ctx, s.consumerError, func(item func(proto.Message) error) error {
		return s.cons.EachPlan(ctx, func(p store.Plan) error { return item(planMessage(p)) })
	}) {
		return &portalv1.ListPlansResponse{}, nil
	}
	list, err := s.cons.Plans(ctx)
	if err != nil {
		return nil, s.consumerError(err, errInternal)
	}
	resp := &portalv1.ListPlansResponse{Plans: make([]*portalv1.Plan, 0, len(list))}
	for _, p := range list {
		resp.Plans = append(resp.Plans, planMessage(p))
	}
	return resp, nil
}

func (s *Server) GetPlan(ctx context.Context, req *portalv1.GetPlanRequest) (*portalv1.GetPlanResponse, error) {
	id, err := pathID(req.GetPlanId(), planID)
	if err != nil {
		return nil, err
	}
	p, err := s.cons.Plan(ctx, id)
	if err != nil {
		return nil, s.consumerError(err, planID.missing)
	}
	return &portalv1.GetPlanResponse{Plan: planMessage(p)}, nil
}

func (s *Server) UpdatePlan(ctx context.Context, req *portalv1.UpdatePlanRequest) (*portalv1.UpdatePlanResponse, error) {
	id, err := pathID(req.GetPlanId(), planID)
	if err != nil {
		return nil, err
	}
	in := req.GetPlan()
	if in == nil {
		in = &portalv1.PlanInput{}
	}
	if msgs := planInputProblems(in); len(msgs) > 0 {
		return nil, invalid(msgs)
	}
	p, err := s.cons.UpdatePlan(ctx, id, in.Name, in.PolicyId, in.AutoApprove)
	if err != nil {
		return nil, s.consumerError(err, planID.missing)
	}
	return &portalv1.UpdatePlanResponse{Plan: planMessage(p)}, nil
}

func (s *Server) DeletePlan(ctx context.Context, req *portalv1.DeletePlanRequest) (*portalv1.DeletePlanResponse, error) {
	id, err := pathID(req.GetPlanId(), planID)
	if err != nil {
		return nil, err
	}
	if err := s.cons.DeletePlan(ctx, id); err != nil {
		return nil, s.consumerError(err, planID.missing)
	}
	return &portalv1.DeletePlanResponse{Status: deleted}, nil
}

func developerMessage(d store.Developer) *portalv1.Developer {
	return &portalv1.Developer{Id: d.ID, Email: d.Email, Name: d.Name, Active: d.Active, CreatedAt: formatTime(d.CreatedAt)}
}

func (s *Server) ListDevelopers(ctx context.Context, _ *portalv1.ListDevelopersRequest) (*portalv1.ListDevelopersResponse, error) {
	if s.streamAll(ctx, s.consumerError, func(item func(proto.Message) error) error {
		return s.cons.EachDeveloper(ctx, func(d store.Developer) error { return item(developerMessage(d)) })
	}) {
		return &portalv1.ListDevelopersResponse{}, nil
	}
	list, err := s.cons.Developers(ctx)
	if err != nil {
		return nil, s.consumerError(err, errInternal)
	}
	resp := &portalv1.ListDevelopersResponse{Users: make([]*portalv1.Developer, 0, len(list))}
	for _, d := range list {
		resp.Users = append(resp.Users, developerMessage(d))
	}
	return resp, nil
}

func (s *Server) GetDeveloper(ctx context.Context, req *portalv1.GetDeveloperRequest) (*portalv1.GetDeveloperResponse, error) {
	id, err := pathID(req.GetUserId(), userID)
	if err != nil {
		return nil, err
	}
	d, err := s.cons.Developer(ctx, id)
	if err != nil {
		return nil, s.consumerError(err, userID.missing)
	}
	return &portalv1.GetDeveloperResponse{User: developerMessage(d)}, nil
}

func (s *Server) UpdateDeveloper(ctx context.Context, req *portalv1.UpdateDeveloperRequest) (*portalv1.UpdateDeveloperResponse, error) {
	id, err := pathID(req.GetUserId(), userID)
	if err != nil {
		return nil, err
	}
	in := req.GetUser()
	if in == nil {
		in = &portalv1.DeveloperInput{}
	}
	if msgs := text(nil, "Name", in.Name, maxShort, true); len(msgs) > 0 {
		return nil, invalid(msgs)
	}
	d, err := s.cons.SetDeveloper(ctx, id, in.Name, in.Active)
	if err != nil {
		return nil, s.consumerError(err, userID.missing)
	}
	return &portalv1.UpdateDeveloperResponse{User: developerMessage(d)}, nil
}

func (s *Server) DeleteDeveloper(ctx context.Context, req *portalv1.DeleteDeveloperRequest) (*portalv1.DeleteDeveloperResponse, error) {
	id, err := pathID(req.GetUserId(), userID)
	if err != nil {
		return nil, err
	}
	if err := s.cons.DeleteDeveloper(ctx, id); err != nil {
		return nil, s.consumerError(err, userID.missing)
	}
	return &portalv1.DeleteDeveloperResponse{Status: deleted}, nil
}

func appMessage(a store.App) *portalv1.App {
	m := &portalv1.App{Id: a.ID, Name: a.Name, Description: a.Description, UserId: a.UserID, Credentials: []*portalv1.AppCredential{}}
	for _, c := range a.Credentials {
		m.Credentials = append(m.Credentials, &portalv1.AppCredential{Id: c.ID, ProductId: c.ProductID, PlanId: c.PlanID,
			KeyHash: c.KeyHash, CreatedAt: formatTime(c.CreatedAt)})
	}
	return m
}

func (s *Server) ListApps(ctx context.Context, _ *portalv1.ListAppsRequest) (*portalv1.ListAppsResponse, error) {
	if s.streamAll(ctx, s.consumerError, func(item func(proto.Message) error) error {
		return s.cons.EachApp(ctx, func(a store.App) error { return item(appMessage(a)) })
	}) {
		return &portalv1.ListAppsResponse{}, nil
	}
	list, err := s.cons.Apps(ctx)
	if err != nil {
		return nil, s.consumerError(err, errInternal)
	}
	resp := &portalv1.ListAppsResponse{Apps: make([]*portalv1.App, 0, len(list))}
	for _, a := range list {
		resp.Apps = append(resp.Apps, appMessage(a))
	}
	return resp, nil
}

func (s *Server) GetApp(ctx context.Context, req *portalv1.GetAppRequest) (*portalv1.GetAppResponse, error) {
	id, err := pathID(req.GetAppId(), appID)
	if err != nil {
		return nil, err
	}
	a, err := s.cons.App(ctx, id)
	if err != nil {
		return nil, s.consumerError(err, appID.missing)
	}
	return &portalv1.GetAppResponse{App: appMessage(a)}, nil
}

func (s *Server) DeleteApp(ctx context.Context, req *portalv1.DeleteAppRequest) (*portalv1.DeleteAppResponse, error) {
	id, err := pathID(req.GetAppId(), appID)
	if err != nil {
		return nil, err
	}
	if err := s.cons.DeleteApp(ctx, id); err != nil {
		return nil, s.consumerError(err, appID.missing)
	}
	return &portalv1.DeleteAppResponse{Status: deleted}, nil
}

func (s *Server) DeleteAppCredential(ctx context.Context, req *portalv1.DeleteAppCredentialRequest) (*portalv1.DeleteAppCredentialResponse, error) {
	app, err := pathID(req.GetAppId(), appID)
	if err != nil {
		return nil, err
	}
	cred, err := pathID(req.GetCredentialId(), credentialID)
	if err != nil {
		return nil, err
	}
	if err := s.cons.RevokeCredential(ctx, app, cred); err != nil {
		return nil, s.consumerError(err, credentialID.missing)
	}
	return &portalv1.DeleteAppCredentialResponse{Status: deleted}, nil
}

func requestMessage(r store.AccessRequest) *portalv1.AccessRequest {
	return &portalv1.AccessRequest{Id: r.ID, UserId: r.UserID, AppId: r.AppID, ProductId: r.ProductID, PlanId: r.PlanID,
		Status: r.Status, Error: r.Error, CreatedAt: formatTime(r.CreatedAt), UpdatedAt: formatTime(r.UpdatedAt)}
}

func (s *Server) ListAccessRequests(ctx context.Context, req *portalv1.ListAccessRequestsRequest) (*portalv1.ListAccessRequestsResponse, error) {
	st := req.GetStatus()
	switch st {
	case "", store.RequestPending, store.RequestApproved, store.RequestRejected:
	default:
		return nil, errBadStatus
	}
	if s.streamAll(ctx, s.consumerError, func(item func(proto.Message) error) error {
		return s.cons.EachAccessRequest(ctx, st, func(r store.AccessRequest) error { return item(requestMessage(r)) })
	}) {
		return &portalv1.ListAccessRequestsResponse{}, nil
	}
	list, err := s.cons.AccessRequests(ctx, st)
	if err != nil {
		return nil, s.consumerError(err, errInternal)
	}
	resp := &portalv1.ListAccessRequestsResponse{AccessRequests: make([]*portalv1.AccessRequest, 0, len(list))}
	for _, r := range list {
		resp.AccessRequests = append(resp.AccessRequests, requestMessage(r))
	}
	return resp, nil
}

func (s *Server) ApproveAccessRequest(ctx context.Context, req *portalv1.ApproveAccessRequestRequest) (*portalv1.ApproveAccessRequestResponse, error) {
	id, err := pathID(req.GetRequestId(), requestID)
	if err != nil {
		return nil, err
	}
	r, err := s.cons.Approve(ctx, id)
	if err != nil {
		return nil, s.consumerError(err, requestID.missing)
	}
	return &portalv1.ApproveAccessRequestResponse{AccessRequest: requestMessage(r)}, nil
}

func (s *Server) RejectAccessRequest(ctx context.Context, req *portalv1.RejectAccessRequestRequest) (*portalv1.RejectAccessRequestResponse, error) {
	id, err := pathID(req.GetRequestId(), requestID)
	if err != nil {
		return nil, err
	}
	r, err := s.cons.Reject(ctx, id)
	if err != nil {
		return nil, s.consumerError(err, requestID.missing)
	}
	return &portalv1.RejectAccessRequestResponse{AccessRequest: requestMessage(r)}, nil
}
