package oasdoc

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// The fast decoder must build what kin-openapi's own decoding builds, so
// that Validate accepts and refuses exactly what it did with kin-openapi
// alone, with the same messages. These tests hold the two side by side.

// kinValidate is Validate with kin-openapi's own decoding and T.Validate:
// the reference.
func kinValidate(ctx context.Context, doc []byte) error {
	root, err := rawjson.Members(doc)
	if err != nil {
		return invalid("the document is not a JSON object")
	}
	if err := checkTyk(doc, root); err != nil {
		return err
	}
	d, err := kinDecode(doc)
	if err != nil {
		return invalid("invalid OpenAPI document: %s", err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = ctx
	if err := loader.ResolveRefsIn(d, nil); err != nil {
		return invalid("invalid OpenAPI document: %s", err)
	}
	if err := d.Validate(ctx, openapi3.DisableExamplesValidation()); err != nil {
		return invalid("invalid OpenAPI document: %s", err)
	}
	return nil
}

// kinDecode decodes doc with kin-openapi's T.UnmarshalJSON, less the root
// x-tyk-api-gateway that decodeOpenAPI leaves out.
func kinDecode(doc []byte) (*openapi3.T, error) {
	d := &openapi3.T{}
	if err := d.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	delete(d.Extensions, Extension)
	if len(d.Extensions) == 0 {
		d.Extensions = nil
	}
	return d, nil
}

// sameAsKin fails when Validate's verdict or message on doc differs from
// kin-openapi's, or when the fast decoder accepts doc and builds anything
// else than kin-openapi does. It reports whether the fast decoder took doc
// and whether the document is refused.
func sameAsKin(t *testing.T, doc []byte) (fast, refused bool) {
	t.Helper()
	ctx := context.Background()
	got, want := Validate(ctx, doc), kinValidate(ctx, doc)
	if errText(got) != errText(want) || errors.Is(got, ErrNoExtension) != errors.Is(want, ErrNoExtension) {
		t.Errorf("Validate = %v\nkin-openapi alone: %v\ndocument: %s", got, want, doc)
	}
	root, err := rawjson.Members(doc)
	if err != nil {
		return false, want != nil
	}
	for _, limit := range []int{1, minBatch} { // each path a batch of its own; the smallest batches taken
		// (the OpenAPI rules only: the extension is checked before them)
		if checkTyk(doc, root) != nil {
			break
		}
		valid, problem := validInBatchesOf(ctx, doc, root, limit)
		if valid && want != nil {
			t.Errorf("checked in batches of %d bytes, a document kin-openapi refuses (%v) is valid: %s", limit, want, doc)
		}
		if problem != nil && want == nil {
			t.Errorf("checked in batches of %d bytes, a document kin-openapi accepts has a problem (%v): %s", limit, problem, doc)
		}
	}
	d, err := decodeFast(doc, root)
	if err != nil {
		return false, want != nil
	}
	ref, err := kinDecode(doc)
	if err != nil {
		t.Errorf("the fast decoder accepts what kin-openapi refuses (%v): %s", err, doc)
		return true, want != nil
	}
	if !reflect.DeepEqual(d, ref) {
		t.Errorf("the fast decoder builds another document than kin-openapi:\n got %#v\nwant %#v\ndocument: %s", d, ref, doc)
	}
	return true, want != nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// diffBase uses every part the fast decoder reads, extensions at every
// level, references of each kind and fields it hands to kin-openapi.
const diffBase = `{"openapi":"3.0.3","info":{"title":"t","version":"1","x-i":1},"servers":[{"url":"http://s/"}],"x-root":{"a":[1,2.5,"s",null,true,9007199254740993,1.50]},
"components":{"schemas":{"Pet":{"type":"object","required":["id"],"properties":{"id":{"type":"integer","format":"int64"},"tag":{"type":"string","nullable":true}}}},
 "parameters":{"Limit":{"name":"limit","in":"query","schema":{"type":"integer","minimum":1,"maximum":100}}},
 "responses":{"NotFound":{"description":"nf"}},
 "requestBodies":{"PetBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Pet"}}}}},
 "headers":{"Rate":{"schema":{"type":"integer"}}},
 "examples":{"One":{"value":{"id":1}}},
 "securitySchemes":{"key":{"type":"apiKey","name":"k","in":"header"}}},
"paths":{"x-paths":{"n":1},
 "/pets":{"summary":"s","description":"d","x-item":"i","parameters":[{"$ref":"#/components/parameters/Limit"}],
  "get":{"tags":["a","b"],"summary":"list","description":"ld","operationId":"list","deprecated":false,"x-op":[1],
   "parameters":[{"name":"q","in":"query","description":"qd","style":"form","explode":true,"allowEmptyValue":true,"allowReserved":false,"deprecated":true,"required":false,"example":"e","x-p":null,
    "schema":{"type":"string","minLength":1,"maxLength":10,"pattern":"^[a-z]+$","enum":["a","b"],"default":"a","title":"Q","description":"q"}}],
   "externalDocs":{"url":"http://docs/"},
   "responses":{"x-rs":true,"200":{"description":"ok","x-r":{},
     "headers":{"X-Rate":{"$ref":"#/components/headers/Rate"},"X-Other":{"description":"o","schema":{"type":"string"},"x-h":1}},
     "links":{"self":{"operationId":"list"}},
     "content":{"application/json":{"x-m":2,"examples":{"one":{"$ref":"#/components/examples/One"}},
      "schema":{"type":"array","example":[{"id":1}],"minItems":0,"maxItems":5,"uniqueItems":true,"items":{"$ref":"#/components/schemas/Pet"}}}}},
    "404":{"$ref":"#/components/responses/NotFound"},"default":{"description":"d"}}},
  "post":{"operationId":"create","requestBody":{"$ref":"#/components/requestBodies/PetBody"},"responses":{"201":{"description":"c"}}},
  "put":{"requestBody":{"description":"b","required":true,"x-b":1,"content":{"multipart/form-data":{"encoding":{"f":{"contentType":"text/plain"}},"schema":{"type":"object","properties":{"f":{"type":"string","format":"binary"}}}},
   "application/json":{"schema":{"allOf":[{"$ref":"#/components/schemas/Pet"},{"type":"object","properties":{"n":{"type":"number","multipleOf":0.5,"exclusiveMinimum":true,"minimum":0,"readOnly":true,"x-s":"s"}},"additionalProperties":false,"x-s":"s"}]}}}},
   "responses":{"204":{"description":"none"}}}},
 "/pets/{id}":{"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer"}}],
  "delete":{"responses":{"204":{"description":"gone"}}},
  "patch":{"requestBody":{"content":{"application/merge-patch+json":{"schema":{"oneOf":[{"type":"string","xml":{"name":"x"}},{"type":"object","writeOnly":true,"minProperties":1,"maxProperties":3,"additionalProperties":{"type":"string"},"externalDocs":{"url":"http://d/"}}],"not":{"type":"integer"}}}}},
   "responses":{"200":{"description":"p","content":{"text/plain":{"schema":{"anyOf":[{"type":"string","deprecated":true},{"type":"integer","exclusiveMaximum":false,"maximum":9}]}}}}}}},
 "/s\u00e9/{x}":{"\u0067et":{"summary":"\u00e9\n\"q\"","parameters":[{"name":"x","in":"path","required":true,"content":{"text/plain":{"schema":{"type":"string"}}}}],"responses":{"200":{"description":"ok"}}}}},
"x-tyk-api-gateway":{"info":{"name":"n","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/p/"}}}}`

// diffCases are changes to diffBase, each named by what it breaks (or
// exercises), with kin-openapi's verdict.
var diffCases = []struct {
	name, from, to string
	refused        bool
}{
	{"the base document", "", "", false},
	{"info of the wrong type", `"info":{"title":"t","version":"1","x-i":1}`, `"info":"i"`, true},
	{"info without title", `"title":"t",`, ``, true},
	{"a server without url", `"servers":[{"url":"http://s/"}]`, `"servers":[{}]`, true},
	{"a tag without name", `"servers":[`, `"tags":[{}],"servers":[`, false},
	{"a component schema of no type", `"type":"object","required":["id"]`, `"type":"wrong","required":["id"]`, true},
	{"components of the wrong type", `"components":{"schemas"`, `"components":[],"x-c":{"schemas"`, true},
	{"null components", `"components":{"schemas"`, `"components":null,"x-c":{"schemas"`, true},
	{"a null component schema", `"schemas":{"Pet":`, `"schemas":{"Null":null,"Pet":`, true},
	{"component schemas of the wrong type", `"schemas":{"Pet":`, `"schemas":[],"x-s":{"Pet":`, true},
	{"an unknown components key", `"securitySchemes":`, `"other":{},"securitySchemes":`, true},
	{"a components extension", `"securitySchemes":`, `"x-c":{"a":[1.50]},"securitySchemes":`, false},
	{"a component minLength written 1.0", `"tag":{"type":"string","nullable":true}`, `"tag":{"type":"string","nullable":true,"minLength":1.0}`, true},
	{"a component parameter of the wrong type", `"parameters":{"Limit":`, `"parameters":{"Other":5,"Limit":`, true},
	{"a null component response", `"responses":{"NotFound":`, `"responses":{"Null":null,"NotFound":`, true},
	{"a component request body without content", `"requestBodies":{"PetBody":`, `"requestBodies":{"Other":{},"PetBody":`, true},
	{"a component header $ref", `"headers":{"Rate":`, `"headers":{"Other":{"$ref":"#/components/headers/Rate"},"Rate":`, false},
	{"servers of the wrong type", `"servers":[{"url":"http://s/"}]`, `"servers":{}`, true},
	{"a root key with another case", `"servers":[`, `"Paths":{},"servers":[`, true},
	{"an unknown root key", `"servers":[`, `"other":1,"servers":[`, true},
	{"paths of the wrong type", `"paths":{"x-paths":{"n":1},`, `"paths":[],"x-p":{`, true},
	{"paths with extensions only", `"paths":{"x-paths":{"n":1},`, `"paths":{"x-paths":{"n":1}},"x-p":{`, false},
	{"a path item of the wrong type", `"/pets/{id}":{`, `"/z":5,"/pets/{id}":{`, true},
	{"a null path item", `"/pets/{id}":{`, `"/z":null,"/pets/{id}":{`, false},
	{"a path without /", `"/pets":{`, `"pets":{`, true},
	{"a path summary of the wrong type", `"summary":"s"`, `"summary":1`, true},
	{"a path item $ref", `"summary":"s"`, `"$ref":"#/paths/~1pets~1{id}","summary":"s"`, false},
	{"an unknown path item key", `"x-item":"i"`, `"item":"i"`, true},
	{"a path item key with another case", `"description":"d","x-item"`, `"Description":"d","x-item"`, true},
	{"an operation of the wrong type", `"get":{"tags"`, `"get":[],"head":{"tags"`, true},
	{"a null operation", `"delete":{"responses":{"204":{"description":"gone"}}}`, `"delete":null`, false},
	{"tags of the wrong type", `"tags":["a","b"]`, `"tags":"a"`, true},
	{"a null tag", `"tags":["a","b"]`, `"tags":["a",null]`, false},
	{"an operationId of the wrong type", `"operationId":"create"`, `"operationId":7`, true},
	{"a duplicate operationId", `"operationId":"create"`, `"operationId":"list"`, true},
	{"deprecated of the wrong type", `"deprecated":false`, `"deprecated":"no"`, true},
	{"an unknown operation key", `"x-op":[1]`, `"op":[1]`, true},
	{"an operation key with another case", `"operationId":"create"`, `"operationID":"create"`, true},
	{"parameters of the wrong type", `"parameters":[{"$ref":"#/components/parameters/Limit"}]`, `"parameters":{}`, true},
	{"a null parameter", `"parameters":[{"$ref":"#/components/parameters/Limit"}]`, `"parameters":[null]`, true},
	{"a parameter in nowhere", `"in":"query","description":"qd"`, `"in":"nowhere","description":"qd"`, true},
	{"a parameter without name", `"name":"q",`, ``, true},
	{"a parameter twice", `"delete":{"responses"`, `"delete":{"parameters":[{"name":"a","in":"query"},{"name":"a","in":"query"}],"responses"`, true},
	{"a parameter in the path not required", `"required":true,"schema":{"type":"integer"}`, `"required":false,"schema":{"type":"integer"}`, true},
	{"a path parameter missing", `"name":"id","in":"path"`, `"name":"other","in":"path"`, true},
	{"explode of the wrong type", `"explode":true`, `"explode":"yes"`, true},
	{"a null explode", `"explode":true`, `"explode":null`, false},
	{"a null example", `"example":"e"`, `"example":null`, false},
	{"a parameter with schema and content", `"required":true,"content":{`, `"required":true,"schema":{},"content":{`, true},
	{"a parameter $ref to nothing", `"#/components/parameters/Limit"`, `"#/components/parameters/Nope"`, true},
	{"a parameter $ref with a sibling", `{"$ref":"#/components/parameters/Limit"}`, `{"$ref":"#/components/parameters/Limit","description":"d"}`, false},
	{"a parameter $ref with an extension", `{"$ref":"#/components/parameters/Limit"}`, `{"$ref":"#/components/parameters/Limit","x-e":1}`, false},
	{"a parameter $ref not first", `{"$ref":"#/components/parameters/Limit"}`, `{"x-e":1,"$ref":"#/components/parameters/Limit"}`, false},
	{"an empty $ref", `{"$ref":"#/components/parameters/Limit"}`, `{"$ref":""}`, true},
	{"a $ref of the wrong type", `{"$ref":"#/components/parameters/Limit"}`, `{"$ref":5}`, true},
	{"an external $ref", `"#/components/schemas/Pet"},{"type"`, `"other.json#/Pet"},{"type"`, true},
	{"a schema $ref with a sibling", `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"#/components/schemas/Pet","description":"d"}`, false},
	{"responses of the wrong type", `"responses":{"201":{"description":"c"}}`, `"responses":"none"`, true},
	{"null responses", `"responses":{"201":{"description":"c"}}`, `"responses":null`, true},
	{"no responses", `"responses":{"201":{"description":"c"}}`, `"responses":{}`, true},
	{"a response code that is no code", `"201":{"description":"c"}`, `"abc":{"description":"c"}`, false},
	{"a response code range", `"201":{"description":"c"}`, `"2XX":{"description":"c"}`, false},
	{"a null response", `"201":{"description":"c"}`, `"201":null`, true},
	{"a response without description", `"default":{"description":"d"}`, `"default":{}`, true},
	{"a response description of the wrong type", `"default":{"description":"d"}`, `"default":{"description":1}`, true},
	{"a null response description", `"default":{"description":"d"}`, `"default":{"description":null}`, true},
	{"an unknown response key", `"x-r":{}`, `"r":{}`, true},
	{"headers of the wrong type", `"headers":{"X-Rate"`, `"headers":[],"x-hh":{"X-Rate"`, true},
	{"a header with in", `"description":"o","schema"`, `"description":"o","in":"query","schema"`, true},
	{"a null header", `"X-Other":{`, `"X-Null":null,"X-Other":{`, true},
	{"links of the wrong type", `"links":{"self":{"operationId":"list"}}`, `"links":[]`, true},
	{"content of the wrong type", `"content":{"text/plain":{`, `"content":"x","x-c":{"text/plain":{`, true},
	{"a null media type", `"content":{"text/plain":{`, `"content":{"a/b":null,"text/plain":{`, false},
	{"an unknown media type key", `"x-m":2`, `"m":2`, true},
	{"a schema type unknown", `"type":"string","minLength":1`, `"type":"wrong","minLength":1`, true},
	{"a schema type of the wrong kind", `"type":"string","minLength":1`, `"type":5,"minLength":1`, true},
	{"a schema type list", `"type":"string","minLength":1`, `"type":["string"],"minLength":1`, false},
	{"a null schema type", `"type":"string","minLength":1`, `"type":null,"minLength":1`, false},
	{"a negative minLength", `"minLength":1`, `"minLength":-1`, true},
	{"minLength written 1.0", `"minLength":1`, `"minLength":1.0`, false},
	{"minLength written 1e0", `"minLength":1`, `"minLength":1e0`, false},
	{"minLength 2^53+1", `"minLength":1`, `"minLength":9007199254740993`, true},
	{"minLength a string", `"minLength":1`, `"minLength":"1"`, true},
	{"a null maxLength", `"maxLength":10`, `"maxLength":null`, false},
	{"maxLength above minLength", `"maxLength":10`, `"maxLength":0`, true},
	{"maximum out of range", `"maximum":9}`, `"maximum":1e400}`, true},
	{"maximum written 9.0e0", `"maximum":9}`, `"maximum":9.0e0}`, false},
	{"an invalid pattern", `"pattern":"^[a-z]+$"`, `"pattern":"["`, true},
	{"an unknown format", `"format":"int64"`, `"format":"int65"`, false},
	{"required of the wrong type", `"required":["id"]`, `"required":"id"`, true},
	{"properties of the wrong type", `"properties":{"f":{`, `"properties":[],"x-pp":{"f":{`, true},
	{"a null property", `"properties":{"f":{`, `"properties":{"z":null,"f":{`, true},
	{"a boolean property", `"properties":{"f":{`, `"properties":{"z":true,"f":{`, true},
	{"an array without items", `"minItems":0,"maxItems":5,"uniqueItems":true,"items":{"$ref":"#/components/schemas/Pet"}`, `"minItems":0`, true},
	{"additionalProperties of the wrong type", `"additionalProperties":false`, `"additionalProperties":"no"`, true},
	{"additionalProperties empty", `"additionalProperties":false`, `"additionalProperties":{}`, false},
	{"allOf of the wrong type", `"allOf":[`, `"allOf":{},"x-a":[`, true},
	{"a null allOf member", `"allOf":[`, `"allOf":[null,`, true},
	{"exclusiveMinimum a number", `"exclusiveMinimum":true`, `"exclusiveMinimum":1`, true},
	{"exclusiveMinimum a string", `"exclusiveMinimum":true`, `"exclusiveMinimum":"1"`, true},
	{"an unknown schema keyword", `"title":"Q"`, `"foo":"Q"`, true},
	{"a schema keyword with another case", `"title":"Q"`, `"Title":"Q"`, true},
	{"a 3.1 keyword", `"title":"Q"`, `"const":"Q"`, true},
	{"a discriminator of the wrong type", `"not":{"type":"integer"}`, `"not":{"type":"integer"},"discriminator":5`, true},
	{"enum of the wrong type", `"enum":["a","b"]`, `"enum":"a"`, true},
	{"an empty enum", `"enum":["a","b"]`, `"enum":[]`, false},
	{"a default outside the enum", `"default":"a"`, `"default":"c"`, true},
	{"a default of the wrong type", `"default":"a"`, `"default":1`, true},
	{"a nullable of the wrong type", `"nullable":true`, `"nullable":1`, true},
	{"a requestBody of the wrong type", `"requestBody":{"description":"b"`, `"requestBody":5,"x-rb":{"description":"b"`, true},
	{"a null requestBody", `"requestBody":{"$ref":"#/components/requestBodies/PetBody"}`, `"requestBody":null`, false},
	{"a requestBody without content", `"requestBody":{"content":{"application/merge-patch+json":`, `"requestBody":{"x-c":{"application/merge-patch+json":`, true},
	{"a requestBody $ref to nothing", `"#/components/requestBodies/PetBody"`, `"#/components/requestBodies/Nope"`, true},
	{"a response $ref to nothing", `"#/components/responses/NotFound"`, `"#/components/responses/Nope"`, true},
	{"a header $ref to nothing", `"#/components/headers/Rate"`, `"#/components/headers/Nope"`, true},
	{"operation security", `"externalDocs":{"url":"http://docs/"}`, `"security":[{"key":[]}],"externalDocs":{"url":"http://docs/"}`, false},
	{"operation security naming no scheme", `"externalDocs":{"url":"http://docs/"}`, `"security":[{"nokey":[]}],"externalDocs":{"url":"http://docs/"}`, true},
	{"operation security of the wrong type", `"externalDocs":{"url":"http://docs/"}`, `"security":{},"externalDocs":{"url":"http://docs/"}`, true},
	{"root security", `"servers":[`, `"security":[{"key":[]}],"servers":[`, false},
	{"root security naming no scheme", `"servers":[`, `"security":[{"nokey":[]}],"servers":[`, true},
	{"an operation callback", `"operationId":"create",`, `"operationId":"create","callbacks":{"done":{"{$request.body#/url}":{"post":{"responses":{"200":{"description":"cb"}}}}}},`, false},
	{"an operation callback naming no scheme", `"operationId":"create",`, `"operationId":"create","callbacks":{"done":{"{$request.body#/url}":{"post":{"security":[{"nokey":[]}],"responses":{"200":{"description":"cb"}}}}}},`, true},
	{"callbacks of the wrong type", `"operationId":"create",`, `"operationId":"create","callbacks":[],`, true},
	{"encoding of the wrong type", `"encoding":{"f":{"contentType":"text/plain"}}`, `"encoding":[]`, true},
	{"examples of the wrong type", `"examples":{"one":{"$ref":"#/components/examples/One"}}`, `"examples":[]`, true},
	{"externalDocs without url", `"externalDocs":{"url":"http://docs/"}`, `"externalDocs":{}`, true},
	{"an xml of the wrong type", `"xml":{"name":"x"}`, `"xml":"x"`, true},
	{"a key escaped", `"operationId":"list"`, `"operation\u0049d":"list"`, false},
	{"a string with invalid escapes kept", `"summary":"list"`, `"summary":"\ud800"`, false},
	{"extensions holding numbers", `"x-op":[1]`, `"x-op":[1.50,9007199254740993,-0,1e-7,{"a":[]}]`, false},
	{"an extension twice in content", `"x-m":2`, `"x-m":2,"x-n":{"x-m":2}`, false},
	{"an integer where a string is", `"description":"qd"`, `"description":5`, true},
	{"a boolean where an object is", `"delete":{"responses"`, `"delete":true,"x-d":{"responses"`, true},
}

// pathError breaks the paths, for diffPairs.
var pathError = [2]string{`"in":"query","description":"qd"`, `"in":"nowhere","description":"qd"`}

// diffPairs break the paths and another section, or another part of the
// document: the message names the one kin-openapi checks first.
var diffPairs = []struct {
	name     string
	from, to string
}{
	{"info", `"title":"t",`, ``},
	{"components", `"type":"object","required":["id"]`, `"type":"wrong","required":["id"]`},
	{"components with a callback", `"headers":{"Rate"`, `"callbacks":{"c":{}},"headers":{"Rate"`},
	{"an operation callback", `"operationId":"create",`, `"operationId":"create","callbacks":{"done":{"{$request.body#/url}":{"post":{"responses":{"200":{"description":"cb"}}}}}},`},
	{"servers", `"servers":[{"url":"http://s/"}]`, `"servers":[{}]`},
	{"tags", `"servers":[`, `"tags":[{}],"servers":[`},
	{"externalDocs", `"servers":[`, `"externalDocs":{},"servers":[`},
	{"root security", `"servers":[`, `"security":[{"nokey":[]}],"servers":[`},
	{"operation security", `"externalDocs":{"url":"http://docs/"}`, `"security":[{"key":[]}],"externalDocs":{"url":"http://docs/"}`},
	{"operation security naming no scheme", `"externalDocs":{"url":"http://docs/"}`, `"security":[{"nokey":[]}],"externalDocs":{"url":"http://docs/"}`},
	{"an unknown root key", `"servers":[`, `"other":1,"servers":[`},
	{"webhooks", `"servers":[`, `"webhooks":{},"servers":[`},
	{"jsonSchemaDialect", `"servers":[`, `"jsonSchemaDialect":"x","servers":[`},
	{"a version kin-openapi does not know", `"openapi":"3.0.3"`, `"openapi":"3.0.9"`},
}

func TestValidateOrdersSectionsAsKinOpenAPI(t *testing.T) {
	for _, c := range diffPairs {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(diffBase, pathError[0], pathError[1], 1)
			if !strings.Contains(doc, c.from) {
				t.Fatalf("%q is not in the base document", c.from)
			}
			p, err := Parse([]byte(strings.Replace(doc, c.from, c.to, 1)), false)
			if err != nil {
				t.Fatal(err)
			}
			if _, refused := sameAsKin(t, p); !refused {
				t.Error("accepted")
			}
			t.Log(Validate(context.Background(), p))
		})
	}
}

func TestFastDecoderAgreesWithKinOpenAPI(t *testing.T) {
	for _, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(diffBase, c.from) {
				t.Fatalf("%q is not in the base document", c.from)
			}
			doc, err := Parse([]byte(strings.Replace(diffBase, c.from, c.to, 1)), false)
			if err != nil {
				t.Fatal(err)
			}
			fast, refused := sameAsKin(t, doc)
			t.Logf("fast decoder: %v, refused: %v", fast, refused)
			if refused != c.refused {
				t.Errorf("kin-openapi refused: %v, want %v (%v)", refused, c.refused, kinValidate(context.Background(), doc))
			}
			if c.from == "" && !fast {
				t.Error("the fast decoder gave the base document up")
			}
		})
	}
}

