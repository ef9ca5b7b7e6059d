package app

import (
	"encoding/json"
	"strings"
	"testing"
)

// plainOAS is an OpenAPI 3.0 document without the Tyk extension, as the
// dashboard SDK's ImportOASRequest carries it.
const plainOAS = `{"openapi":"3.0.3","info":{"title":"Pets","version":"1.0.0"},` +
	`"servers":[{"url":"https://{env}.pets.test/v1","variables":{"env":{"default":"api"}}}],` +
	`"paths":{"/pets":{"get":{"operationId":"listPets","responses":{"200":{"description":"ok"}}}}}}`

const plainOASYAML = `openapi: 3.0.3
info:
  title: Pets YAML
  version: 1.0.0
servers:
  - url: https://yaml.pets.test
paths:
  /pets:
    get:
      operationId: listPets
      responses:
        "200":
          description: ok
`

// tykExt reads x-tyk-api-gateway of a stored or answered document.
func tykExt(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("document: %v: %s", err, doc)
	}
	x, _ := v["x-tyk-api-gateway"].(map[string]any)
	if x == nil {
		t.Fatalf("no x-tyk-api-gateway: %s", doc)
	}
	return x
}

func at(v map[string]any, path ...string) any {
	var cur any = v
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	return cur
}

// TestOASImport restates the dashboard SDK's ImportOAS
// (POST /api/apis/oas/import with upstreamURL, listenPath, customDomain, …;
// JSON or application/x-yaml body; ApiResponse answer).
func TestOASImport(t *testing.T) {
	in := start(t, "")
	r := in.admin("POST", "/api/apis/oas/import?listenPath=/pets/&customDomain=pets.example.com", plainOAS)
	expect(t, "import", r, 200, "")
	res := r.json(t)
	id, _ := res["ID"].(string)
	if res["Status"] != "OK" || id == "" || res["Meta"] == "" {
		t.Fatalf("import answer: %s", r.body)
	}
	got := in.admin("GET", "/api/apis/oas/"+id, nil)
	expect(t, "read the imported API", got, 200, "")
	x := tykExt(t, got.body)
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"info", "name"}, "Pets"},
		{[]string{"info", "id"}, id},
		{[]string{"info", "state", "active"}, true},
		{[]string{"server", "listenPath", "value"}, "/pets/"},
		{[]string{"server", "listenPath", "strip"}, true},
		{[]string{"server", "customDomain", "name"}, "pets.example.com"},
		{[]string{"server", "customDomain", "enabled"}, true},
		{[]string{"upstream", "url"}, "https://api.pets.test/v1"}, // servers[0] with its variable's default
	} {
		if g := at(x, c.path...); g != c.want {
			t.Errorf("%s: %v, want %v", strings.Join(c.path, "."), g, c.want)
		}
	}
	if !strings.Contains(string(got.body), `"operationId":"listPets"`) {
		t.Errorf("the OpenAPI part is kept: %s", got.body)
	}

	// YAML, with upstreamURL overriding servers
	r = in.admin("POST", "/api/apis/oas/import?upstreamURL=http://upstream.test:8080", plainOASYAML, "Content-Type", "application/x-yaml")
	expect(t, "import YAML", r, 200, "")
	y := in.admin("GET", "/api/apis/oas/"+r.json(t)["ID"].(string), nil)
	if x := tykExt(t, y.body); at(x, "upstream", "url") != "http://upstream.test:8080" || at(x, "info", "name") != "Pets YAML" ||
		at(x, "server", "listenPath", "value") != "/" {
		t.Errorf("YAML import: %v", x)
	}

	// a document with the extension keeps it: its ID, listen path and upstream
	withExt := oasDoc("1e500000000000000000000000000001", "Brought", "/brought/")
	r = in.admin("POST", "/api/apis/oas/import", withExt)
	expect(t, "import with the extension", r, 200, "")
	if r.json(t)["ID"] != "1e500000000000000000000000000001" {
		t.Fatalf("the document's ID is kept: %s", r.body)
	}
	b := tykExt(t, in.admin("GET", "/api/apis/oas/1e500000000000000000000000000001", nil).body)
	if at(b, "server", "listenPath", "value") != "/brought/" || at(b, "info", "name") != "Brought" {
		t.Errorf("the brought extension: %v", b)
	}
	expect(t, "the same ID again", in.admin("POST", "/api/apis/oas/import", withExt), 409, "")

	count := len(in.admin("GET", "/api/apis?p=0", nil).json(t)["apis"].([]any))
	for name, c := range map[string]struct {
		query, body, msg string
	}{
		"no document":          {"", "", ""},
		"not an object":        {"", `[1]`, ""},
		"no servers, no param": {"", `{"openapi":"3.0.3","info":{"title":"S","version":"1"},"paths":{}}`, ""},
		"relative upstreamURL": {"?upstreamURL=/x", plainOAS, ""},
		"bad listen path":      {"?listenPath=nope", plainOAS, ""},
		"import by URL":        {"", `{"url":"https://pets.test/openapi.json"}`, ""},
		"not a bool":           {"?allowList=yes-please", plainOAS, ""},
		"no security":          {"?authentication=true", plainOAS, ""},
		"no such template":     {"?templateID=abc", plainOAS, `templateID: no API template "abc"`},
		"no such base API":     {"?base_api_id=abc&new_version_name=v2", plainOAS, "abc is not a valid Base API version"},
	} {
		want := ""
		if c.msg != "" {
			want = mgmtErr(c.msg)
		}
		expect(t, name, in.admin("POST", "/api/apis/oas/import"+c.query, c.body), 400, want)
	}
	expect(t, "a multipart upload without the file field", in.admin("POST", "/api/apis/oas/import",
		"--b\r\nContent-Disposition: form-data; name=\"doc\"\r\n\r\n"+plainOAS+"\r\n--b--\r\n", "Content-Type", "multipart/form-data; boundary=b"), 400,
		mgmtErr("multipart upload: no file field; send the OpenAPI document in the form field file"))
	expect(t, "a multipart upload of no OpenAPI document", in.admin("POST", "/api/apis/oas/import",
		"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.json\"\r\n\r\n[1]\r\n--b--\r\n", "Content-Type", "multipart/form-data; boundary=b"), 400, "")
	if n := len(in.admin("GET", "/api/apis?p=0", nil).json(t)["apis"].([]any)); n != count {
		t.Errorf("refused imports stored something: %d APIs, had %d", n, count)
	}
	// document-carrying operations take the 16 MiB limit, not the 1 MiB one
	big := strings.Replace(plainOAS, `"title":"Pets"`, `"title":"Big","description":"`+strings.Repeat("a", 2<<20)+`"`, 1)
	expect(t, "a 2 MiB document", in.admin("POST", "/api/apis/oas/import?listenPath=/big/", big), 200, "")
	expect(t, "a 2 MiB dry-run", in.admin("POST", "/api/apis/oas/dry-run", `{"oas":`+big+`}`), 200, "")
	expect(t, "a 2 MiB patch", in.admin("PATCH", "/api/apis/oas/"+id, big), 200, "")
	expect(t, "over 16 MiB", in.admin("POST", "/api/apis/oas/import", strings.Repeat(" ", 16<<20+1)), 413, "")

	_, key := in.createUser(`{"apis":"read"}`)
	expect(t, "import needs apis write", in.do("POST", "/api/apis/oas/import", key, plainOAS), 403, "")
	expect(t, "dry-run needs apis write", in.do("POST", "/api/apis/oas/dry-run", key, `{"oas":`+plainOAS+`}`), 403, "")
	expect(t, "patch needs apis write", in.do("PATCH", "/api/apis/oas/"+id, key, plainOAS), 403, "")
}

