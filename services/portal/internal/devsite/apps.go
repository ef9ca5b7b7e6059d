package devsite

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

func (p *Pages) apps(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view) {
	p.showApps(w, r, sg, v, http.StatusOK)
}

func (p *Pages) showApps(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view, status int) {
	apps, err := p.svc.MyApps(r.Context(), sg)
	if err != nil {
		p.fail(w, r, v, err)
		return
	}
	v.Title, v.Apps = "My apps", apps
	p.render(w, status, "apps", v)
}

func (p *Pages) createApp(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view) {
	v.Name, v.Description = r.PostForm.Get("name"), r.PostForm.Get("description")
	a, err := p.svc.CreateApp(r.Context(), sg, v.Name, v.Description)
	var invalid *consumers.Invalid
	if errors.As(err, &invalid) {
		v.Problems = invalid.Problems
		p.showApps(w, r, sg, v, http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		p.fail(w, r, v, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/apps/%d", a.ID), http.StatusSeeOther)
}

// app shows one of the developer's apps; a key issued since the last view
// is on this page once (MyApp clears it as it reads it).
func (p *Pages) app(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view) {
	id := formID(r.PathValue("id"))
	if id == 0 {
		p.notFound(w, r, v)
		return
	}
	a, err := p.svc.MyApp(r.Context(), sg, id)
	if err != nil {
		p.fail(w, r, v, err)
		return
	}
	mine, err := p.svc.MyAccessRequests(r.Context(), sg)
	if err != nil {
		p.fail(w, r, v, err)
		return
	}
	v.Title, v.App = a.Name, a
	v.ProductNames, v.PlanNames = map[uint32]string{}, map[uint32]string{}
	for _, req := range mine {
		if req.AppID == a.ID {
			v.Requests = append(v.Requests, req)
		}
	}
	for _, c := range a.Credentials {
		p.names(r, v, c.ProductID, c.PlanID)
	}
	for _, req := range v.Requests {
		p.names(r, v, req.ProductID, req.PlanID)
	}
	w.Header().Set("Cache-Control", "no-store")
	p.render(w, http.StatusOK, "app", v)
}

// names fills the product's and plan's display names (their ids when gone).
func (p *Pages) names(r *http.Request, v view, product, plan uint32) {
	if _, ok := v.ProductNames[product]; !ok {
		v.ProductNames[product] = fmt.Sprintf("product %d", product)
		if pr, _, err := p.svc.Offer(r.Context(), product); err == nil {
			v.ProductNames[product] = displayName(pr)
		}
	}
	if _, ok := v.PlanNames[plan]; !ok {
		v.PlanNames[plan] = fmt.Sprintf("plan %d", plan)
		if pl, err := p.svc.Plan(r.Context(), plan); err == nil {
			v.PlanNames[plan] = pl.Name
		}
	}
}

func displayName(p store.Product) string {
	if p.DisplayName != "" {
		return p.DisplayName
	}
	return p.Name
}

func (p *Pages) roll(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view) {
	app, cred := formID(r.PathValue("id")), formID(r.PathValue("cid"))
	if app == 0 || cred == 0 {
		p.notFound(w, r, v)
		return
	}
	if err := p.svc.Roll(r.Context(), sg, app, cred); err != nil {
		p.fail(w, r, v, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/apps/%d", app), http.StatusSeeOther)
}

func (p *Pages) accessForm(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view) {
	p.showAccess(w, r, sg, v, http.StatusOK)
}

func (p *Pages) showAccess(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view, status int) {
	id := formID(r.PathValue("product_id"))
	if id == 0 {
		p.notFound(w, r, v)
		return
	}
	product, plans, err := p.svc.Offer(r.Context(), id)
	if err != nil {
		p.fail(w, r, v, err)
		return
	}
	apps, err := p.svc.MyApps(r.Context(), sg)
	if err != nil {
		p.fail(w, r, v, err)
		return
	}
	v.Title, v.ProductID, v.ProductName, v.Plans, v.Apps = "Request access", id, displayName(product), plans, apps
	p.render(w, status, "access", v)
}

func (p *Pages) requestAccess(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view) {
	product, app, plan := formID(r.PathValue("product_id")), formID(r.PostForm.Get("app")), formID(r.PostForm.Get("plan"))
	if product == 0 || app == 0 {
		p.notFound(w, r, v)
		return
	}
	_, err := p.svc.RequestAccess(r.Context(), sg, app, product, plan)
	var invalid *consumers.Invalid
	if errors.As(err, &invalid) {
		v.Problems = invalid.Problems
		p.showAccess(w, r, sg, v, http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		p.fail(w, r, v, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/apps/%d", app), http.StatusSeeOther)
}
