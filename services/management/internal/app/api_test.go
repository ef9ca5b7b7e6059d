package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
)

func TestAuth(t *testing.T) {
	in := start(t, "")
	for _, key := range []string{"", "nope", "Bearer nope", "Bearer "} {
		for _, p := range []string{"/api/apis", "/api/users", "/api/apis/categories", "/api/apis/oas/x/export"} {
			expect(t, "GET "+p+" as "+key, in.do("GET", p, key, nil), 401, mgmtErr("Not authorised"))
		}
		expect(t, "migrate as "+key, in.do("POST", "/api/apis/migrate", key, `{"mode":"dryRun","all":true}`), 401,
			`{"ID":"","Message":"Not authorised","Meta":null,"Status":"Error"}`)
		// a malformed body does not get past the missing key
		expect(t, "malformed migrate as "+key, in.do("POST", "/api/apis/migrate", key, `{"mode":5}`), 401,
			`{"ID":"","Message":"Not authorised","Meta":null,"Status":"Error"}`)
		expect(t, "malformed user as "+key, in.do("POST", "/api/users", key, `{"email_address":`), 401, mgmtErr("Not authorised"))
	}
	for _, key := range []string{adminToken, "Bearer " + adminToken, "bearer " + adminToken} {
		expect(t, "GET /api/apis as "+key, in.do("GET", "/api/apis?p=1", key, nil), 200, "")
	}
	if _, err := in.client.ListCategories(grpcCtx("nope"), &managementv1.ListCategoriesRequest{}); status.Code(err) != codes.Unauthenticated || status.Convert(err).Message() != "Not authorised" {
		t.Fatalf("gRPC without a valid key: %v", err)
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func TestUsers(t *testing.T) {
	in := start(t, "")
	id, key := in.createUser(`{"apis":"read"}`)
	expect(t, "new key works", in.do("GET", "/api/apis?p=1", key, nil), 200, "")
	g := in.admin("GET", "/api/users/"+id, nil)
	expect(t, "get user", g, 200, "")
	if bytes.Contains(g.body, []byte(key)) || g.json(t)["user_permissions"].(map[string]any)["apis"] != "read" {
		t.Fatalf("get user: %s", g.body)
	}
	l := in.admin("GET", "/api/users?p=0", nil)
	if v := l.json(t); len(v["users"].([]any)) != 2 || v["pages"] != json.Number("1") || bytes.Contains(l.body, []byte(key)) {
		t.Fatalf("list users: %s", l.body)
	}
	email := g.json(t)["email_address"].(string)
	expect(t, "duplicate email", in.admin("POST", "/api/users", `{"email_address":"`+strings.ToUpper(email)+`"}`), 400, mgmtErr("User email already exists"))
	expect(t, "no email", in.admin("POST", "/api/users", `{"first_name":"x"}`), 400, mgmtErr("User object validation failed."))
	expect(t, "bad permission type", in.admin("POST", "/api/users", `{"email_address":"p@x.test","user_permissions":{"apis":true}}`), 400, "")
	expect(t, "bad permission value", in.admin("POST", "/api/users", `{"email_address":"p@x.test","user_permissions":{"apis":"all"}}`), 400, "")
	for _, body := range []string{`not json`, `[]`, `null`, ``, `{"email_address":5}`} {
		expect(t, "malformed user "+body, in.admin("POST", "/api/users", body), 400, "")
	}
	expect(t, "update", in.admin("PUT", "/api/users/"+id, `{"user_permissions":{"apis":"write"}}`), 200, `{"Status":"OK","Message":"User updated","Meta":null}`)
	expect(t, "write now", in.do("PUT", "/api/apis/oas/x/categories", key, `{"categories":[]}`), 404, mgmtErr("API not found"))
	r := in.admin("POST", "/api/users/"+id+"/actions/key/reset", nil)
	expect(t, "reset", r, 200, "")
	fresh := r.json(t)["access_key"].(string)
	expect(t, "old key", in.do("GET", "/api/apis", key, nil), 401, mgmtErr("Not authorised"))
	expect(t, "new key", in.do("GET", "/api/apis", fresh, nil), 200, "")
	expect(t, "delete", in.admin("DELETE", "/api/users/"+id, nil), 200, `{"Status":"OK","Message":"User deleted","Meta":null}`)
	expect(t, "deleted key", in.do("GET", "/api/apis", fresh, nil), 401, mgmtErr("Not authorised"))
	expect(t, "get deleted", in.admin("GET", "/api/users/"+id, nil), 404, mgmtErr("User not found"))
	expect(t, "reset deleted", in.admin("POST", "/api/users/"+id+"/actions/key/reset", nil), 404, mgmtErr("User not found"))
	expect(t, "bad page", in.admin("GET", "/api/users?p=x", nil), 400, mgmtErr("p must be an integer"))
}

var dbIDPattern = regexp.MustCompile(`^[0-9a-f]{24}$`)

func TestClassic(t *testing.T) {
	in := start(t, "")
	id := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	r := in.admin("POST", "/api/apis", classicBody(id, "Pets #animals #shop #animals"))
	expect(t, "create", r, 200, "")
	v := r.json(t)
	if v["ID"] != id || !dbIDPattern.MatchString(v["Meta"].(string)) || v["Message"] != "API created" {
		t.Fatalf("create: %s", r.body)
	}
	got := in.admin("GET", "/api/apis/"+id, nil)
	want := `{"api_definition":{"api_id":"` + id + `","name":"Pets #animals #shop #animals","proxy":{"listen_path":"/` + id + `/","target_url":"http://u.test"},"big":9007199254740993,"ratio":1.50,"id":"` + v["Meta"].(string) + `","org_id":"` + in.orgID() + `"}}`
	if string(got.body) != want {
		t.Fatalf("stored definition:\n got %s\nwant %s", got.body, want)
	}
	// generated IDs
	r = in.admin("POST", "/api/apis", `{"api_definition":{"name":"Gen"}}`)
	expect(t, "create generated", r, 200, "")
	gen := r.json(t)["ID"].(string)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(gen) {
		t.Fatalf("generated api_id %q", gen)
	}
	expect(t, "duplicate", in.admin("POST", "/api/apis", classicBody(id, "Again")), 409, mgmtErr("Found API with the same ID"))
	for _, body := range []string{`not json`, `{"name":"x"}`, `{"api_definition":`, `[]`, `null`, ``, `{"api_definition":null}`, `{"api_definition":[]}`,
		`{"api_definition":{"name":5}}`, `{"api_definition":{"name":"x","api_id":7}}`} {
		expect(t, "malformed "+body, in.admin("POST", "/api/apis", body), 400, mgmtErr("Malformed API data"))
	}
	expect(t, "empty name", in.admin("POST", "/api/apis", `{"api_definition":{"name":" "}}`), 400, mgmtErr("API name is required"))
	isOAS := mgmtErr("api_definition.is_oas: a classic API definition cannot be is_oas true; create a Tyk OAS API at /api/apis/oas")
	expect(t, "is_oas on create", in.admin("POST", "/api/apis", `{"api_definition":{"name":"x","is_oas":true}}`), 400, isOAS)
	notOAS := in.admin("POST", "/api/apis", `{"api_definition":{"name":"x","is_oas":false}}`)
	expect(t, "is_oas false", notOAS, 200, "")
	expect(t, "delete is_oas false", in.admin("DELETE", "/api/apis/"+notOAS.json(t)["ID"].(string), nil), 200, "")
	for _, bad := range []string{"a/b", "a b", "a%2Fb", "a\"b", "a?b", strings.Repeat("x", 256)} {
		expect(t, "bad api_id "+bad, in.admin("POST", "/api/apis", `{"api_definition":{"name":"x","api_id":`+quote(bad)+`}}`), 400, "")
	}
	expect(t, "unicode api_id", in.admin("POST", "/api/apis", `{"api_definition":{"name":"x","api_id":"é-ok.v1"}}`), 200, "")
	expect(t, "get unicode", in.admin("GET", "/api/apis/"+url.PathEscape("é-ok.v1"), nil), 200, "")
	for _, p := range []string{"/api/apis/nope", "/api/apis/a.b", "/api/apis/%C3%A9"} {
		expect(t, "get "+p, in.admin("GET", p, nil), 404, mgmtErr("API not found"))
	}
	// an encoded slash stays in its segment (policy ids may hold one); no API ID holds a slash
	expect(t, "get a%2Fb", in.admin("GET", "/api/apis/a%2Fb", nil), 404, mgmtErr("API not found"))
	// update
	expect(t, "update", in.admin("PUT", "/api/apis/"+id, `{"api_definition":{"name":"After #new","x":12345678901234567890}}`), 200, `{"Status":"OK","Message":"API updated","Meta":null}`)
	got = in.admin("GET", "/api/apis/"+id, nil)
	if !bytes.Contains(got.body, []byte(`"x":12345678901234567890`)) || !bytes.Contains(got.body, []byte(`"id":"`+v["Meta"].(string)+`"`)) {
		t.Fatalf("after update: %s", got.body)
	}
	expect(t, "update mismatch", in.admin("PUT", "/api/apis/"+id, `{"api_definition":{"name":"x","api_id":"other"}}`), 400, "")
	expect(t, "update missing", in.admin("PUT", "/api/apis/nope", `{"api_definition":{"name":"x"}}`), 404, mgmtErr("API not found"))
	expect(t, "is_oas on update", in.admin("PUT", "/api/apis/"+id, `{"api_definition":{"name":"x","is_oas":true}}`), 400, isOAS)
	oas := "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	expect(t, "create oas", in.admin("POST", "/api/apis/oas", oasDoc(oas, "O", "/o/")), 200, "")
	expect(t, "update oas", in.admin("PUT", "/api/apis/"+oas, `{"api_definition":{"name":"x"}}`), 400, mgmtErr("Use the OAS API endpoints for this API"))
	expect(t, "classic id on oas create", in.admin("POST", "/api/apis/oas", oasDoc(id, "O", "/o2/")), 409, mgmtErr("Found API with the same ID"))
	// list: paging and filter
	for i := range 11 {
		expect(t, "create paged", in.admin("POST", "/api/apis", fmt.Sprintf(`{"api_definition":{"name":"Paged %d #pg"}}`, i)), 200, "")
	}
	list := func(q string) ([]any, json.Number) {
		v := in.admin("GET", "/api/apis"+q, nil).json(t)
		return v["apis"].([]any), v["pages"].(json.Number)
	}
	if items, pages := list("?p=1&category=pg"); len(items) != 10 || pages != "2" {
		t.Fatalf("page 1 of pg: %d items, %s pages", len(items), pages)
	}
	if items, _ := list("?p=2&category=pg"); len(items) != 1 {
		t.Fatalf("page 2 of pg: %d items", len(items))
	}
	if items, _ := list("?p=0&category=pg,new"); len(items) != 12 {
		t.Fatalf("pg or new: %d items", len(items))
	}
	all, pages := list("?p=-1")
	if len(all) != 15 || pages != "2" {
		t.Fatalf("everything: %d items, %s pages", len(all), pages)
	}
	for _, it := range all {
		m := it.(map[string]any)
		def := m["api_definition"].(map[string]any)
		if def["api_id"] == oas && (def["is_oas"] != true || m["oas"] == nil) {
			t.Fatalf("OAS list item: %v", m)
		}
	}
	expect(t, "delete", in.admin("DELETE", "/api/apis/"+id, nil), 200, `{"Status":"OK","Message":"API deleted","Meta":null}`)
	expect(t, "delete again", in.admin("DELETE", "/api/apis/"+id, nil), 404, mgmtErr("API not found"))
	expect(t, "categories", in.admin("GET", "/api/apis/categories", nil), 200, `{"categories":[{"name":"pg","count":11}]}`)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestOAS(t *testing.T) {
	in := start(t, "")
	id := "cccccccccccccccccccccccccccccccc"
	doc := `{"x-tyk-api-gateway":{"server":{"listenPath":{"strip":true,"value":"/rich/"}},"upstream":{"url":"http://u.test/"},"info":{"state":{"active":true},"name":"Rich","id":"` + id + `"}},` +
		`"openapi":"3.0.3","info":{"version":"1","title":"Grüße <&> ✓"},"x-foo":{"z":1,"a":[true,null,9007199254740993],"r":1.50},"paths":{}}`
	r := in.admin("POST", "/api/apis/oas", doc)
	expect(t, "create", r, 200, "")
	dbID := r.json(t)["Meta"].(string)
	got := in.admin("GET", "/api/apis/oas/"+id, nil)
	want := strings.Replace(doc, `"id":"`+id+`"`, `"id":"`+id+`","dbId":"`+dbID+`"`, 1)
	if string(got.body) != want || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("stored document:\n got %s\nwant %s", got.body, want)
	}
	y := in.admin("GET", "/api/apis/oas/"+id, nil, "Accept", "application/x-yaml")
	if y.header.Get("Content-Type") != "application/x-yaml" || !bytes.Contains(y.body, []byte("a:\n    - true\n    - null\n    - 9007199254740993")) {
		t.Fatalf("YAML GET: %s %s", y.header.Get("Content-Type"), y.body)
	}
	// YAML intake keeps order and numbers
	yamlDoc := "openapi: 3.0.3\ninfo:\n  title: Y\n  version: '1'\npaths: {}\nx-big: 9007199254740993\nx-tyk-api-gateway:\n  info:\n    name: Y\n    state:\n      active: true\n  upstream:\n    url: http://u.test/\n  server:\n    listenPath:\n      value: /y/\n"
	r = in.admin("POST", "/api/apis/oas", yamlDoc, "Content-Type", "application/x-yaml")
	expect(t, "create YAML", r, 200, "")
	yid := r.json(t)["ID"].(string)
	got = in.admin("GET", "/api/apis/oas/"+yid, nil)
	if !bytes.HasPrefix(got.body, []byte(`{"openapi":"3.0.3","info":{"title":"Y","version":"1"},"paths":{},"x-big":9007199254740993,"x-tyk-api-gateway":{"info":{"name":"Y"`)) {
		t.Fatalf("document stored from YAML: %s", got.body)
	}
	expect(t, "no extension", in.admin("POST", "/api/apis/oas", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}}`), 400, mgmtErr("The payload should contain x-tyk-api-gateway"))
	for name, c := range map[string]struct{ body, mention string }{
		"empty listen path": {oasDoc("", "N", ""), "listenPath"},
		"no upstream":       {strings.Replace(oasDoc("", "N", "/n/"), `"upstream":{"url":"http://upstream.test/"},`, "", 1), "upstream"},
		"no name":           {oasDoc("", "", "/n/"), "info.name"},
		"openapi 3.1":       {strings.Replace(oasDoc("", "N", "/n/"), "3.0.3", "3.1.0", 1), "openapi"},
		"bad path":          {strings.Replace(oasDoc("", "N", "/n/"), `"paths":{}`, `"paths":{"pets":{}}`, 1), "pets"},
		"not json":          {`{"openapi":`, "JSON"},
		"array":             {`[]`, "object"},
		"null":              {`null`, "object"},
		"empty":             {``, "empty"},
		"bad id type":       {strings.Replace(oasDoc("", "N", "/n/"), `"id":""`, `"id":5`, 1), "info.id"},
		"slash id":          {oasDoc("a/b", "N", "/n/"), "info.id"},
	} {
		r := in.admin("POST", "/api/apis/oas", c.body)
		expect(t, name, r, 400, "")
		if msg := r.json(t)["Message"].(string); !strings.Contains(msg, c.mention) {
			t.Errorf("%s: message %q does not name %s", name, msg, c.mention)
		}
	}
	for name, body := range map[string]string{"bad YAML": "a: [", "two documents": "a: 1\n---\nb: 2\n", ".inf": "x: .inf\n", "dup keys": "a: 1\na: 2\n", "merge": "a: &x {b: 1}\nc:\n  <<: *x\n"} {
		expect(t, name, in.admin("POST", "/api/apis/oas", body, "Content-Type", "application/x-yaml"), 400, "")
	}
	expect(t, "duplicate", in.admin("POST", "/api/apis/oas", oasDoc(id, "D", "/d/")), 409, mgmtErr("Found API with the same ID"))
	// update keeps categories and db id
	expect(t, "categories", in.admin("PUT", "/api/apis/oas/"+id+"/categories", `{"categories":["kept"]}`), 200, "")
	expect(t, "update", in.admin("PUT", "/api/apis/oas/"+id, oasDoc("", "New", "/new/")), 200, `{"Status":"OK","Message":"API updated.","Meta":null}`)
	got = in.admin("GET", "/api/apis/oas/"+id, nil)
	if !bytes.Contains(got.body, []byte(`"id":"`+id+`","name":"New","state":{"active":true},"dbId":"`+dbID+`"`)) {
		t.Fatalf("after update: %s", got.body)
	}
	expect(t, "categories kept", in.admin("GET", "/api/apis/oas/"+id+"/categories", nil), 200, `{"categories":["kept"]}`)
	expect(t, "update mismatch", in.admin("PUT", "/api/apis/oas/"+id, oasDoc("other", "New", "/new/")), 400, "")
	expect(t, "update missing", in.admin("PUT", "/api/apis/oas/nope", oasDoc("nope", "New", "/new/")), 404, mgmtErr("API not found"))
	expect(t, "update invalid", in.admin("PUT", "/api/apis/oas/"+id, oasDoc(id, "New", "")), 400, "")
	expect(t, "delete", in.admin("DELETE", "/api/apis/oas/"+id, nil), 200, `{"Status":"OK","Message":"API deleted.","Meta":null}`)
	expect(t, "get deleted", in.admin("GET", "/api/apis/oas/"+id, nil), 404, mgmtErr("API not found"))
	expect(t, "delete again", in.admin("DELETE", "/api/apis/oas/"+id, nil), 404, mgmtErr("API not found"))
	classic := in.admin("POST", "/api/apis", `{"api_definition":{"name":"C"}}`).json(t)["ID"].(string)
	expect(t, "get classic as OAS", in.admin("GET", "/api/apis/oas/"+classic, nil), 404, mgmtErr("API not found"))
	expect(t, "delete classic as OAS", in.admin("DELETE", "/api/apis/oas/"+classic, nil), 404, mgmtErr("API not found"))
}

func TestCategories(t *testing.T) {
	in := start(t, "")
	a := "dddddddddddddddddddddddddddddddd"
	expect(t, "create", in.admin("POST", "/api/apis/oas", oasDoc(a, "A", "/a/")), 200, "")
	path := "/api/apis/oas/" + a + "/categories"
	expect(t, "empty", in.admin("GET", path, nil), 200, `{"categories":[]}`)
	expect(t, "put", in.admin("PUT", path, `{"categories":["  beta ","alpha","","  ","beta","gamma","alpha"]}`), 200, `{"Status":"OK","Message":"API categories updated.","Meta":null}`)
	expect(t, "get", in.admin("GET", path, nil), 200, `{"categories":["beta","alpha","gamma"]}`)
	for _, body := range []string{`{"categories":`, `not json`, `{"categories":[1]}`, `{"categories":"a"}`, ``, `null`, `[]`} {
		expect(t, "malformed "+body, in.admin("PUT", path, body), 400, mgmtErr("Malformed request data."))
	}
	expect(t, "too long", in.admin("PUT", path, `{"categories":["`+strings.Repeat("x", 1025)+`"]}`), 400, "")
	expect(t, "unchanged", in.admin("GET", path, nil), 200, `{"categories":["beta","alpha","gamma"]}`)
	classic := in.admin("POST", "/api/apis", `{"api_definition":{"name":"C #beta #zeta"}}`).json(t)["ID"].(string)
	for _, id := range []string{"nope", classic} {
		expect(t, "get "+id, in.admin("GET", "/api/apis/oas/"+id+"/categories", nil), 404, mgmtErr("API not found"))
		expect(t, "put "+id, in.admin("PUT", "/api/apis/oas/"+id+"/categories", `{"categories":[]}`), 404, mgmtErr("API not found"))
	}
	all := `{"categories":[{"name":"alpha","count":1},{"name":"beta","count":2},{"name":"gamma","count":1},{"name":"zeta","count":1}]}`
	expect(t, "all", in.admin("GET", "/api/apis/categories", nil), 200, all)
	// a repeated GET writes the bytes kept for the revision: the same answer
	// and headers; gRPC still gets the message
	again := in.admin("GET", "/api/apis/categories", nil)
	expect(t, "all again", again, 200, all)
	if again.header.Get("Content-Type") != "application/json" || again.header.Get("Content-Length") != strconv.Itoa(len(all)) {
		t.Fatalf("all again: headers %v", again.header)
	}
	expect(t, "head", in.admin("HEAD", "/api/apis/categories", nil), 200, "")
	if list, err := in.client.ListCategories(grpcCtx(adminToken), &managementv1.ListCategoriesRequest{}); err != nil || len(list.GetCategories()) != 4 || list.GetCategories()[1].GetCount() != 2 {
		t.Fatalf("gRPC ListCategories after REST: %v %v", list, err)
	}
	expect(t, "put empty", in.admin("PUT", path, `{"categories":[]}`), 200, "")
	expect(t, "all after", in.admin("GET", "/api/apis/categories", nil), 200, `{"categories":[{"name":"beta","count":1},{"name":"zeta","count":1}]}`)
	// gRPC: set and read
	ctx := grpcCtx(adminToken)
	if _, err := in.client.UpdateAPICategories(ctx, &managementv1.UpdateAPICategoriesRequest{ApiId: a, Categories: []string{" g ", "g"}}); err != nil {
		t.Fatal(err)
	}
	cats, err := in.client.GetAPICategories(ctx, &managementv1.GetAPICategoriesRequest{ApiId: a})
	if err != nil || len(cats.GetCategories()) != 1 || cats.GetCategories()[0] != "g" {
		t.Fatalf("gRPC GetAPICategories: %v %v", cats, err)
	}
	// an unreadable stored value answers the contract's 500
	in.stop()
	corrupt(t, in.db, a)
	in = start(t, in.db)
	expect(t, "corrupt", in.admin("GET", path, nil), 500, mgmtErr("Failed to marshal categories payload."))
	expect(t, "corrupt put", in.admin("PUT", path, `{"categories":["x"]}`), 500, mgmtErr("Failed to marshal categories payload."))
}

// corrupt rewrites an API record with a category list that ends early.
func corrupt(t *testing.T, db, id string) {
	t.Helper()
	e, err := boltkv.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rec := []byte{2, 2, 0, 0, 0, 0, 5, 1, 'x'} // layout 2, OAS, four empty strings, 5 categories, only one
	if err := e.Update(context.Background(), func(w kv.WriteTx) error { return w.Put([]byte("api/"+id), rec) }); err != nil {
		t.Fatal(err)
	}
}

func TestExport(t *testing.T) {
	in := start(t, "")
	id := "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	doc := `{"openapi":"3.0.3","info":{"title":"E","version":"1","x-tyk-api-gateway":"nested stays"},"paths":{},"x-n":[9007199254740993,1.50],` +
		`"x-tyk-api-gateway":{"info":{"id":"` + id + `","name":"E","state":{"active":true}},"upstream":{"url":"http://u.test/"},"server":{"listenPath":{"value":"/e/"}}}}`
	expect(t, "create", in.admin("POST", "/api/apis/oas", doc), 200, "")
	for _, c := range []struct{ query, ct, file string }{
		{"", "", "TykOasApiDef-" + id + ".json"},
		{"", "application/json; charset=utf-8", "TykOasApiDef-" + id + ".json"},
		{"", "text/plain", "TykOasApiDef-" + id + ".json"},
		{"?mode=full", "", "TykOasApiDef-" + id + ".json"},
		{"?mode=public", "", "oas-" + id + ".json"},
		{"", "application/x-yaml", "TykOasApiDef-" + id + ".yaml"},
		{"", "text/yaml", "TykOasApiDef-" + id + ".yaml"},
		{"?mode=public", "application/yaml", "oas-" + id + ".yaml"},
	} {
		var hdr []string
		if c.ct != "" {
			hdr = []string{"Content-Type", c.ct}
		}
		r := in.admin("GET", "/api/apis/oas/"+id+"/export"+c.query, nil, hdr...)
		what := c.query + " " + c.ct
		expect(t, what, r, 200, "")
		if r.header.Get("Content-Type") != "application/octet-stream" || r.header.Get("Content-Disposition") != `attachment; filename="`+c.file+`"` {
			t.Fatalf("%s: headers %v", what, r.header)
		}
		public := strings.Contains(c.query, "public")
		if bytes.Contains(r.body, []byte("listenPath")) == public || !bytes.Contains(r.body, []byte("nested stays")) || !bytes.Contains(r.body, []byte("9007199254740993")) {
			t.Fatalf("%s: body %s", what, r.body)
		}
		if strings.HasSuffix(c.file, ".json") && !bytes.Contains(r.body, []byte("\n  \"info\": {\n    \"title\": \"E\"")) {
			t.Fatalf("%s: not two-space JSON: %s", what, r.body)
		}
	}
	classic := in.admin("POST", "/api/apis", `{"api_definition":{"name":"C"}}`).json(t)["ID"].(string)
	for _, id := range []string{"nope", classic} {
		expect(t, "export "+id, in.admin("GET", "/api/apis/oas/"+id+"/export", nil), 400, mgmtErr("Could not retrieve API detail."))
	}
	// YAML re-imports to the same document
	y := in.admin("GET", "/api/apis/oas/"+id+"/export", nil, "Content-Type", "application/x-yaml")
	before := in.admin("GET", "/api/apis/oas/"+id, nil)
	expect(t, "delete", in.admin("DELETE", "/api/apis/oas/"+id, nil), 200, "")
	expect(t, "re-import", in.admin("POST", "/api/apis/oas", y.body, "Content-Type", "application/x-yaml"), 200, "")
	after := in.admin("GET", "/api/apis/oas/"+id, nil)
	strip := regexp.MustCompile(`"dbId":"[0-9a-f]{24}"`)
	if b, a := strip.ReplaceAll(before.body, nil), strip.ReplaceAll(after.body, nil); !bytes.Equal(b, a) {
		t.Fatalf("re-imported document differs:\n%s\n%s", b, a)
	}
	// gRPC export
	f, err := in.client.ExportOASAPI(grpcCtx(adminToken), &managementv1.ExportOASAPIRequest{ApiId: id, Mode: "public", ContentType: "application/x-yaml"})
	if err != nil || f.GetFilename() != "oas-"+id+".yaml" || bytes.Contains(f.GetFile().GetData(), []byte("\nx-tyk-api-gateway:")) {
		t.Fatalf("gRPC export: %v %v", f, err)
	}
}

func TestHTTPShapes(t *testing.T) {
	in := start(t, "")
	expect(t, "unknown path", in.admin("GET", "/api/no-such", nil), 404, mgmtErr("Not Found"))
	r := in.admin("PATCH", "/api/apis", "{}")
	expect(t, "wrong method", r, 405, mgmtErr("Method Not Allowed"))
	if a := r.header.Get("Allow"); !strings.Contains(a, "GET") || !strings.Contains(a, "POST") || strings.Contains(a, "PATCH") {
		t.Fatalf("Allow %q", a)
	}
	big := bytes.Repeat([]byte("a"), 16<<20+1)
	expect(t, "too large", in.admin("POST", "/api/apis", big), 413, mgmtErr("request body too large"))
	m := in.admin("POST", "/api/apis/migrate", `{"mode":5}`)
	expect(t, "migrate malformed", m, 400, `{"ID":"","Message":"Malformed request body","Meta":null,"Status":"Error"}`)
	if !bytes.HasPrefix(m.body, []byte(`{"ID":"","Message":`)) {
		t.Fatalf("migrate error key order: %s", m.body)
	}
}

func TestGRPC(t *testing.T) {
	in := start(t, "")
	ctx := grpcCtx("Bearer " + adminToken)
	id := "ffffffffffffffffffffffffffffffff"
	created, err := in.client.CreateOASAPI(ctx, &managementv1.CreateOASAPIRequest{Body: &httpbody.HttpBody{
		ContentType: "application/x-yaml", Data: []byte("openapi: 3.0.3\ninfo: {title: G, version: '1'}\npaths: {}\nx-tyk-api-gateway:\n  info: {id: " + id + ", name: G, state: {active: true}}\n  upstream: {url: 'http://u.test/'}\n  server: {listenPath: {value: /g/}}\n")}})
	if err != nil || created.GetId() != id {
		t.Fatalf("CreateOASAPI: %v %v", created, err)
	}
	got, err := in.client.GetOASAPI(ctx, &managementv1.GetOASAPIRequest{ApiId: id})
	if err != nil || !json.Valid(got.GetBody().GetData()) {
		t.Fatalf("GetOASAPI: %v %v", got, err)
	}
	list, err := in.client.ListAPIs(ctx, &managementv1.ListAPIsRequest{P: proto.Int64(0)})
	if err != nil || !bytes.Contains(list.GetBody().GetData(), []byte(`"api_id":"`+id+`"`)) {
		t.Fatalf("ListAPIs: %v %v", list, err)
	}
	if _, err := in.client.GetAPI(ctx, &managementv1.GetAPIRequest{ApiId: "nope"}); status.Code(err) != codes.NotFound || status.Convert(err).Message() != "API not found" {
		t.Fatalf("GetAPI missing: %v", err)
	}
	cats, err := in.client.ListCategories(ctx, &managementv1.ListCategoriesRequest{})
	if err != nil || len(cats.GetCategories()) != 0 {
		t.Fatalf("ListCategories: %v %v", cats, err)
	}
}

func TestRestart(t *testing.T) {
	in := start(t, "")
	id := "12121212121212121212121212121212"
	expect(t, "create", in.admin("POST", "/api/apis", classicBody(id, "Durable #d")), 200, "")
	_, key := in.createUser(`{"apis":"read"}`)
	before := in.admin("GET", "/api/apis/"+id, nil)
	in.stop()
	in = start(t, in.db)
	after := in.do("GET", "/api/apis/"+id, key, nil)
	if after.status != 200 || !bytes.Equal(before.body, after.body) {
		t.Fatalf("after restart: %d %s", after.status, after.body)
	}
	expect(t, "categories", in.admin("GET", "/api/apis/categories", nil), 200, `{"categories":[{"name":"d","count":1}]}`)
}