// TestOASDryRun restates the SDK's DryRunApiOAS (POST /api/apis/oas/dry-run,
// body DryRunRequest {"oas": …} or {"tyk_oas": …}): the Tyk OAS document an
// import would make, nothing stored.
func TestOASDryRun(t *testing.T) {
	in := start(t, "")
	before := len(in.admin("GET", "/api/apis?p=0", nil).json(t)["apis"].([]any))
	r := in.admin("POST", "/api/apis/oas/dry-run?listenPath=/dry/", `{"oas":`+plainOAS+`}`)
	expect(t, "dry-run", r, 200, "")
	x := tykExt(t, r.body)
	if at(x, "server", "listenPath", "value") != "/dry/" || at(x, "upstream", "url") != "https://api.pets.test/v1" ||
		at(x, "info", "name") != "Pets" || at(x, "info", "id") == "" {
		t.Errorf("dry-run document: %s", r.body)
	}
	var doc map[string]any
	json.Unmarshal(r.body, &doc)
	if doc["openapi"] != "3.0.3" || doc["paths"] == nil {
		t.Errorf("the answer is the whole document: %s", r.body)
	}
	r = in.admin("POST", "/api/apis/oas/dry-run", `{"tyk_oas":`+oasDoc("2e500000000000000000000000000001", "T", "/t/")+`}`)
	expect(t, "dry-run of a Tyk OAS document", r, 200, "")
	if x := tykExt(t, r.body); at(x, "info", "id") != "2e500000000000000000000000000001" {
		t.Errorf("tyk_oas keeps its extension: %v", x)
	}
	expect(t, "no document", in.admin("POST", "/api/apis/oas/dry-run", `{}`), 400, "")
	expect(t, "no such base API", in.admin("POST", "/api/apis/oas/dry-run?base_api_id=abc&new_version_name=v2", `{"oas":`+plainOAS+`}`), 400,
		mgmtErr("abc is not a valid Base API version"))
	if after := len(in.admin("GET", "/api/apis?p=0", nil).json(t)["apis"].([]any)); after != before {
		t.Errorf("dry-run stored something: %d APIs, had %d", after, before)
	}
	expect(t, "the dry-run ID is not stored", in.admin("GET", "/api/apis/oas/2e500000000000000000000000000001", nil), 404, "")
}

