package check

import (
	"bytes"
	"testing"

	mclient "github.com/gatehouse/gatehouse/tools/openapi/client/management/client"
	ms "github.com/gatehouse/gatehouse/tools/openapi/client/management/client/management_service"
	mm "github.com/gatehouse/gatehouse/tools/openapi/client/management/models"
)

func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestManagementClient makes every documented management call once.
func TestManagementClient(t *testing.T) {
	c := mclient.New(transport(start(t, "management"), "/"), formats).ManagementService
	a := auth("Bearer ")

	name := "Orders #shop"
	created, err := c.ManagementServiceCreateAPI(ms.NewManagementServiceCreateAPIParams().WithBody(&mm.V1ClassicAPIBody{
		APIDefinition: &mm.V1ClassicAPIDefinition{Name: &name, V1ClassicAPIDefinitionAdditionalProperties: map[string]any{
			"proxy": map[string]any{"listen_path": "/orders/", "target_url": "http://orders.test"}, "use_keyless": true}},
		HookReferences: []any{}}), a)
	ok(t, "CreateAPI", err)
	apiID, dbID := created.Payload.ID, created.Payload.Meta

	got, err := c.ManagementServiceGetAPI(ms.NewManagementServiceGetAPIParams().WithAPIID(dbID), a)
	ok(t, "GetAPI by db id", err)
	if got.Payload.APIDefinition.APIID != apiID || got.Payload.APIDefinition.OrgID == "" {
		t.Fatalf("GetAPI: %+v", got.Payload.APIDefinition)
	}
	def := got.Payload.APIDefinition
	renamed := "Orders v2 #shop"
	def.Name = &renamed
	_, err = c.ManagementServiceUpdateAPI(ms.NewManagementServiceUpdateAPIParams().WithAPIID(dbID).WithBody(&mm.V1ClassicAPIBody{APIDefinition: def}), a)
	ok(t, "UpdateAPI by db id", err)

	list, err := c.ManagementServiceListAPIs(ms.NewManagementServiceListAPIsParams().WithP(str("0")).WithCategory(str("shop")), a)
	ok(t, "ListAPIs", err)
	if len(list.Payload.Apis) != 1 || *list.Payload.Apis[0].APIDefinition.Name != renamed {
		t.Fatalf("ListAPIs: %+v", list.Payload)
	}
	searched, err := c.ManagementServiceSearchAPIs(ms.NewManagementServiceSearchAPIsParams().WithQ(str("ORDERS v2")).WithP(str("1")).WithPageSize(str("20")).
		WithKind(str("classic")).WithActive(str("false")).WithCategory(str("shop")).WithFields(str("name,listen_path")), a)
	ok(t, "SearchAPIs", err)
	if len(searched.Payload.Apis) != 1 || *searched.Payload.Apis[0].APIDefinition.Name != renamed || *searched.Payload.Pages != 1 {
		t.Fatalf("SearchAPIs: %+v", searched.Payload)
	}

	oasID := "0123456789abcdef0123456789abcdef"
	doc := &mm.V1TykOASDocument{
		Openapi: str("3.0.3"),
		Info:    map[string]any{"title": "Pets", "version": "1"},
		Paths:   map[string]any{},
		XTykAPIGateway: map[string]any{
			"info":     map[string]any{"id": oasID, "name": "Pets", "state": map[string]any{"active": true}},
			"upstream": map[string]any{"url": "http://pets.test/"},
			"server":   map[string]any{"listenPath": map[string]any{"value": "/pets/", "strip": true}},
		},
	}
	createdOAS, err := c.ManagementServiceCreateOASAPI(ms.NewManagementServiceCreateOASAPIParams().WithBody(doc), a)
	ok(t, "CreateOASAPI", err)
	if createdOAS.Payload.ID != oasID {
		t.Fatalf("CreateOASAPI: %+v", createdOAS.Payload)
	}
	gotOAS, err := c.ManagementServiceGetOASAPI(ms.NewManagementServiceGetOASAPIParams().WithAPIID(oasID), a)
	ok(t, "GetOASAPI", err)
	_, err = c.ManagementServiceUpdateOASAPI(ms.NewManagementServiceUpdateOASAPIParams().WithAPIID(createdOAS.Payload.Meta).WithBody(gotOAS.Payload), a)
	ok(t, "UpdateOASAPI by db id", err)
	_, err = c.ManagementServiceUpdateAPICategories(ms.NewManagementServiceUpdateAPICategoriesParams().WithAPIID(oasID).
		WithBody(&mm.ManagementServiceUpdateAPICategoriesBody{Categories: []string{"pets"}}), a)
	ok(t, "UpdateAPICategories", err)
	cats, err := c.ManagementServiceGetAPICategories(ms.NewManagementServiceGetAPICategoriesParams().WithAPIID(oasID), a)
	ok(t, "GetAPICategories", err)
	if len(cats.Payload.Categories) != 1 {
		t.Fatalf("GetAPICategories: %+v", cats.Payload)
	}
	all, err := c.ManagementServiceListCategories(ms.NewManagementServiceListCategoriesParams(), a)
	ok(t, "ListCategories", err)
	if len(all.Payload.Categories) != 2 {
		t.Fatalf("ListCategories: %+v", all.Payload)
	}
	plain := &mm.V1OpenAPIDocument{
		Openapi: str("3.0.3"),
		Info:    map[string]any{"title": "Imported", "version": "1"},
		Servers: []any{map[string]any{"url": "http://imported.test/"}},
		Paths:   map[string]any{},
	}
	dry, err := c.ManagementServiceDryRunOASAPI(ms.NewManagementServiceDryRunOASAPIParams().WithListenPath(str("/dry/")).
		WithBody(&mm.V1DryRunRequest{Oas: plain}), a)
	ok(t, "DryRunOASAPI", err)
	if lp, _ := dry.Payload.XTykAPIGateway.(map[string]any)["server"].(map[string]any)["listenPath"].(map[string]any); lp["value"] != "/dry/" {
		t.Fatalf("DryRunOASAPI: %+v", dry.Payload.XTykAPIGateway)
	}
	yes := true
	imported, err := c.ManagementServiceImportOASAPI(ms.NewManagementServiceImportOASAPIParams().WithListenPath(str("/imported/")).
		WithUpstreamURL(str("http://upstream.test/")).WithCustomDomain(str("imported.test")).WithAllowList(&yes).WithBody(plain), a)
	ok(t, "ImportOASAPI", err)
	if imported.Payload.ID == "" {
		t.Fatalf("ImportOASAPI: %+v", imported.Payload)
	}
	_, err = c.ManagementServicePatchOASAPI(ms.NewManagementServicePatchOASAPIParams().WithAPIID(imported.Payload.ID).
		WithListenPath(str("/patched/")).WithBody(plain), a)
	ok(t, "PatchOASAPI", err)
	var file bytes.Buffer
	_, err = c.ManagementServiceExportOASAPI(ms.NewManagementServiceExportOASAPIParams().WithAPIID(oasID).WithMode(str("public")), a, &file)
	ok(t, "ExportOASAPI", err)
	if !bytes.Contains(file.Bytes(), []byte(`"openapi"`)) || bytes.Contains(file.Bytes(), []byte("x-tyk-api-gateway")) {
		t.Fatalf("ExportOASAPI: %s", file.Bytes())
	}

	report, err := c.ManagementServiceMigrate(ms.NewManagementServiceMigrateParams().WithBody(&mm.V1MigrateRequest{Mode: "dryRun", APIIDs: []string{apiID}}), a)
	ok(t, "Migrate", err)
	if n := *report.Payload.Success.Count + *report.Payload.Failure.Count; n != 1 || len(report.Payload.Success.Definitions) != int(*report.Payload.Success.Count) {
		t.Fatalf("Migrate: %+v %+v %+v", report.Payload.Success, report.Payload.Failure, report.Payload.Skipped)
	}

	pol, err := c.ManagementServiceCreatePolicy(ms.NewManagementServiceCreatePolicyParams().WithBody(&mm.V1Policy{
		Name: "Gold", Rate: 10, Per: 1, AccessRights: map[string]any{apiID: map[string]any{"api_id": apiID, "versions": []string{"Default"}}}}), a)
	ok(t, "CreatePolicy", err)
	pid := pol.Payload.Message
	pols, err := c.ManagementServiceListPolicies(ms.NewManagementServiceListPoliciesParams().WithP(str("-2")), a)
	ok(t, "ListPolicies", err)
	if len(pols.Payload.Data) != 1 || pols.Payload.Data[0].DbID != pid {
		t.Fatalf("ListPolicies: %+v", pols.Payload)
	}
	found, err := c.ManagementServiceSearchPolicies(ms.NewManagementServiceSearchPoliciesParams().WithQ(str("gol")).WithAPIID(str(apiID)), a)
	ok(t, "SearchPolicies", err)
	if len(found.Payload.Data) != 1 || found.Payload.Data[0].DbID != pid {
		t.Fatalf("SearchPolicies: %+v", found.Payload)
	}
	active, err := c.ManagementServiceListPolicies(ms.NewManagementServiceListPoliciesParams().WithActive(str("true")), a)
	ok(t, "ListPolicies active", err)
	if len(active.Payload.Data) != 0 {
		t.Fatalf("ListPolicies ?active=: %+v (the policy has no active: true)", active.Payload)
	}
	gotPol, err := c.ManagementServiceGetPolicy(ms.NewManagementServiceGetPolicyParams().WithPolicyID(pid), a)
	ok(t, "GetPolicy", err)
	if gotPol.Payload.ID != pid || gotPol.Payload.Name != "Gold" {
		t.Fatalf("GetPolicy: %+v", gotPol.Payload)
	}
	_, err = c.ManagementServiceUpdatePolicy(ms.NewManagementServiceUpdatePolicyParams().WithPolicyID(pid).WithBody(&mm.V1Policy{Name: "Gold 2"}), a)
	ok(t, "UpdatePolicy", err)
	_, err = c.ManagementServiceDeletePolicy(ms.NewManagementServiceDeletePolicyParams().WithPolicyID(pid), a)
	ok(t, "DeletePolicy", err)
	asset, err := c.ManagementServiceCreateAsset(ms.NewManagementServiceCreateAssetParams().WithBody(&mm.V1Asset{
		ID: "tmpl", Name: "Template", Kind: "oas-template", Data: map[string]any{"openapi": "3.0.3"}}), a)
	ok(t, "CreateAsset", err)
	assets, err := c.ManagementServiceListAssets(ms.NewManagementServiceListAssetsParams().WithKind(str("oas-template")), a)
	ok(t, "ListAssets", err)
	if len(assets.Payload) != 1 || assets.Payload[0].DbID != asset.Payload.Meta {
		t.Fatalf("ListAssets: %+v", assets.Payload)
	}
	_, err = c.ManagementServiceGetAsset(ms.NewManagementServiceGetAssetParams().WithAssetID("tmpl"), a)
	ok(t, "GetAsset", err)
	_, err = c.ManagementServiceUpdateAsset(ms.NewManagementServiceUpdateAssetParams().WithAssetID("tmpl").WithBody(&mm.V1Asset{Name: "Template 2"}), a)
	ok(t, "UpdateAsset", err)
	_, err = c.ManagementServiceDeleteAsset(ms.NewManagementServiceDeleteAssetParams().WithAssetID(asset.Payload.Meta), a)
	ok(t, "DeleteAsset", err)
	nodes, err := c.ManagementServiceListNodes(ms.NewManagementServiceListNodesParams(), a)
	ok(t, "ListNodes", err)
	if len(nodes.Payload.Nodes) != 0 {
		t.Fatalf("ListNodes: %+v", nodes.Payload)
	}

	user, err := c.ManagementServiceCreateUser(ms.NewManagementServiceCreateUserParams().WithUser(&mm.V1UserInput{
		EmailAddress: "ana@example.test", FirstName: "Ana", UserPermissions: map[string]string{"apis": "read"}}), a)
	ok(t, "CreateUser", err)
	uid := user.Payload.ID
	users, err := c.ManagementServiceListUsers(ms.NewManagementServiceListUsersParams().WithP(str("1")), a)
	ok(t, "ListUsers", err)
	if len(users.Payload.Users) != 2 || users.Payload.Users[0].OrgID == "" {
		t.Fatalf("ListUsers: %+v", users.Payload)
	}
	logs, err := c.ManagementServiceListAuditLogs(ms.NewManagementServiceListAuditLogsParams().WithP(str("1")).WithUserID(str("")), a)
	ok(t, "ListAuditLogs", err)
	if len(logs.Payload.Logs) == 0 || logs.Payload.Logs[0].Action != "POST /api/users" || logs.Payload.Logs[0].Status != 200 {
		t.Fatalf("ListAuditLogs: %+v", logs.Payload)
	}
	_, err = c.ManagementServiceGetUser(ms.NewManagementServiceGetUserParams().WithUserID(uid), a)
	ok(t, "GetUser", err)
	_, err = c.ManagementServiceUpdateUser(ms.NewManagementServiceUpdateUserParams().WithUserID(uid).WithUser(&mm.V1UserInput{LastName: "B"}), a)
	ok(t, "UpdateUser", err)
	reset, err := c.ManagementServiceResetUserKey(ms.NewManagementServiceResetUserKeyParams().WithUserID(uid), a)
	ok(t, "ResetUserKey (PUT)", err)
	reset2, err := c.ManagementServiceResetUserKey2(ms.NewManagementServiceResetUserKey2Params().WithUserID(uid), a)
	ok(t, "ResetUserKey (POST)", err)
	if reset.Payload.AccessKey == "" || reset2.Payload.AccessKey == reset.Payload.AccessKey {
		t.Fatalf("ResetUserKey: %+v %+v", reset.Payload, reset2.Payload)
	}
	_, err = c.ManagementServiceDeleteUser(ms.NewManagementServiceDeleteUserParams().WithUserID(uid), a)
	ok(t, "DeleteUser", err)

	_, err = c.ManagementServiceDeleteOASAPI(ms.NewManagementServiceDeleteOASAPIParams().WithAPIID(oasID), a)
	ok(t, "DeleteOASAPI", err)
	_, err = c.ManagementServiceDeleteAPI(ms.NewManagementServiceDeleteAPIParams().WithAPIID(dbID), a)
	ok(t, "DeleteAPI by db id", err)
	// a documented error is read as one
	_, err = c.ManagementServiceGetAPI(ms.NewManagementServiceGetAPIParams().WithAPIID(apiID), a)
	if _, isNotFound := err.(*ms.ManagementServiceGetAPINotFound); !isNotFound {
		t.Fatalf("GetAPI of a deleted API: %T %v, want the documented 404", err, err)
	}
}
