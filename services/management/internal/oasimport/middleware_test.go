package oasimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// petstore has an operation with parameters, one with a JSON request body
// (through a reference), one with a response example, one with none of
// these and no operationId, and a path item with parameters.
const petstore = `{"openapi":"3.0.3","info":{"title":"P","version":"1"},"servers":[{"url":"https://p.test"}],
"security":[{"key":[]},{"jwt":[],"basic":[]},{"bearer":[]}],
"components":{"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Key"},
 "jwt":{"type":"http","scheme":"bearer","bearerFormat":"JWT"},"basic":{"type":"http","scheme":"basic"},
 "bearer":{"type":"http","scheme":"bearer"},"oauth":{"type":"oauth2","flows":{}}},
 "requestBodies":{"Pet":{"content":{"application/json":{"schema":{"type":"object"}}}}}},
"paths":{
 "/pets":{"get":{"operationId":"list","parameters":[{"name":"q","in":"query","schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}},
          "post":{"operationId":"add","requestBody":{"$ref":"#/components/requestBodies/Pet"},"responses":{"201":{"description":"ok"}}}},
 "/pets/{id}":{"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],
          "get":{"operationId":"show","responses":{"200":{"description":"ok","content":{"application/json":{"example":{"id":1}}}}}}},
 "/health":{"get":{"responses":{"200":{"description":"ok"}}}}}}`

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func operations(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	ops, _ := get(ext(t, doc), "middleware", "operations").(map[string]any)
	return ops
}

func asJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestImportMiddleware restates what Tyk's ImportMiddlewares makes of each
// query parameter over petstore (apidef/oas default.go, operation.go).
func TestImportMiddleware(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Params
		want map[string]string // operationId → its x-tyk-api-gateway operation
	}{
		{"no parameter", Params{}, map[string]string{}},
		{"allowList", Params{AllowList: yes()}, map[string]string{
			"list": `{"allow":{"enabled":true}}`, "add": `{"allow":{"enabled":true}}`,
			"show": `{"allow":{"enabled":true}}`, "healthGET": `{"allow":{"enabled":true}}`}},
		{"allowList=false still writes allow", Params{AllowList: no()}, map[string]string{
			"list": `{"allow":{"enabled":false}}`, "add": `{"allow":{"enabled":false}}`,
			"show": `{"allow":{"enabled":false}}`, "healthGET": `{"allow":{"enabled":false}}`}},
		// parameters (list), a JSON body through a reference (add), path item parameters (show)
		{"validateRequest", Params{ValidateRequest: yes()}, map[string]string{
			"list": `{"validateRequest":{"enabled":true,"errorResponseCode":422}}`,
			"add":  `{"validateRequest":{"enabled":true,"errorResponseCode":422}}`,
			"show": `{"validateRequest":{"enabled":true,"errorResponseCode":422}}`}},
		{"mockResponse", Params{MockResponse: yes()}, map[string]string{
			"show": `{"mockResponse":{"enabled":true,"fromOASExamples":{"enabled":true}}}`}},
	} {
		doc, err := Import([]byte(petstore), c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := map[string]string{}
		for id, op := range operations(t, doc) {
			got[id] = asJSON(op)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: operations %v, want %v", c.name, got, c.want)
		}
		if !strings.Contains(string(doc), `"operationId":"healthGET"`) {
			t.Errorf("%s: an operation without operationId is given Tyk's (path without its slash, then the method): %s", c.name, doc)
		}
	}
}

// TestImportMiddlewareKeeps: a brought operation keeps what it has, an
// enabled block is turned off by allowList=true, and operations naming no
// operation of the document, or left empty, are dropped.
func TestImportMiddlewareKeeps(t *testing.T) {
	doc := strings.Replace(petstore, `"paths":{`, `"x-tyk-api-gateway":{"info":{"name":"P"},"upstream":{"url":"http://u.test"},"server":{"listenPath":{"value":"/p/"}},`+
		`"middleware":{"operations":{"list":{"block":{"enabled":true},"rateLimit":{"enabled":true,"rate":1,"per":"1s"}},`+
		`"show":{"mockResponse":{"enabled":false,"code":418}},"gone":{"allow":{"enabled":true}},"healthGET":{}}}},"paths":{`, 1)
	out, err := Import([]byte(doc), Params{AllowList: yes(), MockResponse: yes()})
	if err != nil {
		t.Fatal(err)
	}
	ops := operations(t, out)
	if got := asJSON(ops["list"]); got != `{"allow":{"enabled":true},"block":{"enabled":false},"rateLimit":{"enabled":true,"per":"1s","rate":1}}` {
		t.Errorf("list: %s", got)
	}
	if got := asJSON(ops["show"]); got != `{"allow":{"enabled":true},"mockResponse":{"code":418,"enabled":true,"fromOASExamples":{"enabled":true}}}` {
		t.Errorf("show: %s", got)
	}
	if _, ok := ops["gone"]; ok {
		t.Errorf("an operation the document does not have is dropped: %v", ops)
	}
	out, _ = Import([]byte(doc), Params{})
	ops = operations(t, out)
	if _, ok := ops["healthGET"]; ok || len(ops) != 2 {
		t.Errorf("an empty operation is dropped: %v", ops)
	}
}