// TestOASPatch restates the SDK's PatchApiOAS (PATCH /api/apis/oas/{apiId},
// a plain OpenAPI document): the OpenAPI part is replaced, the stored
// x-tyk-api-gateway kept.
func TestOASPatch(t *testing.T) {
	in := start(t, "")
	id := "3e500000000000000000000000000001"
	expect(t, "create", in.admin("POST", "/api/apis/oas", oasDoc(id, "Kept", "/kept/")), 200, "")
	expect(t, "patch", in.admin("PATCH", "/api/apis/oas/"+id, plainOAS), 200,
		`{"Status":"OK","Message":"API updated.","Meta":null}`)
	got := in.admin("GET", "/api/apis/oas/"+id, nil)
	x := tykExt(t, got.body)
	if at(x, "info", "id") != id || at(x, "info", "name") != "Kept" || at(x, "server", "listenPath", "value") != "/kept/" {
		t.Errorf("the extension is kept: %v", x)
	}
	if !strings.Contains(string(got.body), `"operationId":"listPets"`) || !strings.Contains(string(got.body), `"title":"Pets"`) {
		t.Errorf("the OpenAPI part is replaced: %s", got.body)
	}
	expect(t, "patch YAML with listenPath", in.admin("PATCH", "/api/apis/oas/"+id+"?listenPath=/moved/", plainOASYAML, "Content-Type", "application/x-yaml"), 200, "")
	if x := tykExt(t, in.admin("GET", "/api/apis/oas/"+id, nil).body); at(x, "server", "listenPath", "value") != "/moved/" || at(x, "info", "id") != id {
		t.Errorf("listenPath applied: %v", x)
	}
	expect(t, "another API's extension", in.admin("PATCH", "/api/apis/oas/"+id, oasDoc("3e500000000000000000000000000002", "Other", "/o/")), 400, "")
	expect(t, "no such API", in.admin("PATCH", "/api/apis/oas/3e5000000000000000000000000000ff", plainOAS), 404, "")
	expect(t, "patch with allowList", in.admin("PATCH", "/api/apis/oas/"+id+"?allowList=true", plainOAS), 200, "")
	if op := at(tykExt(t, in.admin("GET", "/api/apis/oas/"+id, nil).body), "middleware", "operations", "listPets", "allow", "enabled"); op != true {
		t.Errorf("allowList on patch: listPets allow %v", op)
	}
	expect(t, "no document", in.admin("PATCH", "/api/apis/oas/"+id, ""), 400, "")
}

