package ui

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/httpbody"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

func (u *UI) routeKeys() {
	u.mux.HandleFunc("GET /ui/keys", u.signedIn(u.keys))
	u.mux.HandleFunc("POST /ui/keys", u.signedIn(u.createKey))
	u.mux.HandleFunc("POST /ui/keys/{hash}/revoke", u.signedIn(u.revokeKey))
}

// keyRow is what the list shows of an issued key: never the key, its hash.
type keyRow struct {
	Hash, Alias    string
	Policies, APIs []string
	Inactive       bool
}

// policyChoice is a policy the form offers, by its id (apply_policies).
type policyChoice struct {
	ID, Name string
	Checked  bool
}

type keysData struct {
	Rows        []keyRow
	Page, Pages int
	Prev, Next  string
	Policies    []policyChoice
	Alias       string
	Errors      []string
	NewKey      string // shown once
	Revoked     string
}

func (u *UI) keysPage(w http.ResponseWriter, r *http.Request, q *request, code int, d keysData) {
	p, _ := strconv.ParseInt(r.URL.Query().Get("p"), 10, 64)
	p = max(p, 1)
	res, err := u.svc.ListKeysDetailed(q.ctx, &managementv1.ListKeysDetailedRequest{P: &p})
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	var list struct {
		Keys []struct {
			Hash string `json:"key_hash"`
			Data struct {
				Alias        string                     `json:"alias"`
				Policies     []string                   `json:"apply_policies"`
				AccessRights map[string]json.RawMessage `json:"access_rights"`
				Inactive     bool                       `json:"is_inactive"`
			} `json:"data"`
		} `json:"keys"`
		Pages int `json:"pages"`
	}
	if err := json.Unmarshal(res.GetBody().GetData(), &list); err != nil {
		u.fail(w, r, q, err)
		return
	}
	for _, k := range list.Keys {
		row := keyRow{Hash: k.Hash, Alias: k.Data.Alias, Policies: k.Data.Policies, Inactive: k.Data.Inactive}
		for api := range k.Data.AccessRights {
			row.APIs = append(row.APIs, api)
		}
		sort.Strings(row.APIs)
		d.Rows = append(d.Rows, row)
	}
	d.Page, d.Pages = int(p), max(list.Pages, 1)
	if p > 1 {
		d.Prev = "/ui/keys?p=" + strconv.FormatInt(p-1, 10)
	}
	if d.Page < d.Pages {
		d.Next = "/ui/keys?p=" + strconv.FormatInt(p+1, 10)
	}
	if q.who.May("ListPolicies") && q.who.May("CreateKey") {
		d.Policies = u.policyChoices(q, d.Policies)
	}
	u.render(w, r, code, "keys", q, page{Title: "Keys", Nav: "keys", Data: d})
}

// policyChoices lists every policy by id, keeping the boxes ticked in
// checked.
func (u *UI) policyChoices(q *request, checked []policyChoice) []policyChoice {
	var all int64
	res, err := u.svc.ListPolicies(q.ctx, &managementv1.ListPoliciesRequest{P: &all})
	if err != nil {
		return checked
	}
	var list struct {
		Data []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"Data"`
	}
	json.Unmarshal(res.GetBody().GetData(), &list)
	on := map[string]bool{}
	for _, c := range checked {
		on[c.ID] = c.Checked
	}
	out := make([]policyChoice, 0, len(list.Data))
	for _, p := range list.Data {
		out = append(out, policyChoice{ID: p.ID, Name: p.Name, Checked: on[p.ID]})
	}
	return out
}

func (u *UI) keys(w http.ResponseWriter, r *http.Request, q *request) {
	u.keysPage(w, r, q, http.StatusOK, keysData{})
}

// createKey has the gateways issue a key from the chosen policies
// (apply_policies) and shows it once.
func (u *UI) createKey(w http.ResponseWriter, r *http.Request, q *request) {
	ids := r.PostForm["policies"]
	alias := strings.TrimSpace(r.PostForm.Get("alias"))
	var chosen []policyChoice
	for _, id := range ids {
		chosen = append(chosen, policyChoice{ID: id, Checked: true})
	}
	if len(ids) == 0 {
		u.keysPage(w, r, q, http.StatusBadRequest, keysData{Alias: alias, Errors: []string{"Choose at least one policy."}})
		return
	}
	session, _ := json.Marshal(struct {
		Alias    string   `json:"alias,omitempty"`
		Policies []string `json:"apply_policies"`
	}{alias, ids})
	res, err := u.svc.CreateKey(q.ctx, &managementv1.CreateKeyRequest{Body: &httpbody.HttpBody{ContentType: "application/json", Data: session}})
	if err != nil {
		code := httpStatus(statusOf(err))
		if code == http.StatusUnauthorized || code == http.StatusForbidden {
			u.fail(w, r, q, err)
			return
		}
		u.keysPage(w, r, q, code, keysData{Alias: alias, Policies: chosen, Errors: messages(err)})
		return
	}
	key := res.GetKeyId()
	if key == "" {
		var created struct {
			Key string `json:"key_id"`
		}
		json.Unmarshal(res.GetBody().GetData(), &created)
		key = created.Key
	}
	u.keysPage(w, r, q, http.StatusOK, keysData{NewKey: key})
}

// revokeKey deletes a key by its hash, from management and the gateways.
func (u *UI) revokeKey(w http.ResponseWriter, r *http.Request, q *request) {
	hash := r.PathValue("hash")
	_, err := u.svc.DeleteKey(q.ctx, &managementv1.DeleteKeyRequest{KeyId: hash, Hashed: "true"})
	if err != nil {
		code := httpStatus(statusOf(err))
		if code == http.StatusUnauthorized || code == http.StatusForbidden {
			u.fail(w, r, q, err)
			return
		}
		u.keysPage(w, r, q, code, keysData{Errors: messages(err)})
		return
	}
	u.keysPage(w, r, q, http.StatusOK, keysData{Revoked: hash})
}
