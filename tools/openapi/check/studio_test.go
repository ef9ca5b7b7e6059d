package check

import (
	"testing"

	sclient "github.com/gatehouse/gatehouse/tools/openapi/client/studio/client"
	ss "github.com/gatehouse/gatehouse/tools/openapi/client/studio/client/studio_service"
	sm "github.com/gatehouse/gatehouse/tools/openapi/client/studio/models"
)

// TestStudioClient makes every documented studio call once.
func TestStudioClient(t *testing.T) {
	c := sclient.New(transport(start(t, "studio"), "/"), formats).StudioService
	a := auth("Bearer ")

	created, err := c.StudioServiceCreateLlmSettings(ss.NewStudioServiceCreateLlmSettingsParams().WithBody(&sm.V1CreateLlmSettingsRequest{
		Data: &sm.V1LlmSettingsInput{Type: "llm-settings", Attributes: &sm.V1LlmSettingsChanges{
			ModelName: "gpt-4o", Temperature: 0.7, StopWords: []string{"END"}, Metadata: map[string]any{"team": "a", "n": 1}}}}), a)
	ok(t, "CreateLlmSettings", err)
	id := created.Payload.Data.ID
	if got := created.Payload.Data.Attributes; len(got.StopWords) != 1 || got.StopWords[0] != "END" || got.Metadata == nil {
		t.Fatalf("CreateLlmSettings: %+v", got)
	}
	_, err = c.StudioServiceListLlmSettings(ss.NewStudioServiceListLlmSettingsParams().WithPage(str("1")).WithPageSize(str("10")), a)
	ok(t, "ListLlmSettings", err)
	_, err = c.StudioServiceGetLlmSettings(ss.NewStudioServiceGetLlmSettingsParams().WithID(id), a)
	ok(t, "GetLlmSettings", err)
	_, err = c.StudioServiceUpdateLlmSettings(ss.NewStudioServiceUpdateLlmSettingsParams().WithID(id).WithBody(&sm.StudioServiceUpdateLlmSettingsBody{
		Data: &sm.V1LlmSettingsInput{Attributes: &sm.V1LlmSettingsChanges{StopWords: []string{"STOP", "END"}}}}), a)
	ok(t, "UpdateLlmSettings", err)
	_, err = c.StudioServiceDeleteLlmSettings(ss.NewStudioServiceDeleteLlmSettingsParams().WithID(id), a)
	ok(t, "DeleteLlmSettings", err)

	user, err := c.StudioServiceCreateUser(ss.NewStudioServiceCreateUserParams().WithBody(&sm.V1CreateUserRequest{
		Data: &sm.V1UserInput{Type: "users", Attributes: &sm.V1UserAttributes{Email: "ana@example.test", Name: "Ana"}}}), a)
	ok(t, "CreateUser", err)
	_, err = c.StudioServiceListUsers(ss.NewStudioServiceListUsersParams(), a)
	ok(t, "ListUsers", err)
	logs, err := c.StudioServiceListAuditLogs(ss.NewStudioServiceListAuditLogsParams(), a)
	ok(t, "ListAuditLogs", err)
	if len(logs.Payload.Data) == 0 || logs.Payload.Data[0].Attributes.Action != "POST /api/v1/users" || logs.Payload.Data[0].Attributes.Status != 201 {
		t.Fatalf("ListAuditLogs: %+v", logs.Payload)
	}
	_, err = c.StudioServiceDeleteUser(ss.NewStudioServiceDeleteUserParams().WithID(user.Payload.Data.ID), a)
	ok(t, "DeleteUser", err)
}