// TestBatches: the paths checked a batch at a time, each path a batch of its
// own here, accept the base document and a large one; what crosses batches
// (a path given twice with other parameter names, an operationId used
// twice, a reference to another path) is left to the whole check, whose
// verdict and message are kin-openapi's.
func TestBatches(t *testing.T) {
	ctx := context.Background()
	inBatches := func(doc []byte) bool {
		root, err := rawjson.Members(doc)
		if err != nil {
			t.Fatal(err)
		}
		valid, _ := validInBatchesOf(ctx, doc, root, 1)
		return valid
	}
	withExtensions := strings.Replace(diffBase, `"responses":{"NotFound"`, `"x-c":{"a":1},"responses":{"NotFound"`, 1)
	withExtensions = strings.Replace(withExtensions, `"securitySchemes":{"key"`, `"x-d":[2],"securitySchemes":{"key"`, 1)
	escapedRefs := strings.Replace(diffBase, `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"#/components/schemas/P\u0065t"}`, 1)
	escapedRefs = strings.Replace(escapedRefs, `"$ref":"#/components/schemas/Pet"}}}}`, `"$ref":"#/components/%73chemas/P%65%74"}}}}`, 1)
	intoComponents := strings.Replace(diffBase, `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"#/components/schemas/Pet/properties/id"}`, 1)
	intoComponents = strings.Replace(intoComponents, `"$ref":"#/components/schemas/Pet"}}}}`, `"$ref":"#/components/schemas/Pet/properties/tag"}}}}`, 1)
	intoPaths := strings.Replace(diffBase, `"404":{"$ref":"#/components/responses/NotFound"}`, `"404":{"$ref":"#/paths/~1pets~1{id}/delete/responses/204"}`, 1)
	if intoPaths == diffBase {
		t.Fatal("no reference into a path written")
	}
	if strings.Count(intoComponents, "/properties/") != 2 {
		t.Fatal("references into a component not written")
	}
	if !strings.Contains(escapedRefs, `P\u0065t`) || !strings.Contains(escapedRefs, `P%65%74`) {
		t.Fatal("references not replaced")
	}
	for _, doc := range [][]byte{[]byte(diffBase), large(100), smallPaths(200), manyOperations(20), referencedSchemas(300), []byte(withExtensions),
		callbackPaths(200, false), callbackPaths(200, true), encodedRefs(300), []byte(escapedRefs), pathRefs(200),
		[]byte(strings.Replace(string(pathRefs(20)), `"#/paths/~1p3"`, `"#/paths/%7E1p3"`, 1)), []byte(intoComponents), []byte(intoPaths)} {
		if !inBatches(doc) {
			t.Errorf("not found valid in batches: %.200s", doc)
		}
		if _, refused := sameAsKin(t, doc); refused {
			t.Errorf("refused: %.200s", doc)
		}
	}
	crossing := []struct{ name, from, to string }{
		{"a path twice but for its parameter's name", `"/pets/{id}":{`, `"/pets/{other}":{"get":{"responses":{"200":{"description":"x"}}}},"/pets/{id}":{`},
		{"an operationId twice", `"operationId":"create"`, `"operationId":"list"`},
		{"a reference into a path, to nothing", `"404":{"$ref":"#/components/responses/NotFound"}`, `"404":{"$ref":"#/paths/~1pets~1{id}/delete/responses/299"}`},
		{"a reference into no path", `"404":{"$ref":"#/components/responses/NotFound"}`, `"404":{"$ref":"#/paths/~1none/delete/responses/204"}`},
		{"a path item reference to a path with an operationId", `"/pets/{id}":{`, `"/other":{"$ref":"#/paths/~1pets"},"/pets/{id}":{`},
		{"a path item reference and another member", `"/pets/{id}":{`, `"/other":{"$ref":"#/paths/~1pets~1{id}","summary":"s"},"/pets/{id}":{`},
		{"a path item reference to a reference", `"/pets/{id}":{`, `"/a":{"$ref":"#/paths/~1b"},"/b":{"$ref":"#/paths/~1a"},"/pets/{id}":{`},
		{"a path item reference to itself", `"/pets/{id}":{`, `"/a":{"$ref":"#/paths/~1a"},"/pets/{id}":{`},
		{"a path item reference to no path", `"/pets/{id}":{`, `"/a":{"$ref":"#/paths/~1none"},"/pets/{id}":{`},
		{"a path item reference into a path", `"/pets/{id}":{`, `"/a":{"$ref":"#/paths/~1pets~1{id}/get"},"/pets/{id}":{`},
		{"an error in the last path", `"name":"x","in":"path"`, `"name":"x","in":"nowhere"`},
		{"a reference of JSON-pointer escapes to no component", `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"#/components/schemas/P~1et"}`},
		{"a reference of %-escapes to no component", `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"#/components/schemas/P%2Fet"}`},
		{"a reference with a bad %-escape", `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"#/components/schemas/P%zet"}`},
		{"an external reference", `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"other.json#/components/schemas/Pet"}`},
		{"a reference into a component, to nothing", `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"#/components/schemas/Pet/properties/none"}`},
		{"a reference to no component", `"items":{"$ref":"#/components/schemas/Pet"}`, `"items":{"$ref":"#/components/schemas/Cat"}`},
		{"components' extension with an escape", `"responses":{"NotFound"`, `"x-\u0063":1,"responses":{"NotFound"`},
		{"a component reference to no component", `"$ref":"#/components/schemas/Pet"}}}}`, `"$ref":"#/components/schemas/Cat"}}}}`},
	}
	for _, c := range crossing {
		t.Run(c.name, func(t *testing.T) {
			doc := []byte(strings.Replace(diffBase, c.from, c.to, 1))
			if string(doc) == diffBase {
				t.Fatalf("%q is not in the base document", c.from)
			}
			if inBatches(doc) {
				t.Error("found valid in batches")
			}
			sameAsKin(t, doc)
		})
	}
}

