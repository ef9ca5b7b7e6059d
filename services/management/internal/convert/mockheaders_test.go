package convert

import (
	"encoding/json"
	"testing"
)

// TestMockHeadersCanonical: mock response header names are written as Tyk writes them and the gateway sends
// them, canonicalised by http.CanonicalHeaderKey, whether the mock comes from mock_response or method_actions.
func TestMockHeadersCanonical(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string]any
		want    string // the mockResponse.headers array, JSON
		fail    bool
	}{
		{"lower case", map[string]any{"mock": "1"}, `[{"name":"Mock","value":"1"}]`, false},
		{"mixed", map[string]any{"x-custom-HEADER": "a", "content-type": "text/plain"},
			`[{"name":"Content-Type","value":"text/plain"},{"name":"X-Custom-Header","value":"a"}]`, false},
		{"already canonical", map[string]any{"Cache-Control": "no-store"}, `[{"name":"Cache-Control","value":"no-store"}]`, false},
		{"same header twice, same value", map[string]any{"mock": "1", "Mock": "1"}, `[{"name":"Mock","value":"1"}]`, false},
		{"same header twice, different values", map[string]any{"mock": "1", "MOCK": "2"}, ``, true},
	} {
		for _, source := range []string{"mock_response", "method_actions"} {
			t.Run(source+"/"+tc.name, func(t *testing.T) {
				def := classicDef("mock-1", "Mock", "/mock/")
				ep := map[string]any{}
				if source == "mock_response" {
					ep["mock_response"] = []any{map[string]any{"path": "/m", "method": "GET", "code": 200, "body": "ok", "headers": tc.headers}}
				} else {
					ep["white_list"] = []any{map[string]any{"path": "/m", "method_actions": map[string]any{
						"GET": map[string]any{"action": "reply", "code": 200, "data": "ok", "headers": tc.headers}}}}
				}
				def["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)["extended_paths"] = ep
				if tc.fail {
					expectFailure(t, def, "Mock", "twice")
					return
				}
				res, err := convertDef(t, def, Options{})
				if err != nil {
					t.Fatal(err)
				}
				got, _ := json.Marshal(lookupPath(decodeJSON(t, res.Base.JSON), "x-tyk-api-gateway", "middleware", "operations", "mGET", "mockResponse", "headers"))
				if string(got) != tc.want {
					t.Errorf("headers = %s, want %s", got, tc.want)
				}
			})
		}
	}
}
