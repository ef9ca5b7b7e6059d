package app

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"testing"
)

var regexp32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// fullStruct is a classic definition as tyk-sync and the Dashboard's
// generated SDK send it: every field of Tyk's Go APIDefinition with its zero
// value (api_id and org_id empty, id absent), beside hook_references,
// is_site, sort_by, user_group_owners and user_owners.
func fullStruct(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/classic-full-struct.json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// withIDs returns a copy of a full-struct body whose definition carries these
// members (nil removes one).
func withIDs(t *testing.T, body map[string]any, set map[string]any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.Decode(&out)
	def := out["api_definition"].(map[string]any)
	for k, v := range set {
		if v == nil {
			delete(def, k)
		} else {
			def[k] = v
		}
	}
	return out
}

// storedDefinition reads GET /api/apis/{ref} and returns its api_definition.
func (in *instance) storedDefinition(t *testing.T, ref string) map[string]any {
	t.Helper()
	r := in.admin("GET", "/api/apis/"+ref, nil)
	expect(t, "get "+ref, r, 200, "")
	return r.json(t)["api_definition"].(map[string]any)
}

// sameExceptIDs reports whether a stored definition is the sent one, apart
// from the members the service owns (api_id, id, org_id).
func sameExceptIDs(sent, stored map[string]any) bool {
	a, b := map[string]any{}, map[string]any{}
	for k, v := range sent {
		a[k] = v
	}
	for k, v := range stored {
		b[k] = v
	}
	for _, k := range []string{"api_id", "id", "org_id"} {
		delete(a, k)
		delete(b, k)
	}
	return reflect.DeepEqual(a, b)
}

// TestFullStructClassic: create, get, update (by API ID and by db id) and
// delete with the bodies Tyk's clients send.
func TestFullStructClassic(t *testing.T) {
	in := start(t, "")
	org := in.admin("GET", "/api/users?p=0", nil).json(t)["users"].([]any)[0].(map[string]any)["org_id"].(string)
	body := fullStruct(t)
	sent := body["api_definition"].(map[string]any)

	r := in.admin("POST", "/api/apis", body)
	expect(t, "create full struct", r, 200, "")
	apiID, dbID := r.json(t)["ID"].(string), r.json(t)["Meta"].(string)
	if !regexp32.MatchString(apiID) || !dbIDPattern.MatchString(dbID) {
		t.Fatalf("create: generated ids %q %q", apiID, dbID)
	}
	got := in.storedDefinition(t, apiID)
	if !sameExceptIDs(sent, got) || got["api_id"] != apiID || got["id"] != dbID || got["org_id"] != org {
		t.Fatalf("stored definition differs from the one sent:\n%v", got)
	}
	if cats := in.admin("GET", "/api/apis?p=0&category=sync", nil).json(t)["apis"].([]any); len(cats) != 1 {
		t.Fatalf("category from the name: %d APIs listed", len(cats))
	}

	for _, c := range []struct {
		name, ref string
		ids       map[string]any
	}{
		{"by api id, ids as the SDK sends them", apiID, map[string]any{"api_id": apiID, "id": dbID, "org_id": org}},
		{"by db id, ids as tyk-sync sends them", dbID, map[string]any{"api_id": apiID, "id": dbID, "org_id": org}},
		{"by db id, zero ids", dbID, map[string]any{"api_id": "", "org_id": ""}},
		{"by api id, no ids", apiID, map[string]any{"api_id": nil, "org_id": nil}},
	} {
		update := withIDs(t, body, c.ids)
		update["api_definition"].(map[string]any)["name"] = "Updated " + c.name + " #sync"
		expect(t, c.name, in.admin("PUT", "/api/apis/"+c.ref, update), 200, `{"Status":"OK","Message":"API updated","Meta":null}`)
		got := in.storedDefinition(t, c.ref)
		if !sameExceptIDs(update["api_definition"].(map[string]any), got) || got["api_id"] != apiID || got["id"] != dbID || got["org_id"] != org {
			t.Fatalf("%s: stored %v", c.name, got)
		}
	}
	expect(t, "delete by db id", in.admin("DELETE", "/api/apis/"+dbID, nil), 200, `{"Status":"OK","Message":"API deleted","Meta":null}`)
	expect(t, "gone", in.admin("GET", "/api/apis/"+apiID, nil), 404, mgmtErr("API not found"))
}

// tykSyncList is what tyk-sync reads from GET /api/apis?p=-2.
type tykSyncList struct {
	APIs []struct {
		Definition struct {
			APIID string `json:"api_id"`
			ID    string `json:"id"`
			Name  string `json:"name"`
			IsOAS bool   `json:"is_oas"`
		} `json:"api_definition"`
		OAS json.RawMessage `json:"oas"`
	} `json:"apis"`
	Pages int `json:"pages"`
}

func (in *instance) tykSyncList(t *testing.T) tykSyncList {
	t.Helper()
	var l tykSyncList
	if err := json.Unmarshal(in.admin("GET", "/api/apis?p=-2", nil).body, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestTykSyncFlows replays the requests tyk-sync makes: dump (list, then
// each API and each OAS export), publish into a fresh installation (create
// with the dumped ids, then the update by db id it sends to keep the API
// ID), publish twice, update by db id, and the deletes of a sync.
func TestTykSyncFlows(t *testing.T) {
	src := start(t, "")
	classicBodyFull := withIDs(t, fullStruct(t), map[string]any{"api_id": "5ync0000000000000000000000000001"})
	expect(t, "seed classic", src.admin("POST", "/api/apis", classicBodyFull), 200, "")
	expect(t, "seed oas", src.admin("POST", "/api/apis/oas", oasDoc("5ync0000000000000000000000000002", "Sync OAS", "/sync-oas/")), 200, "")
	expect(t, "seed categories", src.admin("PUT", "/api/apis/oas/5ync0000000000000000000000000002/categories", `{"categories":["sync"]}`), 200, "")

	// dump
	list := src.tykSyncList(t)
	if len(list.APIs) != 2 || list.Pages != 1 {
		t.Fatalf("dump list: %+v", list)
	}
	type dumped struct {
		def        []byte // classic: the GET answer
		oas        []byte // OAS: the export
		categories []byte
		apiID, id  string
	}
	var dump []dumped
	for _, a := range list.APIs {
		d := dumped{apiID: a.Definition.APIID, id: a.Definition.ID}
		if !dbIDPattern.MatchString(d.id) {
			t.Fatalf("dump: db id %q of %s", d.id, d.apiID)
		}
		if a.Definition.IsOAS {
			e := src.admin("GET", "/api/apis/oas/"+d.apiID+"/export", nil)
			expect(t, "export "+d.apiID, e, 200, "")
			d.oas = e.body
			d.categories = src.admin("GET", "/api/apis/oas/"+d.apiID+"/categories", nil).body
		} else {
			d.def = src.admin("GET", "/api/apis/"+d.apiID, nil).body
		}
		dump = append(dump, d)
	}

	// publish into a fresh installation, twice
	dst := start(t, "")
	publish := func(round int) {
		existing := dst.tykSyncList(t)
		for _, d := range dump {
			for _, a := range existing.APIs {
				if a.Definition.APIID == d.apiID || a.Definition.ID == d.id {
					if round == 1 {
						t.Fatalf("round 1: %s already listed", d.apiID)
					}
					// tyk-sync stops here ("use update"); the server refuses it too
					if d.oas != nil {
						expect(t, "publish OAS again", dst.admin("POST", "/api/apis/oas", d.oas), 409, mgmtErr("Found API with the same ID"))
					} else {
						var def map[string]any
						json.Unmarshal(d.def, &def)
						def["hook_references"] = []any{}
						expect(t, "publish classic again", dst.admin("POST", "/api/apis", def), 409, mgmtErr("Found API with the same ID"))
					}
					goto next
				}
			}
			if round == 2 {
				t.Fatalf("round 2: %s not listed after publishing", d.apiID)
			}
			if d.oas != nil {
				r := dst.admin("POST", "/api/apis/oas", d.oas)
				expect(t, "publish OAS", r, 200, "")
				dbID := r.json(t)["Meta"].(string)
				if dbID != d.id {
					t.Errorf("publish OAS: db id %s, want the dumped %s", dbID, d.id)
				}
				expect(t, "retain OAS ids", dst.admin("PUT", "/api/apis/oas/"+dbID, d.oas), 200, "")
				expect(t, "OAS categories", dst.admin("PUT", "/api/apis/oas/"+dbID+"/categories", d.categories), 200, "")
			} else {
				var def map[string]any
				json.Unmarshal(d.def, &def)
				def["hook_references"], def["is_site"], def["sort_by"], def["user_owners"], def["user_group_owners"] = []any{}, false, 0, nil, nil
				r := dst.admin("POST", "/api/apis", def)
				expect(t, "publish classic", r, 200, "")
				dbID := r.json(t)["Meta"].(string)
				if dbID != d.id || r.json(t)["ID"] != d.apiID {
					t.Errorf("publish classic: ids %s %s, want the dumped %s %s", r.json(t)["ID"], dbID, d.apiID, d.id)
				}
				expect(t, "retain classic ids", dst.admin("PUT", "/api/apis/"+dbID, def), 200, "")
			}
		next:
		}
	}
	publish(1)
	publish(2)
	for _, d := range dump {
		if d.oas != nil {
			if got := dst.admin("GET", "/api/apis/oas/"+d.id+"/categories", nil); string(got.body) != string(d.categories) {
				t.Errorf("published categories %s, want %s", got.body, d.categories)
			}
			continue
		}
		if got := dst.admin("GET", "/api/apis/"+d.id, nil); !reflect.DeepEqual(got.json(t), mustDecode(t, d.def)) {
			t.Errorf("published classic differs:\n got %s\nwant %s", got.body, d.def)
		}
	}

	// update by db id (tyk-sync update/sync), then the sync's deletes by db id
	for _, d := range dump {
		if d.oas != nil {
			changed := bytes.ReplaceAll(d.oas, []byte(`"Sync OAS"`), []byte(`"Sync OAS v2"`))
			expect(t, "update OAS by db id", dst.admin("PUT", "/api/apis/oas/"+d.id, changed), 200, "")
		} else {
			changed := bytes.Replace(d.def, []byte(`"Full struct #sync"`), []byte(`"Full struct v2 #sync"`), 1)
			expect(t, "update classic by db id", dst.admin("PUT", "/api/apis/"+d.id, changed), 200, "")
		}
	}
	for _, a := range dst.tykSyncList(t).APIs {
		if a.Definition.Name != "Sync OAS v2" && a.Definition.Name != "Full struct v2 #sync" {
			t.Errorf("after update: %s is named %q", a.Definition.APIID, a.Definition.Name)
		}
	}
	for _, d := range dump {
		expect(t, "sync delete "+d.id, dst.admin("DELETE", "/api/apis/"+d.id, nil), 200, "")
	}
	if l := dst.tykSyncList(t); len(l.APIs) != 0 {
		t.Fatalf("after the sync's deletes: %+v", l)
	}
}

func mustDecode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	return resp{body: b}.json(t)
}
