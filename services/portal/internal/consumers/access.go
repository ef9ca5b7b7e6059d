package consumers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// CreatePlan stores a plan; its PolicyID must name a management policy.
func (s *Service) CreatePlan(ctx context.Context, name, policyID string, autoApprove bool) (store.Plan, error) {
	if err := s.checkPlan(ctx, name, policyID); err != nil {
		return store.Plan{}, err
	}
	now := s.now().UTC()
	return s.store.CreatePlan(ctx, store.Plan{Name: name, PolicyID: policyID, AutoApprove: autoApprove, CreatedAt: now, UpdatedAt: now})
}

// UpdatePlan changes the fields given.
func (s *Service) UpdatePlan(ctx context.Context, id uint32, name, policyID *string, autoApprove *bool) (store.Plan, error) {
	p, err := s.store.GetPlan(ctx, id)
	if err != nil {
		return p, err
	}
	n, pol := p.Name, p.PolicyID
	if name != nil {
		n = *name
	}
	if policyID != nil {
		pol = *policyID
	}
	if name != nil || policyID != nil {
		if err := s.checkPlan(ctx, n, pol); err != nil {
			return p, err
		}
	}
	return s.store.UpdatePlan(ctx, id, func(p *store.Plan) error {
		p.Name, p.PolicyID = n, pol
		if autoApprove != nil {
			p.AutoApprove = *autoApprove
		}
		p.UpdatedAt = s.now().UTC()
		return nil
	})
}

func (s *Service) checkPlan(ctx context.Context, name, policyID string) error {
	problems := textProblems("Name", name, maxName, true)
	problems = append(problems, textProblems("PolicyID", policyID, maxName, true)...)
	if len(problems) > 0 {
		return &Invalid{problems}
	}
	return s.CheckPolicies(ctx, "PolicyID", []string{policyID})
}

// CheckPolicies is a 422 naming field unless every id names a management policy.
func (s *Service) CheckPolicies(ctx context.Context, field string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.needKeys(); err != nil {
		return err
	}
	missing, err := s.keys.MissingPolicies(ctx, ids)
	if err != nil {
		return &ManagementError{"policy check", err}
	}
	var problems []string
	for _, id := range missing {
		problems = append(problems, fmt.Sprintf("%s: no management policy has the id %q", field, id))
	}
	if problems != nil {
		return &Invalid{problems}
	}
	return nil
}

// Plans lists every plan; Plan reads one; DeletePlan removes one (and
// from every product's PlanIDs).
func (s *Service) Plans(ctx context.Context) ([]store.Plan, error) { return s.store.ListPlans(ctx) }

// EachPlan calls fn with every plan, from one snapshot.
func (s *Service) EachPlan(ctx context.Context, fn func(store.Plan) error) error {
	return s.store.EachPlan(ctx, fn)
}
func (s *Service) Plan(ctx context.Context, id uint32) (store.Plan, error) {
	return s.store.GetPlan(ctx, id)
}
func (s *Service) DeletePlan(ctx context.Context, id uint32) error {
	return s.store.DeletePlan(ctx, id)
}

// MissingPlans returns the ids among ids that name no plan.
func (s *Service) MissingPlans(ctx context.Context, ids []uint32) ([]uint32, error) {
	return s.store.MissingPlans(ctx, ids)
}

// AccessRequests lists the requests with a status ("" for all).
func (s *Service) AccessRequests(ctx context.Context, status string) ([]store.AccessRequest, error) {
	return s.store.ListAccessRequests(ctx, status)
}

// EachAccessRequest calls fn with every request with a status ("" for
// all), from one snapshot.
func (s *Service) EachAccessRequest(ctx context.Context, status string, fn func(store.AccessRequest) error) error {
	return s.store.EachAccessRequest(ctx, status, fn)
}

// RequestAccess files a developer's request for a product's plan for one
// of their apps; a plan with AutoApprove is approved at once (a failed
// approval leaves the request pending with its error, and still answers it).
func (s *Service) RequestAccess(ctx context.Context, sg Signed, appID, productID, planID uint32) (store.AccessRequest, error) {
	product, err := s.store.GetProduct(ctx, productID)
	if err != nil {
		return store.AccessRequest{}, err
	}
	if !slices.Contains(product.PlanIDs, planID) {
		return store.AccessRequest{}, &Invalid{[]string{"this product does not offer that plan"}}
	}
	plan, err := s.store.GetPlan(ctx, planID)
	if err != nil {
		return store.AccessRequest{}, &Invalid{[]string{"this product does not offer that plan"}}
	}
	now := s.now().UTC()
	r, err := s.store.CreateAccessRequest(ctx, store.AccessRequest{UserID: sg.Developer.ID, AppID: appID, ProductID: productID, PlanID: planID,
		Status: store.RequestPending, CreatedAt: now, UpdatedAt: now})
	if err != nil || !plan.AutoApprove {
		return r, err
	}
	if approved, err := s.Approve(ctx, r.ID); err == nil {
		return approved, nil
	}
	return s.store.GetAccessRequest(ctx, r.ID)
}

