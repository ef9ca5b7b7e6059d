package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"google.golang.org/grpc/codes"
	"sigs.k8s.io/yaml"
)

// The classic APIs of the management journey.
const (
	ordersID   = "0123456789abcdef0123456789abcdef" // versioned: v1 (default) and v2; migrated directly
	paymentsID = "fedcba9876543210fedcba9876543210" // unversioned; staged, edited, promoted
	ordersDef  = `{"api_definition":{"name":"Orders #shop #v2","api_id":"` + ordersID + `",
		"proxy":{"listen_path":"/orders/","target_url":"http://orders.internal:8080/","strip_listen_path":true},
		"version_data":{"not_versioned":false,"default_version":"v1","versions":{"v1":{"name":"v1"},"v2":{"name":"v2"}}},
		"definition":{"location":"header","key":"x-api-version"},
		"use_keyless":true,"active":true}}`
	paymentsDef = `{"api_definition":{"name":"Payments #billing","api_id":"` + paymentsID + `",
		"proxy":{"listen_path":"/payments/","target_url":"http://payments.internal/","strip_listen_path":true},
		"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}},
		"use_keyless":true,"active":true}}`
)

// managementJourney: users with different permissions; two classic APIs, one
// versioned; dry run, direct migration, stage → edit → promote; categories;
// export as JSON, YAML and public; a restart keeps it all.
func managementJourney(t *testing.T) {
	s := newService(t, "management")
	admin := s.token // management accepts the key with or without "Bearer "
	mg := managementv1.NewManagementServiceClient(s.conn)

	s.expectJSON(t, http.StatusUnauthorized, `{"Status":"Error","Message":"Not authorised","Meta":null}`,
		"GET", "/api/apis", "", "")

	// Users: a writer and a reader of apis, and one without the apis area.
	user := func(email, perms string) string {
		t.Helper()
		r := s.expect(t, http.StatusOK, "POST", "/api/users", "Bearer "+admin,
			`{"first_name":"E2E","last_name":"User","email_address":"`+email+`","user_permissions":`+perms+`}`)
		v := decode[map[string]any](t, r.body)
		if v["Status"] != "OK" || v["Message"] != "User created" || v["ID"] == "" || v["ID"] != v["Meta"] {
			t.Fatalf("POST /api/users %s: %s", email, r.body)
		}
		key, _ := v["access_key"].(string)
		if key == "" {
			t.Fatalf("POST /api/users %s: no access_key in %s", email, r.body)
		}
		return key
	}
	writer := user("writer@example.com", `{"apis":"write"}`)
	reader := user("reader@example.com", `{"apis":"read"}`)
	nobody := user("people@example.com", `{"users":"read"}`)
	s.expectJSON(t, http.StatusBadRequest, `{"Status":"Error","Message":"User email already exists","Meta":null}`,
		"POST", "/api/users", admin, `{"email_address":"reader@example.com","user_permissions":{"apis":"read"}}`)

	// Two classic APIs.
	created := map[string]string{} // api_id → db id
	for _, def := range []string{ordersDef, paymentsDef} {
		r := s.expect(t, http.StatusOK, "POST", "/api/apis", "Bearer "+writer, def)
		v := decode[map[string]any](t, r.body)
		id, _ := v["ID"].(string)
		dbID, _ := v["Meta"].(string)
		if v["Status"] != "OK" || v["Message"] != "API created" || len(dbID) != 24 || (id != ordersID && id != paymentsID) {
			t.Fatalf("POST /api/apis: %s", r.body)
		}
		created[id] = dbID
	}
	s.expectJSON(t, http.StatusConflict, `{"Status":"Error","Message":"Found API with the same ID","Meta":null}`,
		"POST", "/api/apis", writer, ordersDef)

	// Permissions: a reader cannot migrate (REST and gRPC); without the apis
	// area nothing under /api/apis is readable.
	denied := func(path string) string {
		return "access denied: You do not have permission to access " + path
	}
	s.expectJSON(t, http.StatusForbidden,
		`{"ID":"","Message":"`+denied("/api/apis/migrate")+`","Meta":null,"Status":"Error"}`,
		"POST", "/api/apis/migrate", reader, `{"mode":"dryRun","apiIDs":["`+ordersID+`"]}`)
	_, err := mg.Migrate(authorized(t, reader), &managementv1.MigrateRequest{Mode: "dryRun", ApiIds: []string{ordersID}})
	wantStatus(t, "gRPC Migrate as a reader", err, codes.PermissionDenied, denied("/api/apis/migrate"))
	for _, path := range []string{"/api/apis/oas/" + ordersID + "/export", "/api/apis/oas/" + ordersID + "/categories", "/api/apis"} {
		s.expectJSON(t, http.StatusForbidden, `{"Status":"Error","Message":"`+denied(path)+`","Meta":null}`,
			"GET", path, nobody, "")
	}
	// Before migration the classic IDs are no OAS APIs.
	s.expectJSON(t, http.StatusNotFound, `{"Status":"Error","Message":"API not found","Meta":null}`,
		"GET", "/api/apis/oas/"+ordersID+"/categories", reader, "")
	s.expectJSON(t, http.StatusBadRequest, `{"Status":"Error","Message":"Could not retrieve API detail.","Meta":null}`,
		"GET", "/api/apis/oas/"+ordersID+"/export", reader, "")

	// Dry run of the versioned API: the base and one child version, nothing stored.
	r := s.expect(t, http.StatusOK, "POST", "/api/apis/migrate", writer, `{"mode":"dryRun","apiIDs":["`+ordersID+`"]}`)
	dry := decode[any](t, r.body)
	wantReport(t, "dryRun", dry, []string{ordersID})
	def := at(t, dry, "success", "definitions", 0)
	if got := at(t, def, "apiID"); got != ordersID {
		t.Errorf("dryRun definition apiID %v, want %s", got, ordersID)
	}
	base := at(t, def, "baseAPI")
	versions, _ := at(t, def, "versions").([]any)
	if len(versions) != 1 {
		t.Fatalf("dryRun: %d child versions, want 1 (v2): %s", len(versions), r.body)
	}
	child := versions[0]
	childID, _ := at(t, child, "x-tyk-api-gateway", "info", "id").(string)
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"base id", at(t, base, "x-tyk-api-gateway", "info", "id"), ordersID},
		{"base listen path", at(t, base, "x-tyk-api-gateway", "server", "listenPath", "value"), "/orders/"},
		{"base version list", at(t, base, "x-tyk-api-gateway", "info", "versioning", "versions", 0, "id"), childID},
		{"base version name", at(t, base, "x-tyk-api-gateway", "info", "versioning", "versions", 0, "name"), "v2"},
		{"child name", at(t, child, "x-tyk-api-gateway", "info", "name"), "Orders #shop #v2-v2"},
		{"child listen path", at(t, child, "x-tyk-api-gateway", "server", "listenPath", "value"), "/orders-v2/"},
		{"child internal", at(t, child, "x-tyk-api-gateway", "info", "state", "internal"), true},
	} {
		if c.got != c.want {
			t.Errorf("dryRun %s: %v, want %v", c.what, c.got, c.want)
		}
	}
	if childID == "" || childID == ordersID {
		t.Fatalf("dryRun child id %q", childID)
	}
	s.expect(t, http.StatusNotFound, "GET", "/api/apis/oas/"+ordersID, writer, "")
	s.expect(t, http.StatusOK, "GET", "/api/apis/"+ordersID, writer, "")

	// Direct migration over gRPC: base and child become OAS APIs in place.
	rep, err := mg.Migrate(authorized(t, "Bearer "+writer), &managementv1.MigrateRequest{Mode: "direct", ApiIds: []string{ordersID}})
	if err != nil {
		t.Fatalf("gRPC Migrate direct: %v", err)
	}
	wantReport(t, "direct", decode[any](t, rep.GetReport().GetData()), []string{ordersID})
	if n := len(at(t, decode[any](t, rep.GetReport().GetData()), "success", "definitions").([]any)); n != 0 {
		t.Errorf("direct: %d definitions, want none outside dryRun", n)
	}
	ordersDoc := s.expect(t, http.StatusOK, "GET", "/api/apis/oas/"+ordersID, reader, "").body
	directDoc := decode[any](t, ordersDoc)
	if got := at(t, directDoc, "x-tyk-api-gateway", "info", "dbId"); got != created[ordersID] {
		t.Errorf("direct: dbId %v, want the classic API's %s", got, created[ordersID])
	}
	if got := at(t, directDoc, "x-tyk-api-gateway", "info", "versioning", "versions", 0, "id"); got != childID {
		t.Errorf("direct: child version id %v, want the dry run's %s (deterministic)", got, childID)
	}
	childDoc := decode[any](t, s.expect(t, http.StatusOK, "GET", "/api/apis/oas/"+childID, reader, "").body)
	if got := at(t, childDoc, "x-tyk-api-gateway", "info", "name"); got != "Orders #shop #v2-v2" {
		t.Errorf("child after direct: name %v", got)
	}
	s.expectJSON(t, http.StatusOK, `{"categories":["shop","v2"]}`, "GET", "/api/apis/oas/"+ordersID+"/categories", reader, "")
	cats, err := mg.GetAPICategories(authorized(t, reader), &managementv1.GetAPICategoriesRequest{ApiId: ordersID})
	if err != nil || strings.Join(cats.GetCategories(), ",") != "shop,v2" {
		t.Errorf("gRPC GetAPICategories: %v, %v; want [shop v2]", cats.GetCategories(), err)
	}

	// Stage the unversioned API, edit the staged copy, promote it.
	r = s.expect(t, http.StatusOK, "POST", "/api/apis/migrate", writer, `{"mode":"stage","apiIDs":["`+paymentsID+`"]}`)
	staged := decode[any](t, r.body)
	wantReport(t, "stage", staged, []string{paymentsID})
	sameJSON(t, "stage stagedAPIs", mustJSON(t, at(t, staged, "success", "stagedAPIs")),
		[]byte(`[{"classicAPIID":"`+paymentsID+`","oasAPIID":"staging-`+paymentsID+`"}]`))
	stagingID := "staging-" + paymentsID
	stagedDoc := decode[any](t, s.expect(t, http.StatusOK, "GET", "/api/apis/oas/"+stagingID, reader, "").body)
	if got := at(t, stagedDoc, "x-tyk-api-gateway", "info", "name"); got != "[staged] Payments #billing" {
		t.Errorf("staged name %v", got)
	}
	if got := at(t, stagedDoc, "x-tyk-api-gateway", "server", "listenPath", "value"); got != "/tyk-staging/payments/" {
		t.Errorf("staged listen path %v", got)
	}
	s.expect(t, http.StatusOK, "GET", "/api/apis/"+paymentsID, reader, "") // the classic API is untouched
	at(t, stagedDoc, "x-tyk-api-gateway", "upstream").(object)["url"] = "http://payments-v2.internal/"
	at(t, stagedDoc, "info").(object)["description"] = "Edited while staged."
	s.expectJSON(t, http.StatusOK, `{"Status":"OK","Message":"API updated.","Meta":null}`,
		"PUT", "/api/apis/oas/"+stagingID, writer, string(mustJSON(t, stagedDoc)))
	r = s.expect(t, http.StatusOK, "POST", "/api/apis/migrate", writer, `{"mode":"promote","apiIDs":["`+paymentsID+`"]}`)
	wantReport(t, "promote", decode[any](t, r.body), []string{paymentsID})
	paymentsDoc := s.expect(t, http.StatusOK, "GET", "/api/apis/oas/"+paymentsID, reader, "").body
	promoted := decode[any](t, paymentsDoc)
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"id", at(t, promoted, "x-tyk-api-gateway", "info", "id"), paymentsID},
		{"db id", at(t, promoted, "x-tyk-api-gateway", "info", "dbId"), created[paymentsID]},
		{"name", at(t, promoted, "x-tyk-api-gateway", "info", "name"), "Payments #billing"},
		{"listen path", at(t, promoted, "x-tyk-api-gateway", "server", "listenPath", "value"), "/payments/"},
		{"edited upstream", at(t, promoted, "x-tyk-api-gateway", "upstream", "url"), "http://payments-v2.internal/"},
		{"edited description", at(t, promoted, "info", "description"), "Edited while staged."},
	} {
		if c.got != c.want {
			t.Errorf("promoted %s: %v, want %v", c.what, c.got, c.want)
		}
	}
	s.expect(t, http.StatusNotFound, "GET", "/api/apis/oas/"+stagingID, reader, "")
	s.expectJSON(t, http.StatusOK, `{"categories":["billing"]}`, "GET", "/api/apis/oas/"+paymentsID+"/categories", reader, "")

	// The list shows base, child and promoted API as OAS APIs, nothing staged.
	list := decode[any](t, s.expect(t, http.StatusOK, "GET", "/api/apis?p=0", reader, "").body)
	listed := map[string]bool{}
	for _, item := range at(t, list, "apis").([]any) {
		if at(t, item, "api_definition", "is_oas") == true {
			listed[at(t, item, "api_definition", "api_id").(string)] = true
		}
	}
	if len(listed) != 3 || !listed[ordersID] || !listed[childID] || !listed[paymentsID] {
		t.Errorf("GET /api/apis?p=0: OAS APIs %v, want %s, %s (child) and %s", listed, ordersID, childID, paymentsID)
	}
	s.expectJSON(t, http.StatusOK, `{"categories":[{"name":"billing","count":1},{"name":"shop","count":1},{"name":"v2","count":1}]}`,
		"GET", "/api/apis/categories", reader, "")

	checkExports(t, s, mg, reader, paymentsID, paymentsDoc)
	checkExports(t, s, mg, reader, ordersID, ordersDoc)

	// A restart keeps the OAS APIs, their categories and the users' keys.
	s.restart(t)
	mg = managementv1.NewManagementServiceClient(s.conn)
	s.expectJSON(t, http.StatusOK, string(ordersDoc), "GET", "/api/apis/oas/"+ordersID, reader, "")
	s.expectJSON(t, http.StatusOK, string(paymentsDoc), "GET", "/api/apis/oas/"+paymentsID, reader, "")
	s.expect(t, http.StatusOK, "GET", "/api/apis/oas/"+childID, reader, "")
	s.expectJSON(t, http.StatusOK, `{"categories":["shop","v2"]}`, "GET", "/api/apis/oas/"+ordersID+"/categories", reader, "")
	cats, err = mg.GetAPICategories(authorized(t, reader), &managementv1.GetAPICategoriesRequest{ApiId: paymentsID})
	if err != nil || strings.Join(cats.GetCategories(), ",") != "billing" {
		t.Errorf("gRPC GetAPICategories after restart: %v, %v; want [billing]", cats.GetCategories(), err)
	}
	checkExports(t, s, mg, reader, ordersID, ordersDoc)
	s.expectJSON(t, http.StatusForbidden, `{"Status":"Error","Message":"`+denied("/api/apis/oas/"+ordersID+"/export")+`","Meta":null}`,
		"GET", "/api/apis/oas/"+ordersID+"/export", nobody, "")
	s.stop(t)
}

