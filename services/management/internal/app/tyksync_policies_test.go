package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// objectID decodes as mgo's bson.ObjectId does in tyk-sync's models: null,
// "" or 24 hex digits; anything else fails the whole answer.
type objectID string

func (o *objectID) UnmarshalJSON(b []byte) error {
	var s string
	if string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, &s); err != nil || s != "" && !dbIDPattern.MatchString(s) {
		return fmt.Errorf("invalid ObjectId in JSON: %s", b)
	}
	*o = objectID(s)
	return nil
}

// syncPolicy is the part of tyk-sync's Policy model whose decoding can
// fail or that it acts on (date_created is a time.Time: "" fails).
type syncPolicy struct {
	MID          objectID                  `json:"_id"`
	ID           string                    `json:"id"`
	Name         string                    `json:"name"`
	OrgID        string                    `json:"org_id"`
	AccessRights map[string]map[string]any `json:"access_rights"`
	DateCreated  time.Time                 `json:"date_created"`
}

// syncAsset is tyk-sync's DBAssets (last_updated a time.Time).
type syncAsset struct {
	DBID        objectID        `json:"_id"`
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	OrgID       string          `json:"org_id"`
	Kind        string          `json:"kind"`
	Data        json.RawMessage `json:"data"`
	LastUpdated time.Time       `json:"last_updated"`
}

// dumpState is what a plain `tyk-sync dump` writes: every API (from the
// list), every policy (fetched one by one, an empty id filled with the
// _id), every asset.
type dumpState struct {
	APIs     map[string]json.RawMessage // by api_id: the list item
	Policies map[string]map[string]any  // by id
	Assets   map[string]map[string]any  // by id, last_updated left out
}

// tykSyncDump replays a plain dump: GET /api/portal/policies?p=-2,
// GET /api/apis?p=-2, GET /api/assets, then GET /api/portal/policies/{_id}
// for each policy; every answer must decode with tyk-sync's models.
func (in *instance) tykSyncDump(t *testing.T) dumpState {
	t.Helper()
	var pols struct {
		Data  []syncPolicy `json:"Data"`
		Pages int          `json:"Pages"`
	}
	r := in.admin("GET", "/api/portal/policies?p=-2", nil)
	expect(t, "dump: policies", r, 200, "")
	if err := json.Unmarshal(r.body, &pols); err != nil {
		t.Fatalf("dump: tyk-sync cannot decode the policy list: %v: %s", err, r.body)
	}
	var apis struct {
		APIs []struct {
			Definition struct {
				APIID string `json:"api_id"`
			} `json:"api_definition"`
		} `json:"apis"`
	}
	l := in.admin("GET", "/api/apis?p=-2", nil)
	expect(t, "dump: apis", l, 200, "")
	if err := json.Unmarshal(l.body, &apis); err != nil {
		t.Fatal(err)
	}
	var items []json.RawMessage
	var rawList struct {
		APIs []json.RawMessage `json:"apis"`
	}
	json.Unmarshal(l.body, &rawList)
	items = rawList.APIs
	var assets []syncAsset
	a := in.admin("GET", "/api/assets", nil)
	expect(t, "dump: assets", a, 200, "")
	if err := json.Unmarshal(a.body, &assets); err != nil {
		t.Fatalf("dump: tyk-sync cannot decode the asset list: %v: %s", err, a.body)
	}
	d := dumpState{APIs: map[string]json.RawMessage{}, Policies: map[string]map[string]any{}, Assets: map[string]map[string]any{}}
	for i, api := range apis.APIs {
		d.APIs[api.Definition.APIID] = items[i]
	}
	for _, p := range pols.Data {
		one := in.admin("GET", "/api/portal/policies/"+string(p.MID), nil)
		expect(t, "dump: policy "+string(p.MID), one, 200, "")
		var cp syncPolicy
		if err := json.Unmarshal(one.body, &cp); err != nil || cp.MID != p.MID {
			t.Fatalf("dump: policy %s: %v %s", p.MID, err, one.body)
		}
		full := one.json(t)
		if cp.ID == "" {
			full["id"] = string(cp.MID)
		}
		d.Policies[full["id"].(string)] = full
	}
	for _, s := range assets {
		var full map[string]any
		for _, raw := range mustArray(t, a.body) {
			var m map[string]any
			json.Unmarshal(raw, &m)
			if m["_id"] == string(s.DBID) {
				full = m
			}
		}
		delete(full, "last_updated") // the service stamps every write
		d.Assets[s.ID] = full
	}
	return d
}

func mustArray(t *testing.T, b []byte) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// tykSyncPublish replays `tyk-sync publish` of the dumped policies and
// assets: the org from GET /api/users?p=-2, then for policies the list and
// one POST each (200, Status OK, Message the new _id as 24 hex), for assets
// the list and one POST each (201, Status success, Meta the new _id).
func (in *instance) tykSyncPublish(t *testing.T, d dumpState) {
	t.Helper()
	org := in.orgID()
	in.admin("GET", "/api/portal/policies?p=-2", nil)
	for _, p := range d.Policies {
		p["org_id"] = org
		r := in.admin("POST", "/api/portal/policies", p)
		expect(t, "publish policy", r, 200, "")
		v := r.json(t)
		if v["Status"] != "OK" || !dbIDPattern.MatchString(fmt.Sprint(v["Message"])) {
			t.Fatalf("publish policy: %s", r.body)
		}
	}
	in.admin("GET", "/api/assets", nil)
	for _, a := range d.Assets {
		a["org_id"] = org
		r := in.admin("POST", "/api/assets", a)
		expect(t, "publish asset", r, 201, "")
		v := r.json(t)
		if v["Status"] != "success" || !dbIDPattern.MatchString(fmt.Sprint(v["Meta"])) {
			t.Fatalf("publish asset: %s", r.body)
		}
	}
}