// TestOASImportAudited: import and patch are audited as the create and
// update they are, with the API as their object; the dry-run is recorded
// as the write request it is, without an object.
func TestOASImportAudited(t *testing.T) {
	in := start(t, "")
	r := in.admin("POST", "/api/apis/oas/import", plainOAS)
	expect(t, "import", r, 200, "")
	id := r.json(t)["ID"].(string)
	expect(t, "patch", in.admin("PATCH", "/api/apis/oas/"+id, plainOAS), 200, "")
	expect(t, "dry-run", in.admin("POST", "/api/apis/oas/dry-run", `{"oas":`+plainOAS+`}`), 200, "")
	logs, _ := in.auditLogs("?p=1")
	want := []struct{ action, object string }{
		{"POST /api/apis/oas/dry-run", ""}, {"PATCH /api/apis/oas/{api_id}", id}, {"POST /api/apis/oas/import", id},
	}
	if len(logs) < len(want) {
		t.Fatalf("%d audit entries: %+v", len(logs), logs)
	}
	for i, w := range want {
		if logs[i].Action != w.action || logs[i].ObjectID != w.object || logs[i].Status != 200 {
			t.Errorf("entry %d: %+v, want %s on %q", i, logs[i], w.action, w.object)
		}
	}
}

// securedOAS has a token and a JWT scheme, a JSON request body and a
// response example.
const securedOAS = `{"openapi":"3.0.3","info":{"title":"Secured","version":"1"},"servers":[{"url":"https://s.test"}],` +
	`"security":[{"key":[]},{"jwt":[]}],"components":{"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Key"},` +
	`"jwt":{"type":"http","scheme":"bearer","bearerFormat":"JWT"}}},"paths":{"/orders":{` +
	`"post":{"operationId":"addOrder","requestBody":{"content":{"application/json":{"schema":{"type":"object"}}}},"responses":{"201":{"description":"ok"}}},` +
	`"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"example":[]}}}}}}}}`

