package ui

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/httpbody"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

func (u *UI) routePolicies() {
	u.mux.HandleFunc("GET /ui/policies", u.signedIn(u.policies))
	u.mux.HandleFunc("GET /ui/policies/new", u.signedIn(u.newPolicy))
	u.mux.HandleFunc("POST /ui/policies", u.signedIn(u.savePolicy))
	u.mux.HandleFunc("GET /ui/policies/{id}", u.signedIn(u.policy))
	u.mux.HandleFunc("POST /ui/policies/{id}", u.signedIn(u.savePolicy))
}

// policyRow is what the list shows of a policy.
type policyRow struct {
	ID     string                     `json:"_id"`
	Name   string                     `json:"name"`
	Active bool                       `json:"active"`
	Rate   float64                    `json:"rate"`
	Per    float64                    `json:"per"`
	Quota  int64                      `json:"quota_max"`
	Rights map[string]json.RawMessage `json:"access_rights"`
}

type policiesData struct {
	Rows        []policyRow
	Page, Pages int
	Prev, Next  string
}

func (u *UI) policies(w http.ResponseWriter, r *http.Request, q *request) {
	p, _ := strconv.ParseInt(r.URL.Query().Get("p"), 10, 64)
	p = max(p, 1)
	res, err := u.svc.ListPolicies(q.ctx, &managementv1.ListPoliciesRequest{P: &p})
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	var list struct {
		Data  []json.RawMessage `json:"Data"`
		Pages int               `json:"Pages"`
	}
	if err := json.Unmarshal(res.GetBody().GetData(), &list); err != nil {
		u.fail(w, r, q, err)
		return
	}
	d := policiesData{Page: int(p), Pages: max(list.Pages, 1)}
	for _, raw := range list.Data {
		var row policyRow
		if json.Unmarshal(raw, &row) != nil {
			json.Unmarshal(raw, &struct {
				ID *string `json:"_id"`
			}{&row.ID})
			row.Name = "(not readable here)"
		}
		d.Rows = append(d.Rows, row)
	}
	if p > 1 {
		d.Prev = "/ui/policies?p=" + strconv.FormatInt(p-1, 10)
	}
	if int(p) < list.Pages {
		d.Next = "/ui/policies?p=" + strconv.FormatInt(p+1, 10)
	}
	u.render(w, r, http.StatusOK, "policies", q, page{Title: "Policies", Nav: "policies", Data: d})
}

type policyData struct {
	ID, Name string // ID is "" for a new policy
	JSON     string
	Errors   []string
}

// newPolicyJSON is the form's starting point for a new policy.
const newPolicyJSON = `{
  "name": "",
  "active": true,
  "rate": 100,
  "per": 60,
  "quota_max": -1,
  "quota_renewal_rate": 3600,
  "access_rights": {}
}`

func (u *UI) newPolicy(w http.ResponseWriter, r *http.Request, q *request) {
	u.render(w, r, http.StatusOK, "policy", q, page{Title: "New policy", Nav: "policies", Data: policyData{JSON: newPolicyJSON}})
}

func (u *UI) policy(w http.ResponseWriter, r *http.Request, q *request) {
	res, err := u.svc.GetPolicy(q.ctx, &managementv1.GetPolicyRequest{PolicyId: r.PathValue("id")})
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	body := res.GetBody().GetData()
	var row policyRow
	json.Unmarshal(body, &row)
	u.render(w, r, http.StatusOK, "policy", q, page{Title: "Policy " + row.Name, Nav: "policies",
		Data: policyData{ID: r.PathValue("id"), Name: row.Name, JSON: indent(body)}})
}

// savePolicy creates (POST /ui/policies) or replaces (POST
// /ui/policies/{id}) a policy from the form's JSON; the service's messages
// come back on the form, which keeps what was typed.
func (u *UI) savePolicy(w http.ResponseWriter, r *http.Request, q *request) {
	id := r.PathValue("id")
	text := strings.TrimSpace(r.PostForm.Get("policy"))
	body := &httpbody.HttpBody{ContentType: "application/json", Data: []byte(text)}
	var err error
	if id == "" {
		var res *managementv1.CreatePolicyResponse
		res, err = u.svc.CreatePolicy(q.ctx, &managementv1.CreatePolicyRequest{Body: body})
		if err == nil {
			id = res.GetMessage() // the new _id (the Dashboard's answer)
		}
	} else {
		_, err = u.svc.UpdatePolicy(q.ctx, &managementv1.UpdatePolicyRequest{PolicyId: id, Body: body})
	}
	if err != nil {
		code := httpStatus(statusOf(err))
		if code >= 500 || code == http.StatusForbidden || code == http.StatusNotFound {
			u.fail(w, r, q, err)
			return
		}
		title := "New policy"
		if r.PathValue("id") != "" {
			title = "Policy"
		}
		u.render(w, r, code, "policy", q, page{Title: title, Nav: "policies",
			Data: policyData{ID: r.PathValue("id"), JSON: text, Errors: messages(err)}})
		return
	}
	http.Redirect(w, r, "/ui/policies/"+pathEscape(id)+"?saved=1", http.StatusSeeOther)
}
