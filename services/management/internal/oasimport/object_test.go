package oasimport

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// wholeEncode is what an import wrote when it decoded the whole document:
// every object's keys sorted, numbers as written, no HTML escaping.
func wholeEncode(t *testing.T, doc []byte) []byte {
	t.Helper()
	var b text
	if err := writeValue(&b, decodeValue(doc)); err != nil {
		t.Fatal(err)
	}
	return b.bytes()
}

// refDoc is a document of n paths whose operations reach their request
// bodies, responses and security schemes through references, with
// strings and numbers a re-encode could change.
func refDoc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{ "openapi" : "3.0.3", "info":{"title":"Refs <&>","version":"1","x-n":1.50e3},"security":[{"k":[]},{"j":[],"b":[]}],` +
		`"servers":[{"url":"https://{h}.example/v1","variables":{"h":{"default":"api"}}}],"paths":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d/{id}":{"parameters":[{"name":"id","in":"path","required":true}],"get":{"responses":{"200":{"$ref":"#/components/responses/R"}}},`+
			`"post":{"operationId":"op%d","requestBody":{"$ref":"#/components/requestBodies/B"},"responses":{"201":{"description":"x"}}}},`+
			`"/q%d/a\u00e9":{"put":{"requestBody":{"content":{"application/xml":{}}},"responses":{"200":{"description":"ok","content":{"text/plain":{"examples":{"e":{}}}}}}}}`, i, i, i)
	}
	b.WriteString(`},"components":{"responses":{"R":{"description":"r","content":{"application/json":{"example":9007199254740993}}}},` +
		`"requestBodies":{"B":{"content":{"application/json":{}}}},"securitySchemes":{"k":{"type":"apiKey","in":"header","name":"X-Key"},` +
		`"j":{"type":"http","scheme":"bearer","bearerFormat":"JWT"},"b":{"$ref":"#/components/securitySchemes/bb"},"bb":{"type":"http","scheme":"basic"}}},` +
		`"x-tyk-api-gateway":{"info":{"name":""},"middleware":{"operations":{"gone":{"allow":{"enabled":true}},"op0":{"block":{"enabled":true}}}}} }`)
	return []byte(b.String())
}

// TestPiecewiseAnswer: an import writes its answer member by member, path
// item by path item, and the bytes are those of a whole decode and encode
// (keys sorted at every level, numbers as written, no HTML escaping), with
// references followed as a whole document would resolve them.
func TestPiecewiseAnswer(t *testing.T) {
	on := true
	doc, err := Import(refDoc(30), Params{AllowList: &on, ValidateRequest: &on, MockResponse: &on, Authentication: &on})
	if err != nil {
		t.Fatal(err)
	}
	if whole := wholeEncode(t, doc); !bytes.Equal(doc, whole) {
		t.Fatalf("the answer is not in the whole encode's form:\n%s\n%s", doc, whole)
	}
	x := ext(t, doc)
	for path, want := range map[string]any{
		"middleware.operations.p7/{id}GET.validateRequest.enabled": true,  // the path item's parameters
		"middleware.operations.p7/{id}GET.mockResponse.enabled":    true,  // a referenced response with an example
		"middleware.operations.op7.validateRequest.enabled":        true,  // a referenced JSON request body
		"middleware.operations.op0.block.enabled":                  false, // allowList turns a block off
		"middleware.operations.q7/aéPUT.mockResponse.enabled":      true,  // examples
		"server.authentication.securitySchemes.bb":                 nil,   // reached through b
		"server.authentication.securitySchemes.b.header.name":      "Authorization",
		"server.authentication.baseIdentityProvider":               "auth_token",
	} {
		if got := get(x, strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if _, ok := x["middleware"].(map[string]any)["operations"].(map[string]any)["gone"]; ok {
		t.Error("an operation naming no operation of the document was kept")
	}
	if _, ok := get(x, "middleware", "operations", "q7/aéPUT").(map[string]any)["validateRequest"]; ok {
		t.Error("validateRequest set on an operation without parameters or a JSON body")
	}
}

// TestMembers: a document is split into its members' raw values as a
// decode reads them (the last of a repeated key), and anything but one
// JSON object is refused.
func TestMembers(t *testing.T) {
	m, err := members([]byte(" {\"a\" :\t[1, 2] ,\"b\":{\"c\":\"}\"},\"a\": \"last\" } \n"))
	if err != nil || string(m["a"]) != `"last"` || string(m["b"]) != `{"c":"}"}` || len(m) != 2 {
		t.Fatalf("members: %q %v", m, err)
	}
	for _, bad := range []string{`[]`, `null`, `{"a":1} {}`, `{"a":1`, `{"a":}`, `{"a":1}x`, ``} {
		if _, err := members([]byte(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
		if _, err := Import([]byte(bad), Params{}); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
			t.Errorf("import of %q: %v", bad, err)
		}
	}
}

// TestReferenceSpellings: references reaching objects whose pointers read
// alike once unescaped (components → requestBodies, and a member named
// "components/requestBodies") resolve each to its own object.
func TestReferenceSpellings(t *testing.T) {
	on := true
	doc := `{"servers":[{"url":"http://u.test/"}],"paths":{"/a":{"post":{"operationId":"a","requestBody":{"$ref":"#/components/requestBodies/B"},"responses":{}}},` +
		`"/b":{"post":{"operationId":"b","requestBody":{"$ref":"#/components~1requestBodies/B"},"responses":{}}}},` +
		`"components":{"requestBodies":{"B":{"content":{"application/json":{}}}}},"components/requestBodies":{"B":{"content":{"text/plain":{}}}}}`
	out, err := Import([]byte(doc), Params{ValidateRequest: &on})
	if err != nil {
		t.Fatal(err)
	}
	ops := get(ext(t, out), "middleware", "operations").(map[string]any)
	if _, ok := ops["a"]; !ok {
		t.Error("a: its JSON request body is not validated")
	}
	if _, ok := ops["b"]; ok {
		t.Error("b: a text/plain request body is validated (resolved to the other object)")
	}
}
