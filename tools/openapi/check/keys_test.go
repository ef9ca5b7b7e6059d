package check

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mclient "github.com/gatehouse/gatehouse/tools/openapi/client/management/client"
	ms "github.com/gatehouse/gatehouse/tools/openapi/client/management/client/management_service"
	mm "github.com/gatehouse/gatehouse/tools/openapi/client/management/models"
)

// fakeKeyAPI answers a Tyk Gateway's key routes just enough for the typed
// client's calls: create answers a key and its hash, get the session kept,
// update and delete 200.
func fakeKeyAPI(t *testing.T, secret string) string {
	var mu sync.Mutex
	sessions := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-tyk-authorization") != secret {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/tyk/keys"), "/")
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case http.MethodPost:
			key := "key" + name
			if name == "" {
				key = "generated-key"
			}
			sessions["hash-"+key] = body
			json.NewEncoder(w).Encode(map[string]string{"key": key, "status": "ok", "action": "added", "key_hash": "hash-" + key})
		case http.MethodGet:
			w.Write(sessions[name])
		default:
			json.NewEncoder(w).Encode(map[string]string{"key": name, "status": "ok"})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestManagementKeysClient makes every documented key call once, against
// management issuing keys to fakeKeyAPI.
func TestManagementKeysClient(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "gateway-secret")
	os.WriteFile(secretFile, []byte("gw-secret\n"), 0o600)
	addr := start(t, "management", "--gateway-api-url", fakeKeyAPI(t, "gw-secret"), "--gateway-api-secret-file", secretFile)
	c := mclient.New(transport(addr, "/"), formats).ManagementService
	a := auth("")

	name := "Keyed"
	created, err := c.ManagementServiceCreateAPI(ms.NewManagementServiceCreateAPIParams().WithBody(&mm.V1ClassicAPIBody{
		APIDefinition: &mm.V1ClassicAPIDefinition{Name: &name, V1ClassicAPIDefinitionAdditionalProperties: map[string]any{
			"proxy": map[string]any{"listen_path": "/keyed/", "target_url": "http://keyed.test"}}}}), a)
	ok(t, "CreateAPI", err)
	api := created.Payload.ID
	session := &mm.V1SessionState{Alias: "ana", Rate: 10, Per: 1, ApplyPolicies: []string{},
		AccessRights: map[string]any{api: map[string]any{"api_id": api, "versions": []string{"Default"}}}}

	_, err = c.ManagementServicePreviewKey(ms.NewManagementServicePreviewKeyParams().WithBody(session), a)
	ok(t, "PreviewKey", err)
	key, err := c.ManagementServiceCreateKey(ms.NewManagementServiceCreateKeyParams().WithBody(session), a)
	ok(t, "CreateKey", err)
	hash := key.Payload.KeyHash
	if key.Payload.KeyID != "generated-key" || hash != "hash-generated-key" || key.Payload.Data.Alias != "ana" {
		t.Fatalf("CreateKey: %+v", key.Payload)
	}
	custom, err := c.ManagementServiceCreateCustomKey(ms.NewManagementServiceCreateCustomKeyParams().WithKeyID("mine").WithBody(session), a)
	ok(t, "CreateCustomKey", err)
	got, err := c.ManagementServiceGetKey(ms.NewManagementServiceGetKeyParams().WithKeyID(hash).WithHashed(str("1")), a)
	ok(t, "GetKey", err)
	if got.Payload.KeyHash != hash || got.Payload.Data.Alias != "ana" {
		t.Fatalf("GetKey: %+v", got.Payload)
	}
	_, err = c.ManagementServiceUpdateKey(ms.NewManagementServiceUpdateKeyParams().WithKeyID(hash).WithHashed(str("1")).WithBody(session), a)
	ok(t, "UpdateKey", err)
	list, err := c.ManagementServiceListKeys(ms.NewManagementServiceListKeysParams().WithP(str("1")), a)
	ok(t, "ListKeys", err)
	if len(list.Payload.Data.Keys) != 2 || list.Payload.Pages != 1 {
		t.Fatalf("ListKeys: %+v", list.Payload.Data)
	}
	detailed, err := c.ManagementServiceListKeysDetailed(ms.NewManagementServiceListKeysDetailedParams().WithP(str("1")).WithQ(str("ana")), a)
	ok(t, "ListKeysDetailed", err)
	if len(detailed.Payload.Keys) != 2 {
		t.Fatalf("ListKeysDetailed: %+v", detailed.Payload)
	}
	apiKeys, err := c.ManagementServiceListAPIKeys(ms.NewManagementServiceListAPIKeysParams().WithAPIID(api).WithP(str("1")), a)
	ok(t, "ListAPIKeys", err)
	if len(apiKeys.Payload.Data.Keys) != 2 {
		t.Fatalf("ListAPIKeys: %+v", apiKeys.Payload.Data)
	}
	found, err := c.ManagementServiceSearchAPIKeys(ms.NewManagementServiceSearchAPIKeysParams().WithAPIID(api).WithQ(str("generated")).WithP(str("1")), a)
	ok(t, "SearchAPIKeys", err)
	if len(found.Payload.Data.Keys) != 1 {
		t.Fatalf("SearchAPIKeys: %+v", found.Payload.Data)
	}
	_, err = c.ManagementServiceGetAPIKey(ms.NewManagementServiceGetAPIKeyParams().WithAPIID(api).WithKeyID(hash).WithHashed(str("1")), a)
	ok(t, "GetAPIKey", err)
	_, err = c.ManagementServiceUpdateAPIKey(ms.NewManagementServiceUpdateAPIKeyParams().WithAPIID(api).WithKeyID(hash).WithBody(session), a)
	ok(t, "UpdateAPIKey", err)
	_, err = c.ManagementServiceDeleteAPIKey(ms.NewManagementServiceDeleteAPIKeyParams().WithAPIID(api).WithKeyID(custom.Payload.KeyHash), a)
	ok(t, "DeleteAPIKey", err)
	_, err = c.ManagementServiceDeleteKey(ms.NewManagementServiceDeleteKeyParams().WithKeyID(hash), a)
	ok(t, "DeleteKey", err)
	_, err = c.ManagementServiceGetKey(ms.NewManagementServiceGetKeyParams().WithKeyID(hash), a)
	if _, isNotFound := err.(*ms.ManagementServiceGetKeyNotFound); !isNotFound {
		t.Fatalf("GetKey of a deleted key: %T %v, want the documented 404", err, err)
	}
	_, err = c.ManagementServiceDeleteAPI(ms.NewManagementServiceDeleteAPIParams().WithAPIID(api).WithForce(boolPtr(false)), a)
	ok(t, "DeleteAPI", err)
}

func boolPtr(b bool) *bool { return &b }