// tykSyncSync replays `tyk-sync sync` (update: deletes=false,
// creates=false) for policies and assets: list; delete by _id what the
// dashboard has and git has not; update by PUT to the dashboard's _id
// (policies) or custom id (assets); create the rest.
func (in *instance) tykSyncSync(t *testing.T, git dumpState, deletes bool) {
	t.Helper()
	var pols struct {
		Data []syncPolicy `json:"Data"`
	}
	json.Unmarshal(in.admin("GET", "/api/portal/policies?p=-2", nil).body, &pols)
	dash := map[string]objectID{}
	for _, p := range pols.Data {
		dash[p.ID] = p.MID
	}
	for id, mid := range dash {
		if _, ok := git.Policies[id]; !ok && deletes {
			expect(t, "sync: delete policy", in.admin("DELETE", "/api/portal/policies/"+string(mid), nil), 200, "")
		}
	}
	for id, p := range git.Policies {
		if mid, ok := dash[id]; ok {
			p["_id"] = string(mid)
			expect(t, "sync: update policy", in.admin("PUT", "/api/portal/policies/"+string(mid), p), 200, `{"Status":"OK","Message":"Data updated","Meta":null}`)
		} else if deletes {
			expect(t, "sync: create policy", in.admin("POST", "/api/portal/policies", p), 200, "")
		}
	}
	var assets []syncAsset
	if err := json.Unmarshal(in.admin("GET", "/api/assets", nil).body, &assets); err != nil {
		t.Fatal(err)
	}
	dashAssets := map[string]objectID{}
	for _, a := range assets {
		dashAssets[a.ID] = a.DBID
	}
	for id, dbID := range dashAssets {
		if _, ok := git.Assets[id]; !ok && deletes {
			expect(t, "sync: delete asset", in.admin("DELETE", "/api/assets/"+string(dbID), nil), 200, "")
		}
	}
	for id, a := range git.Assets {
		if dbID, ok := dashAssets[id]; ok {
			a["_id"] = string(dbID)
			r := in.admin("PUT", "/api/assets/"+id, a)
			expect(t, "sync: update asset", r, 200, "")
			if r.json(t)["Status"] != "success" {
				t.Fatalf("sync: update asset: %s", r.body)
			}
		} else if deletes {
			expect(t, "sync: create asset", in.admin("POST", "/api/assets", a), 201, "")
		}
	}
}

// TestTykSyncPoliciesAndAssets: a plain dump of an installation holding
// classic APIs, OAS APIs, policies and an asset decodes with tyk-sync's
// models; publish into an empty installation, then sync and update; the
// second dump matches the first.
func TestTykSyncPoliciesAndAssets(t *testing.T) {
	src := start(t, "")
	classic, oas := "5ync0000000000000000000000000011", "5ync0000000000000000000000000012"
	expect(t, "seed classic", src.admin("POST", "/api/apis", classicBody(classic, "Sync classic")), 200, "")
	expect(t, "seed oas", src.admin("POST", "/api/apis/oas", oasDoc(oas, "Sync OAS", "/sync-oas-p/")), 200, "")
	expect(t, "seed policy", src.admin("POST", "/api/portal/policies", `{"id":"gold","name":"Gold","rate":10,"per":1.50,"date_created":"2026-01-02T03:04:05Z",`+
		`"access_rights":{"`+classic+`":{"api_id":"`+classic+`","versions":["Default"]},"`+oas+`":{"api_id":"`+oas+`","versions":["Default"]}}}`), 200, "")
	expect(t, "seed policy without id", src.admin("POST", "/api/portal/policies", `{"name":"Silver","quota_max":9007199254740993}`), 200, "")
	expect(t, "seed asset", src.admin("POST", "/api/assets", `{"id":"tmpl","name":"Template","kind":"oas-template","description":"d","data":{"openapi":"3.0.3"}}`), 201, "")

	first := src.tykSyncDump(t)
	if len(first.APIs) != 2 || len(first.Policies) != 2 || len(first.Assets) != 1 {
		t.Fatalf("dump: %d APIs, %d policies, %d assets", len(first.APIs), len(first.Policies), len(first.Assets))
	}

	dst := start(t, "")
	dst.tykSyncPublish(t, first)
	dst.tykSyncSync(t, first, true)  // sync
	dst.tykSyncSync(t, first, false) // update
	second := dst.tykSyncDump(t)
	delete(second.APIs, classic) // the APIs' own flows are TestTykSyncFlows
	delete(second.APIs, oas)
	for id, p := range first.Policies {
		q := second.Policies[id]
		if q == nil {
			t.Fatalf("policy %s missing after publish and sync", id)
		}
		delete(p, "org_id")
		delete(q, "org_id")
		if !reflect.DeepEqual(p, q) {
			t.Errorf("policy %s:\n first %v\nsecond %v", id, p, q)
		}
	}
	for id, a := range first.Assets {
		b := second.Assets[id]
		delete(a, "org_id")
		delete(b, "org_id")
		if !reflect.DeepEqual(a, b) {
			t.Errorf("asset %s:\n first %v\nsecond %v", id, a, b)
		}
	}
}