// TestUndeclaredSchemeInBatches: a document whose security requirements
// name undeclared schemes, in operations of paths of several batches and
// in callbacks, is refused by the batches with kin-openapi's message, which
// names the least path (T.Validate walks the paths in sorted order), the
// answer for a document over 1 MiB (TestWholeCheckWaitsItsTurn).
func TestUndeclaredSchemeInBatches(t *testing.T) {
	base := string(callbackPaths(300, true))
	op90 := [2]string{`"/p90":{"get":{`, `"/p90":{"get":{"security":[{"nokey":[]}],`}
	op250 := [2]string{`"/p250":{"get":{`, `"/p250":{"get":{"security":[{"other":[]},{"nokey":[]}],`}
	c57 := [2]string{`"C57":{"{$request.body#/url57}":{"post":{`, `"C57":{"{$request.body#/url57}":{"post":{"security":[{"cb":[]}],`}
	unused := [2]string{`"C99":{`, `"C990":{"x":{"get":{"security":[{"u":[]}],"responses":{"200":{"description":"ok"}}}}},"C99":{`}
	root := [2]string{`"paths":{`, `"security":[{"r":[]}],"paths":{`}
	for _, c := range []struct {
		name  string
		edits [][2]string
	}{
		{"an operation", [][2]string{op90}},
		{"an operation of a later batch, a lesser path", [][2]string{op90, op250}},
		{"a callback", [][2]string{op90, op250, c57}},
		{"a callback of the components only", [][2]string{unused}},
		{"paths before the components' callbacks", [][2]string{unused, op90}},
		{"the root's first", [][2]string{unused, op90, root}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := base
			for _, e := range c.edits {
				if !strings.Contains(doc, e[0]) {
					t.Fatalf("%q is not in the document", e[0])
				}
				doc = strings.Replace(doc, e[0], e[1], 1)
			}
			want := kinValidate(context.Background(), []byte(doc))
			root, _ := rawjson.Members([]byte(doc))
			var got error
			for _, limit := range []int{4 << 10, minBatch} { // several batches
				valid, problem := validInBatchesOf(context.Background(), []byte(doc), root, limit)
				got = invalid("invalid OpenAPI document: %s", problem)
				if valid || problem == nil || want == nil || errText(got) != errText(want) {
					t.Errorf("batches of %d bytes: valid %v, %v\nkin-openapi alone: %v", limit, valid, problem, want)
				}
			}
			t.Log(got)
		})
	}
}