// TestImportAuthentication restates Tyk's importAuthentication: each
// scheme the security requirements name, by kind; bearer without JWT and
// schemes no requirement names are left out; baseIdentityProvider with two
// schemes or more.
func TestImportAuthentication(t *testing.T) {
	doc, err := Import([]byte(petstore), Params{Authentication: yes()})
	if err != nil {
		t.Fatal(err)
	}
	auth := get(ext(t, doc), "server", "authentication")
	want := `{"baseIdentityProvider":"auth_token","enabled":true,"securitySchemes":{` +
		`"basic":{"enabled":true,"header":{"enabled":true,"name":"Authorization"}},` +
		`"jwt":{"enabled":true,"header":{"enabled":true,"name":"Authorization"}},` +
		`"key":{"enabled":true}}}`
	if got := asJSON(auth); got != want {
		t.Errorf("authentication:\n%s\nwant\n%s", got, want)
	}

	one := strings.Replace(petstore, `"security":[{"key":[]},{"jwt":[],"basic":[]},{"bearer":[]}]`, `"security":[{"oauth":[]}]`, 1)
	doc, _ = Import([]byte(one), Params{Authentication: no()})
	if got := asJSON(get(ext(t, doc), "server", "authentication")); got != `{"enabled":false,"securitySchemes":{"oauth":{"enabled":false,"header":{"enabled":true,"name":"Authorization"}}}}` {
		t.Errorf("one scheme, disabled: %s", got)
	}
	two := strings.Replace(petstore, `"security":[{"key":[]},{"jwt":[],"basic":[]},{"bearer":[]}]`, `"security":[{"oauth":[],"jwt":[]}]`, 1)
	doc, _ = Import([]byte(two), Params{Authentication: yes()})
	if got := get(ext(t, doc), "server", "authentication", "baseIdentityProvider"); got != "jwt_claim" {
		t.Errorf("jwt and oauth: baseIdentityProvider %v, want jwt_claim", got)
	}

	bearer := strings.Replace(petstore, `"security":[{"key":[]},{"jwt":[],"basic":[]},{"bearer":[]}]`, `"security":[{"bearer":[]}]`, 1)
	doc, _ = Import([]byte(bearer), Params{Authentication: yes()})
	if got := asJSON(get(ext(t, doc), "server", "authentication")); got != `{"enabled":true}` {
		t.Errorf("only a scheme Tyk does not import (bearer without JWT): %s", got)
	}

	none := strings.Replace(petstore, `"security":[{"key":[]},{"jwt":[],"basic":[]},{"bearer":[]}],`, "", 1)
	var bad *Error
	if _, err := Import([]byte(none), Params{Authentication: yes()}); !errors.As(err, &bad) || !strings.Contains(bad.Msg, "‘security’ object is empty") {
		t.Errorf("no security: %v, want Tyk's refusal", err)
	}
	if _, err := Import([]byte(none), Params{}); err != nil {
		t.Errorf("no security without the parameter: %v", err)
	}
}

// TestExistingOperations: a stored extension's operations looked up in
// their text are those a decode of the object holds: the last of a key
// twice, none for a name not there, keys with escapes read decoded.
func TestExistingOperations(t *testing.T) {
	for _, raw := range []string{
		`{"b":{"n":1},"a":{"n":2},"b":{"n":3},"c":{"n":4}}`,
		`{"b":{"n":1},"a":{"n":2},"\u0062":{"n":3},"c":{"n":4}}`,
		`{"a":{"n":2},"b":{"n":3},"c":{"n":4},"b\u00e9":{"n":5}}`,
	} {
		var whole map[string]map[string]any
		if err := json.Unmarshal([]byte(raw), &whole); err != nil {
			t.Fatal(err)
		}
		lookup := existingOperations(json.RawMessage(raw))
		for _, id := range []string{"a", "b", "c", "d", "bé", ""} {
			got, want := lookup(id), whole[id]
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %q is %v, want %v", raw, id, got, want)
			}
		}
	}
}