// TestOASImportMiddleware restates the SDK's ImportOAS with allowList,
// validateRequest, mockResponse and authentication (the gateway's
// BuildDefaultTykExtension), as a JSON body and as a multipart upload
// (FormDataFile: the document in the form field file), and the dry-run
// with the same parameters.
func TestOASImportMiddleware(t *testing.T) {
	in := start(t, "")
	const query = "?allowList=true&validateRequest=true&mockResponse=true&authentication=true&listenPath=/orders/"
	multipartBody := "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"orders.json\"\r\nContent-Type: application/json\r\n\r\n" +
		securedOAS + "\r\n--XyZ--\r\n"
	yamlPart := "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"pets.yaml\"\r\n\r\n" + plainOASYAML + "\r\n--XyZ--\r\n"
	for _, c := range []struct {
		name, body string
		headers    []string
	}{
		{"JSON body", securedOAS, nil},
		{"multipart upload", multipartBody, []string{"Content-Type", "multipart/form-data; boundary=XyZ"}},
	} {
		r := in.admin("POST", "/api/apis/oas/import"+query, c.body, c.headers...)
		expect(t, c.name, r, 200, "")
		x := tykExt(t, in.admin("GET", "/api/apis/oas/"+r.json(t)["ID"].(string), nil).body)
		for path, want := range map[string]any{
			"server.listenPath.value":                                              "/orders/",
			"server.authentication.enabled":                                        true,
			"server.authentication.baseIdentityProvider":                           "auth_token",
			"server.authentication.securitySchemes.key.enabled":                    true,
			"server.authentication.securitySchemes.jwt.enabled":                    true,
			"server.authentication.securitySchemes.jwt.header.name":                "Authorization",
			"middleware.operations.addOrder.allow.enabled":                         true,
			"middleware.operations.addOrder.validateRequest.enabled":               true,
			"middleware.operations.addOrder.validateRequest.errorResponseCode":     float64(422),
			"middleware.operations.ordersGET.allow.enabled":                        true,
			"middleware.operations.ordersGET.mockResponse.enabled":                 true,
			"middleware.operations.ordersGET.mockResponse.fromOASExamples.enabled": true,
		} {
			if got := at(x, strings.Split(path, ".")...); got != want {
				t.Errorf("%s: %s = %v, want %v", c.name, path, got, want)
			}
		}
		if at(x, "middleware", "operations", "addOrder", "mockResponse") != nil || at(x, "middleware", "operations", "ordersGET", "validateRequest") != nil {
			t.Errorf("%s: mock only where a response documents an example, validation only with parameters or a JSON body: %v", c.name, at(x, "middleware", "operations"))
		}
	}
	r := in.admin("POST", "/api/apis/oas/import", yamlPart, "Content-Type", "multipart/form-data; boundary=XyZ")
	expect(t, "multipart upload of YAML", r, 200, "")
	if x := tykExt(t, in.admin("GET", "/api/apis/oas/"+r.json(t)["ID"].(string), nil).body); at(x, "info", "name") != "Pets YAML" {
		t.Errorf("YAML upload: %v", x)
	}
	r = in.admin("POST", "/api/apis/oas/dry-run?allowList=false", `{"oas":`+securedOAS+`}`)
	expect(t, "dry-run with allowList=false", r, 200, "")
	if x := tykExt(t, r.body); at(x, "middleware", "operations", "addOrder", "allow", "enabled") != false {
		t.Errorf("dry-run allowList=false: %v", at(x, "middleware"))
	}
}

// TestOASImportTemplate restates the SDK's ImportOAS and DryRunApiOAS with
// templateID: the asset of kind oas-template (the SDK's AddAsset sample)
// is the starting point, the imported document laid over it.
func TestOASImportTemplate(t *testing.T) {
	in := start(t, "")
	asset := `{"kind":"oas-template","name":"my-template","description":"My first template","id":"my-unique-template-id",` +
		`"data":{"info":{"title":"","version":""},"openapi":"3.0.3",` +
		`"paths":{"/anything":{"post":{"operationId":"anythingpost","responses":{"200":{"description":"Post created"}}}}},` +
		`"x-tyk-api-gateway":{"middleware":{"global":{"cache":{"cacheAllSafeRequests":true,"enabled":true,"timeout":5}},` +
		`"operations":{"anythingpost":{"requestSizeLimit":{"enabled":true,"value":100}}}}}}}`
	expect(t, "add the template", in.admin("POST", "/api/assets", asset), 201, "")
	r := in.admin("POST", "/api/apis/oas/import?templateID=my-unique-template-id&listenPath=/tpl/", plainOAS)
	expect(t, "import with the template", r, 200, "")
	got := in.admin("GET", "/api/apis/oas/"+r.json(t)["ID"].(string), nil)
	x := tykExt(t, got.body)
	for path, want := range map[string]any{
		"middleware.global.cache.enabled": true, "middleware.global.cache.timeout": float64(5),
		"middleware.operations.anythingpost.requestSizeLimit.value": float64(100),
		"server.listenPath.value":                                   "/tpl/", "info.name": "Pets", "upstream.url": "https://api.pets.test/v1",
	} {
		if g := at(x, strings.Split(path, ".")...); g != want {
			t.Errorf("%s = %v, want %v", path, g, want)
		}
	}
	if !strings.Contains(string(got.body), `"operationId":"listPets"`) || !strings.Contains(string(got.body), `"/anything"`) {
		t.Errorf("the document's paths over the template's: %s", got.body)
	}
	r = in.admin("POST", "/api/apis/oas/dry-run?templateID=my-unique-template-id", `{"oas":`+plainOAS+`}`)
	expect(t, "dry-run with the template", r, 200, "")
	if at(tykExt(t, r.body), "middleware", "global", "cache", "enabled") != true {
		t.Errorf("dry-run with the template: %s", r.body)
	}

	_, key := in.createUser(`{"apis":"write"}`)
	expect(t, "a template needs assets read", in.do("POST", "/api/apis/oas/import?templateID=my-unique-template-id", key, plainOAS), 403,
		mgmtErr("The user does not have the rights to apply templates."))
	expect(t, "without a template it is enough", in.do("POST", "/api/apis/oas/import", key, plainOAS), 200, "")
	_, reader := in.createUser(`{"apis":"write","assets":"read"}`)
	expect(t, "with assets read", in.do("POST", "/api/apis/oas/import?templateID=my-unique-template-id", reader, plainOAS), 200, "")
}