// referencedSchemas is a document of n component schemas, each but the
// first ten referencing one of those, and n/10 paths whose responses
// reference them.
func referencedSchemas(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Schemas","version":"1"},"components":{"schemas":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i < 10 {
			fmt.Fprintf(&b, `"S%d":{"type":"object","properties":{"a":{"type":"string"}}}`, i)
		} else {
			fmt.Fprintf(&b, `"S%d":{"type":"array","items":{"$ref":"#/components/schemas/S%d"}}`, i, i%10)
		}
	}
	b.WriteString(`}},"paths":{`)
	for i := range n / 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/S%d"}}}}}}}`, i, i*10+5)
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"S","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/s/"}}}}`)
	return []byte(b.String())
}

func TestFastDecoderTakesLargeDocuments(t *testing.T) {
	doc := large(50)
	if fast, refused := sameAsKin(t, doc); !fast || refused {
		t.Errorf("fast decoder used: %v, document refused: %v", fast, refused)
	}
}

// FuzzFastDecoder compares Validate with kin-openapi alone on request
// bodies that intake accepts (valid JSON, no key twice, an object).
func FuzzFastDecoder(f *testing.F) {
	for _, c := range diffCases {
		f.Add([]byte(strings.Replace(diffBase, c.from, c.to, 1)))
	}
	for _, c := range diffPairs {
		f.Add([]byte(strings.Replace(diffBase, c.from, c.to, 1)))
	}
	f.Add(large(3))
	f.Add(callbackPaths(3, false))
	f.Add(callbackPaths(3, true))
	f.Add(pathRefs(12))
	f.Add(encodedRefs(12))
	for i := range fallbackShapes {
		f.Add(fallbackShape(i, large(10)))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := Parse(body, false)
		if err != nil {
			return
		}
		sameAsKin(t, doc)
	})
}

// TestWholeCheckWaitsItsTurn: a large document with a problem the batches
// find is refused with it at once, the message kin-openapi gives when it is
// the only one; one whose batches cannot tell (a problem in a document
// with a path item reference to itself, see pathrefs.go) waits while
// another is checked whole, until its context ends; a large valid one
// does not wait.
func TestWholeCheckWaitsItsTurn(t *testing.T) {
	large := strings.Replace(diffBase, `"title":"t"`, `"title":"t","description":"`+strings.Repeat("d", wholeCheckAlone)+`"`, 1)
	valid, refused := []byte(large), []byte(strings.Replace(large, pathError[0], pathError[1], 1))
	unknown := []byte(strings.Replace(string(refused), `"/pets/{id}":{`, `"/a":{"$ref":"#/paths/~1a"},"/pets/{id}":{`, 1))
	if string(unknown) == string(refused) {
		t.Fatal("no reference replaced")
	}
	wholeChecks <- struct{}{} // another whole check under way
	defer func() { <-wholeChecks }()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := Validate(ctx, valid); err != nil {
		t.Fatalf("valid document: %v", err)
	}
	if got, want := Validate(ctx, refused), kinValidate(context.Background(), refused); errText(got) != errText(want) {
		t.Fatalf("refused document: %v, want %v", got, want)
	}
	if err := Validate(ctx, unknown); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("document the batches cannot tell while another is checked whole: %v, want its context's end", err)
	}
	<-wholeChecks
	err := Validate(context.Background(), unknown)
	wholeChecks <- struct{}{}
	if _, ok := err.(*Invalid); !ok || !strings.Contains(err.Error(), `nowhere`) {
		t.Fatalf("document checked whole: %v", err)
	}
}
