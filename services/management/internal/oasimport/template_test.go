package oasimport

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestImportTemplate: the imported document is laid over the template's
// data (the Dashboard's sample template: global cache, an /anything
// operation with a size limit); the document's values win, the template's
// API id is not taken, and the import defaults apply after.
func TestImportTemplate(t *testing.T) {
	template := `{"info":{"title":"","version":""},"openapi":"3.0.3",` +
		`"paths":{"/anything":{"post":{"operationId":"anythingpost","responses":{"200":{"description":"Post created"}}}}},` +
		`"x-tyk-api-gateway":{"info":{"id":"template-api","name":"From template","state":{"active":false}},` +
		`"server":{"listenPath":{"value":"/template/"}},` +
		`"middleware":{"global":{"cache":{"cacheAllSafeRequests":true,"enabled":true,"timeout":5}},` +
		`"operations":{"anythingpost":{"requestSizeLimit":{"enabled":true,"value":100}},"elsewhere":{"allow":{"enabled":true}}}}}}`
	doc := `{"openapi":"3.0.3","info":{"title":"Mine","version":"2"},"servers":[{"url":"https://mine.test"}],` +
		`"paths":{"/pets":{"get":{"operationId":"list","responses":{"200":{"description":"ok"}}}}}}`
	out, err := Import([]byte(doc), Params{Template: []byte(template), ListenPath: "/mine/"})
	if err != nil {
		t.Fatal(err)
	}
	x := ext(t, out)
	for path, want := range map[string]any{
		"info.name": "From template", "info.state.active": true, "server.listenPath.value": "/mine/",
		"upstream.url": "https://mine.test", "middleware.global.cache.timeout": json.Number("5"),
		"middleware.global.trafficLogs.enabled":                     true,
		"middleware.operations.anythingpost.requestSizeLimit.value": json.Number("100"),
	} {
		if got := getNum(out, path); got != want {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
	if get(x, "info", "id") != nil {
		t.Errorf("the template's API id is not taken: %v", get(x, "info"))
	}
	if _, ok := get(x, "middleware", "operations").(map[string]any)["elsewhere"]; ok {
		t.Errorf("a template operation naming no operation of the result is dropped")
	}
	var v map[string]any
	json.Unmarshal(out, &v)
	if get(v, "info", "title") != "Mine" || get(v, "paths", "/pets") == nil || get(v, "paths", "/anything") == nil {
		t.Errorf("the document over the template's OpenAPI part: %s", out)
	}

	if _, err := Import([]byte(doc), Params{Template: []byte(`[1]`)}); err == nil {
		t.Errorf("a template whose data is not an object is refused")
	}
}

// getNum reads the dotted path of the document's extension, numbers as
// json.Number.
func getNum(doc []byte, path string) any {
	v, _ := decodeObject(doc)
	cur := any(v[extension])
	for _, p := range strings.Split(path, ".") {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	return cur
}
