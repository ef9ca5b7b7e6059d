package app

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// TestSystemAPIsDerivedStaysCurrent: every Tyk OAS API in /system/apis
// carries exactly the classic definition convert.ToClassic yields for the
// document sent beside it (with its IDs and is_oas true), after every kind
// of write of OAS records: stage, edit, promote, direct migration, create,
// PUT of the document, categories.
func TestSystemAPIsDerivedStaysCurrent(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	ids := seedClassic(t, db, 2)
	in := startGateways(t, db, "")
	check := func(step string, oasCount int) {
		t.Helper()
		r := in.do("GET", "/system/apis", nodeSecret, nil)
		var list struct {
			Message []struct {
				Def json.RawMessage `json:"api_definition"`
				OAS json.RawMessage `json:"oas"`
			}
		}
		if r.status != 200 || json.Unmarshal(r.body, &list) != nil {
			t.Fatalf("%s: /system/apis %d %.200s", step, r.status, r.body)
		}
		n := 0
		for _, m := range list.Message {
			if string(m.OAS) == "null" {
				continue
			}
			n++
			var info struct {
				X struct {
					Info struct {
						ID   string `json:"id"`
						DBID string `json:"dbId"`
					}
				} `json:"x-tyk-api-gateway"`
			}
			json.Unmarshal(m.OAS, &info)
			want, err := convert.ToClassic(m.OAS)
			for _, f := range []struct {
				v    []byte
				name string
			}{{rawjson.Quote(info.X.Info.ID), "api_id"}, {rawjson.Quote(info.X.Info.DBID), "id"}, {[]byte("true"), "is_oas"}} {
				if err == nil {
					want, err = rawjson.Set(want, f.v, f.name)
				}
			}
			if err != nil {
				t.Fatalf("%s: %s does not derive: %v", step, info.X.Info.ID, err)
			}
			if !sameJSON(t, m.Def, want) {
				t.Errorf("%s: %s: /system/apis sends\n%.300s\nnot ToClassic of its document\n%.300s", step, info.X.Info.ID, m.Def, want)
			}
		}
		if n != oasCount {
			t.Fatalf("%s: %d OAS APIs listed, want %d", step, n, oasCount)
		}
	}
	check("seeded", 0)
	if rep := in.migrate(t, migrateBody("stage", ids[0])); rep.Success.Count != 1 {
		t.Fatalf("stage: %+v", rep)
	}
	staged := "staging-" + ids[0]
	stagedCount := len(in.list(t)) - 2 // the staged copy and its versions
	check("staged", stagedCount)
	doc := string(in.admin("GET", "/api/apis/oas/"+staged, nil).body)
	expect(t, "edit staged", in.admin("PUT", "/api/apis/oas/"+staged, strings.Replace(doc, `"url":"http://`, `"url":"http://edited.`, 1)), 200, "")
	check("staged copy edited", stagedCount)
	if rep := in.migrate(t, migrateBody("promote", staged)); rep.Success.Count != 1 {
		t.Fatalf("promote: %+v", rep)
	}
	check("promoted", stagedCount)
	if rep := in.migrate(t, migrateBody("direct", ids[1])); rep.Success.Count != 1 {
		t.Fatalf("direct: %+v", rep)
	}
	all := len(in.list(t))
	check("migrated directly", all)
	oas := "9a7e00000000000000000000000000d1"
	expect(t, "create", in.admin("POST", "/api/apis/oas", oasDoc(oas, "Derived", "/derived/")), 200, "")
	check("created", all+1)
	expect(t, "put", in.admin("PUT", "/api/apis/oas/"+oas, oasDoc(oas, "Derived again", "/derived-again/")), 200, "")
	check("document replaced", all+1)
	expect(t, "categories", in.admin("PUT", "/api/apis/oas/"+oas+"/categories", `{"categories":["c1","c2"]}`), 200, "")
	check("categories set", all+1)
	expect(t, "promoted categories", in.admin("PUT", "/api/apis/oas/"+ids[0]+"/categories", `{"categories":["p"]}`), 200, "")
	check("promoted API's categories set", all+1)
}

// list is the API IDs /system/apis sends.
func (in *instance) list(t *testing.T) []string {
	t.Helper()
	r := in.do("GET", "/system/apis", nodeSecret, nil)
	var list struct {
		Message []struct {
			Def struct {
				APIID string `json:"api_id"`
			} `json:"api_definition"`
		}
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatalf("/system/apis: %v", err)
	}
	var ids []string
	for _, m := range list.Message {
		ids = append(ids, m.Def.APIID)
	}
	return ids
}

// sameJSON compares two JSON texts by value (numbers as written).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(v []byte) any {
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		var out any
		if err := d.Decode(&out); err != nil {
			t.Fatalf("not JSON: %v: %.200s", err, v)
		}
		return out
	}
	return reflect.DeepEqual(decode(a), decode(b))
}