// wantReport checks a migrate report with every API succeeded, none failed
// or skipped.
func wantReport(t *testing.T, mode string, report any, ids []string) {
	t.Helper()
	want := fmt.Sprintf(`{"count":%d,"apiIDs":%s}`, len(ids), mustJSON(t, ids))
	got := fmt.Sprintf(`{"count":%v,"apiIDs":%s}`, at(t, report, "success", "count"), mustJSON(t, at(t, report, "success", "apiIDs")))
	sameJSON(t, mode+" success", []byte(got), []byte(want))
	sameJSON(t, mode+" failure", mustJSON(t, at(t, report, "failure")), []byte(`{"count":0,"errors":[]}`))
	sameJSON(t, mode+" skipped", mustJSON(t, at(t, report, "skipped")), []byte(`{"count":0,"apis":[]}`))
	if at(t, report, "abortedOnFailure") != false {
		t.Errorf("%s: abortedOnFailure is not false", mode)
	}
}

// checkExports: the JSON export is the stored document indented by two
// spaces, the YAML export the same document, the public export the document
// without its root x-tyk-api-gateway; REST and gRPC agree.
func checkExports(t *testing.T, s *service, mg managementv1.ManagementServiceClient, key, id string, stored []byte) {
	t.Helper()
	path := "/api/apis/oas/" + id + "/export"
	wantFile := func(r response, name string) {
		t.Helper()
		if ct := r.header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("export %s: Content-Type %q, want application/octet-stream", name, ct)
		}
		if cd, want := r.header.Get("Content-Disposition"), `attachment; filename="`+name+`"`; cd != want {
			t.Errorf("export: Content-Disposition %q, want %q", cd, want)
		}
	}

	var indented bytes.Buffer
	if err := json.Indent(&indented, stored, "", "  "); err != nil {
		t.Fatal(err)
	}
	js := s.expect(t, http.StatusOK, "GET", path, key, "", "Content-Type", "application/json; charset=utf-8")
	wantFile(js, "TykOasApiDef-"+id+".json")
	if got := bytes.TrimRight(js.body, "\n"); !bytes.Equal(got, indented.Bytes()) {
		t.Errorf("JSON export of %s is not the stored document indented by two spaces:\n%s\nwant\n%s", id, js.body, indented.Bytes())
	}

	ym := s.expect(t, http.StatusOK, "GET", path, key, "", "Content-Type", "application/x-yaml")
	wantFile(ym, "TykOasApiDef-"+id+".yaml")
	asJSON, err := yaml.YAMLToJSON(ym.body)
	if err != nil {
		t.Fatalf("YAML export of %s does not parse: %v\n%s", id, err, ym.body)
	}
	sameJSON(t, "YAML export of "+id+" as JSON", asJSON, js.body)

	pub := s.expect(t, http.StatusOK, "GET", path+"?mode=public", key, "")
	wantFile(pub, "oas-"+id+".json")
	doc := decode[map[string]any](t, stored)
	delete(doc, "x-tyk-api-gateway")
	sameJSON(t, "public export of "+id, pub.body, mustJSON(t, doc))
	if bytes.Contains(pub.body, []byte(`"x-tyk-api-gateway"`)) {
		t.Errorf("public export of %s still mentions x-tyk-api-gateway", id)
	}

	ex, err := mg.ExportOASAPI(authorized(t, key), &managementv1.ExportOASAPIRequest{ApiId: id, Mode: "public"})
	if err != nil {
		t.Fatalf("gRPC ExportOASAPI %s public: %v", id, err)
	}
	if ex.GetFilename() != "oas-"+id+".json" || !bytes.Equal(ex.GetFile().GetData(), pub.body) {
		t.Errorf("gRPC ExportOASAPI %s public: %q, %s; want the REST file %s", id, ex.GetFilename(), ex.GetFile().GetData(), pub.body)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