// TestOASImportVersion restates the SDK's ImportOAS with base_api_id,
// base_api_version_name, new_version_name and set_default (Tyk's
// handleAddApi and ConfigureVersionDefinition): the import is a new
// version of the base, listed in the base's versioning block, in one
// write; the versions route lists both.
func TestOASImportVersion(t *testing.T) {
	in := start(t, "")
	r := in.admin("POST", "/api/apis/oas/import?listenPath=/pets/", plainOAS)
	expect(t, "import the base", r, 200, "")
	base := r.json(t)["ID"].(string)
	count := func() int { return len(in.admin("GET", "/api/apis?p=0", nil).json(t)["apis"].([]any)) }
	before := count()
	for name, c := range map[string]struct {
		query string
		code  int
		msg   string
	}{
		"no new version name": {"?base_api_id=" + base, 422, "The new version name is required"},
		"no base name yet":    {"?base_api_id=" + base + "&new_version_name=v2", 400, "you need to provide a version name for the new Base API: " + base},
		"no such base":        {"?base_api_id=nope&new_version_name=v2&base_api_version_name=v1", 400, "nope is not a valid Base API version"},
	} {
		expect(t, name, in.admin("POST", "/api/apis/oas/import"+c.query+"&listenPath=/pets-v2/", plainOAS), c.code, mgmtErr(c.msg))
	}
	if n := count(); n != before {
		t.Fatalf("refused versions stored something: %d APIs, had %d", n, before)
	}

	r = in.admin("POST", "/api/apis/oas/import?base_api_id="+base+"&base_api_version_name=v1&new_version_name=v2&set_default=true&listenPath=/pets-v2/", plainOAS)
	expect(t, "import as version v2", r, 200, "")
	v2 := r.json(t)["ID"].(string)
	vs := at(tykExt(t, in.admin("GET", "/api/apis/oas/"+base, nil).body), "info", "versioning")
	if got, want := asJSONString(vs), `{"default":"v2","enabled":true,"key":"x-api-version","location":"header","name":"v1","versions":[{"id":"`+v2+`","name":"v2"}]}`; got != want {
		t.Errorf("the base's versioning:\n%s\nwant\n%s", got, want)
	}
	// a next version needs no base name; without set_default the default stays
	r = in.admin("POST", "/api/apis/oas/import?base_api_id="+base+"&new_version_name=v3&listenPath=/pets-v3/", plainOAS)
	expect(t, "import as version v3", r, 200, "")
	v3 := r.json(t)["ID"].(string)
	expect(t, "a version name listed already", in.admin("POST", "/api/apis/oas/import?base_api_id="+base+"&new_version_name=v3&listenPath=/pets-v4/", plainOAS), 400,
		mgmtErr(`new_version_name: the base API already lists a version "v3"`))
	versions := in.admin("GET", "/api/apis/oas/"+base+"/versions", nil)
	expect(t, "versions", versions, 200, "")
	var list struct {
		APIs []struct {
			ID               string `json:"id"`
			VersionName      string `json:"versionName"`
			IsDefaultVersion bool   `json:"isDefaultVersion"`
		} `json:"apis"`
	}
	json.Unmarshal(versions.body, &list)
	if len(list.APIs) != 3 || list.APIs[0].ID != base || list.APIs[0].VersionName != "v1" || list.APIs[0].IsDefaultVersion ||
		list.APIs[1].ID != v2 || !list.APIs[1].IsDefaultVersion || list.APIs[2].ID != v3 || list.APIs[2].IsDefaultVersion {
		t.Errorf("versions: %s", versions.body)
	}
	expect(t, "dry-run as a version", in.admin("POST", "/api/apis/oas/dry-run?base_api_id="+base+"&new_version_name=v9", `{"oas":`+plainOAS+`}`), 200, "")
	if n := count(); n != before+2 {
		t.Errorf("%d APIs, want %d", n, before+2)
	}
	// deleting the base deletes its versions, as for migrated versions
	expect(t, "delete the base", in.admin("DELETE", "/api/apis/oas/"+base, nil), 200, "")
	expect(t, "v2 went with it", in.admin("GET", "/api/apis/oas/"+v2, nil), 404, "")
}