// Approve asks management for a key with the product's policies and the
// plan's, then records it in the app and approves the request in one
// transaction. A failed call leaves the request pending with the error
// named; a request decided meanwhile gets its new key deleted again.
func (s *Service) Approve(ctx context.Context, id uint32) (store.AccessRequest, error) {
	r, err := s.store.GetAccessRequest(ctx, id)
	if err != nil {
		return r, err
	}
	if r.Status != store.RequestPending {
		return r, ErrNotPending
	}
	if err := s.needKeys(); err != nil {
		return r, err
	}
	spec, err := s.keySpec(ctx, r)
	if err != nil {
		return s.pendingWith(ctx, r, err)
	}
	key, hash, err := s.keys.CreateKey(ctx, spec)
	if err != nil {
		return s.pendingWith(ctx, r, &ManagementError{"key create", err})
	}
	out, _, err := s.store.Grant(ctx, id, store.AppCredential{KeyHash: hash, KeyTail: tail(key), Unseen: key, CreatedAt: s.now().UTC()}, s.now().UTC())
	if err != nil {
		if derr := s.keys.DeleteKey(context.WithoutCancel(ctx), hash); derr != nil {
			s.log.Warn("key of a failed approval not deleted; reconciliation at the next start deletes it", "key_hash", hash, "error", derr)
		}
		if errors.Is(err, store.ErrNotPending) {
			return out, ErrNotPending
		}
		return out, err
	}
	return out, nil
}

// pendingWith records why an approval failed on the (still pending) request.
func (s *Service) pendingWith(ctx context.Context, r store.AccessRequest, cause error) (store.AccessRequest, error) {
	msg := cause.Error()
	if _, err := s.store.UpdateAccessRequest(ctx, r.ID, func(r *store.AccessRequest) error {
		if r.Status == store.RequestPending {
			r.Error = msg
		}
		return nil
	}); err != nil {
		s.log.Warn("failed approval not recorded", "request", r.ID, "error", err)
	}
	return r, cause
}

// keySpec is the key an access request's approval asks for.
func (s *Service) keySpec(ctx context.Context, r store.AccessRequest) (KeySpec, error) {
	dev, err := s.store.GetDeveloper(ctx, r.UserID)
	if err != nil {
		return KeySpec{}, err
	}
	if !dev.Active {
		return KeySpec{}, &Invalid{[]string{"the developer's account is not active"}}
	}
	app, err := s.store.GetApp(ctx, r.AppID)
	if err != nil {
		return KeySpec{}, err
	}
	return s.specFor(ctx, dev, app, r.ProductID, r.PlanID)
}

// specFor is the key of an app's credential for a product's plan: the
// product's policies then the plan's.
func (s *Service) specFor(ctx context.Context, dev store.Developer, app store.App, productID, planID uint32) (KeySpec, error) {
	product, err := s.store.GetProduct(ctx, productID)
	if err != nil {
		return KeySpec{}, err
	}
	plan, err := s.store.GetPlan(ctx, planID)
	if err != nil {
		return KeySpec{}, err
	}
	policies := append(slices.Clone(product.PolicyIDs), plan.PolicyID)
	return KeySpec{
		Policies: slices.Compact(policies),
		Alias:    fmt.Sprintf("%s (%s)", app.Name, dev.Email),
		Meta:     map[string]string{"portal_app_id": strconv.FormatUint(uint64(app.ID), 10), "portal_user_id": strconv.FormatUint(uint64(dev.ID), 10)},
	}, nil
}

// Reject marks a pending request rejected.
func (s *Service) Reject(ctx context.Context, id uint32) (store.AccessRequest, error) {
	return s.store.UpdateAccessRequest(ctx, id, func(r *store.AccessRequest) error {
		if r.Status != store.RequestPending {
			return ErrNotPending
		}
		r.Status, r.UpdatedAt = store.RequestRejected, s.now().UTC()
		return nil
	})
}

// tail is what the developer sees of a key after its first view.
func tail(key string) string {
	if len(key) <= 4 {
		return key
	}
	return key[len(key)-4:]
}

// Reconcile repairs what a crash between a management call and the store
// write can leave (run at start): a key whose meta_data names a portal app
// but that no credential records is deleted, and a credential whose key
// management no longer has is removed and its request set pending again,
// to be approved anew.
func (s *Service) Reconcile(ctx context.Context) error {
	if s.keys == nil {
		return nil
	}
	keys, err := s.keys.PortalKeys(ctx)
	if err != nil {
		return &ManagementError{"key list", err}
	}
	apps, err := s.store.ListApps(ctx)
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for _, k := range keys {
		held[k.Hash] = true
	}
	recorded := map[string]bool{}
	for _, a := range apps {
		for _, c := range a.Credentials {
			recorded[c.KeyHash] = true
			if c.KeyHash == "" || held[c.KeyHash] { // "": suspended, no key meant
				continue
			}
			if err := s.rerequest(ctx, a.ID, c); err != nil {
				return err
			}
		}
	}
	for _, k := range keys {
		if recorded[k.Hash] {
			continue
		}
		s.log.Info("deleting a portal key no credential records", "key_hash", k.Hash, "app", k.AppID)
		if err := s.keys.DeleteKey(ctx, k.Hash); err != nil {
			return &ManagementError{"key delete", err}
		}
	}
	return nil
}

func (s *Service) rerequest(ctx context.Context, appID uint32, c store.AppCredential) error {
	s.log.Info("credential's key missing in management; its request is pending again", "app", appID, "credential", c.ID)
	if _, err := s.store.UpdateApp(ctx, appID, func(a *store.App) error {
		a.Credentials = without(a.Credentials, c.ID)
		return nil
	}); err != nil {
		return err
	}
	_, err := s.store.UpdateAccessRequest(ctx, c.RequestID, func(r *store.AccessRequest) error {
		r.Status, r.Error, r.UpdatedAt = store.RequestPending, "the key was missing in management; approve again", s.now().UTC()
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// Offer is a product as a developer requests access to it: the product and
// the plans it offers (those that exist), in its order.
func (s *Service) Offer(ctx context.Context, productID uint32) (store.Product, []store.Plan, error) {
	p, err := s.store.GetProduct(ctx, productID)
	if err != nil {
		return p, nil, err
	}
	plans := []store.Plan{}
	for _, id := range p.PlanIDs {
		plan, err := s.store.GetPlan(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return p, nil, err
		}
		plans = append(plans, plan)
	}
	return p, plans, nil
}
