package oasimport

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func ext(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	return v["x-tyk-api-gateway"].(map[string]any)
}

func get(v map[string]any, path ...string) any {
	var cur any = v
	for _, p := range path {
		cur = cur.(map[string]any)[p]
	}
	return cur
}

// TestImport restates what Tyk's import (BuildDefaultTykExtension with
// isImport) generates for a plain document, and what it keeps of one that
// brings the extension.
func TestImport(t *testing.T) {
	plain := `{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{},` +
		`"servers":[{"url":"https://{region}.t.test:{port}/v1","variables":{"region":{"default":"eu"},"port":{"default":"8443"}}}]}`
	doc, err := Import([]byte(plain), Params{})
	if err != nil {
		t.Fatal(err)
	}
	x := ext(t, doc)
	for path, want := range map[string]any{
		"info.name": "T", "info.state.active": true, "info.state.internal": false,
		"server.listenPath.value": "/", "server.listenPath.strip": true,
		"upstream.url": "https://eu.t.test:8443/v1",
		"middleware.global.contextVariables.enabled": true,
		"middleware.global.trafficLogs.enabled":      true,
	} {
		if got := get(x, strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}

	brought := `{"openapi":"3.0.3","info":{"title":"T","version":"1"},"paths":{},"x-tyk-api-gateway":{` +
		`"info":{"id":"abc","name":"Mine","state":{"active":false}},"upstream":{"url":"http://mine.test"},` +
		`"server":{"listenPath":{"value":"/mine/"}},"middleware":{"global":{"trafficLogs":{"enabled":false}}}}}`
	doc, err = Import([]byte(brought), Params{ListenPath: "/over/", CustomDomain: "d.test"})
	if err != nil {
		t.Fatal(err)
	}
	x = ext(t, doc)
	for path, want := range map[string]any{
		"info.id": "abc", "info.name": "Mine", "info.state.active": true, "upstream.url": "http://mine.test",
		"server.listenPath.value": "/over/", "server.customDomain.name": "d.test", "server.customDomain.enabled": true,
		"middleware.global.trafficLogs.enabled": false,
	} {
		if got := get(x, strings.Split(path, ".")...); got != want {
			t.Errorf("brought: %s = %v, want %v", path, got, want)
		}
	}

	for name, c := range map[string]struct {
		doc string
		p   Params
	}{
		"no servers":           {`{"openapi":"3.0.3","info":{"title":"T"},"paths":{}}`, Params{}},
		"relative server":      {`{"openapi":"3.0.3","info":{"title":"T"},"paths":{},"servers":[{"url":"/v1"}]}`, Params{}},
		"relative parameter":   {plain, Params{UpstreamURL: "up.test"}},
		"extension not object": {`{"openapi":"3.0.3","x-tyk-api-gateway":[]}`, Params{}},
		"not an object":        {`[]`, Params{}},
	} {
		var bad *Error
		if _, err := Import([]byte(c.doc), c.p); !errors.As(err, &bad) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
}

// TestPatch: the stored extension is kept unless the new document brings one.
func TestPatch(t *testing.T) {
	old := `{"openapi":"3.0.3","info":{"title":"Old"},"paths":{},"x-tyk-api-gateway":{"info":{"id":"k","name":"Kept","state":{"active":false}},` +
		`"upstream":{"url":"http://kept.test"},"server":{"listenPath":{"value":"/kept/"}}}}`
	doc, err := Patch([]byte(old), []byte(`{"openapi":"3.0.3","info":{"title":"New"},"paths":{"/a":{}}}`), Params{UpstreamURL: "http://new.test"})
	if err != nil {
		t.Fatal(err)
	}
	x := ext(t, doc)
	if get(x, "info", "id") != "k" || get(x, "info", "name") != "Kept" || get(x, "info", "state", "active") != false ||
		get(x, "server", "listenPath", "value") != "/kept/" || get(x, "upstream", "url") != "http://new.test" {
		t.Errorf("patched extension: %v", x)
	}
	var v map[string]any
	json.Unmarshal(doc, &v)
	if get(v, "info", "title") != "New" || get(v, "paths", "/a") == nil {
		t.Errorf("the OpenAPI part is the new one: %s", doc)
	}
	doc, _ = Patch([]byte(old), []byte(`{"openapi":"3.0.3","info":{"title":"New"},"paths":{},"x-tyk-api-gateway":{"info":{"id":"k","name":"Brought"},"upstream":{"url":"http://b.test"}}}`), Params{})
	if x := ext(t, doc); get(x, "info", "name") != "Brought" {
		t.Errorf("a brought extension replaces the stored one: %v", x)
	}
}