func asJSONString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestOASCreateTemplateAndVersion restates the SDK's CreateApiOAS
// (POST /api/apis/oas) with templateID and with base_api_id,
// base_api_version_name, new_version_name, set_default: the same rules as
// the import, without its defaults.
func TestOASCreateTemplateAndVersion(t *testing.T) {
	in := start(t, "")
	asset := `{"kind":"oas-template","name":"cache","id":"cache-template","data":{"x-tyk-api-gateway":{` +
		`"server":{"listenPath":{"value":"/from-template/","strip":true}},"middleware":{"global":{"cache":{"enabled":true,"timeout":60}}}}}}`
	expect(t, "add the template", in.admin("POST", "/api/assets", asset), 201, "")
	base := "4e500000000000000000000000000001"
	r := in.admin("POST", "/api/apis/oas?templateID=cache-template", oasDoc(base, "Base", "/base/"))
	expect(t, "create with the template", r, 200, "")
	x := tykExt(t, in.admin("GET", "/api/apis/oas/"+base, nil).body)
	if at(x, "middleware", "global", "cache", "timeout") != float64(60) || at(x, "server", "listenPath", "value") != "/base/" ||
		at(x, "server", "listenPath", "strip") != true {
		t.Errorf("the document over the template: %v", x)
	}
	expect(t, "an unknown template", in.admin("POST", "/api/apis/oas?templateID=nope", oasDoc("4e500000000000000000000000000009", "N", "/n/")), 400,
		mgmtErr(`templateID: no API template "nope"`))

	child := "4e500000000000000000000000000002"
	expect(t, "no new version name", in.admin("POST", "/api/apis/oas?base_api_id="+base, oasDoc(child, "V2", "/base-v2/")), 422,
		mgmtErr("The new version name is required"))
	expect(t, "create as version v2", in.admin("POST", "/api/apis/oas?base_api_id="+base+"&base_api_version_name=v1&new_version_name=v2",
		oasDoc(child, "V2", "/base-v2/")), 200, "")
	vs := at(tykExt(t, in.admin("GET", "/api/apis/oas/"+base, nil).body), "info", "versioning")
	if got, want := asJSONString(vs), `{"default":"self","enabled":true,"key":"x-api-version","location":"header","name":"v1","versions":[{"id":"`+child+`","name":"v2"}]}`; got != want {
		t.Errorf("the base's versioning:\n%s\nwant\n%s", got, want)
	}
	expect(t, "the child is not created twice", in.admin("POST", "/api/apis/oas?base_api_id="+base+"&new_version_name=v3",
		oasDoc(child, "V2", "/base-v2/")), 409, "")
	if got := asJSONString(at(tykExt(t, in.admin("GET", "/api/apis/oas/"+base, nil).body), "info", "versioning")); strings.Contains(got, "v3") {
		t.Errorf("a refused version changed the base: %s", got)
	}
}
