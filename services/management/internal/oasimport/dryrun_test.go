package oasimport

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decodedDryRun is what the dry-run handler read before DryRunDocument:
// the body decoded into a struct of two json.RawMessage fields (a copy).
func decodedDryRun(body []byte) []byte {
	var dry struct {
		OAS    json.RawMessage `json:"oas"`
		TykOAS json.RawMessage `json:"tyk_oas"`
	}
	if json.Unmarshal(body, &dry) != nil {
		return nil
	}
	doc := dry.OAS
	if len(doc) == 0 || string(doc) == "null" {
		doc = dry.TykOAS
	}
	if len(doc) == 0 || string(doc) == "null" {
		return nil
	}
	return doc
}

var dryRunBodies = []string{
	`{"oas":{"openapi":"3.0.3"}}`,
	`{"tyk_oas":{"openapi":"3.0.3","x-tyk-api-gateway":{}}}`,
	`{"oas":null,"tyk_oas":{"a":1}}`,
	`{"tyk_oas":{"a":1},"oas":{"b":2}}`,
	`{"OAS":{"a":1}}`,
	`{"Tyk_OAS":{"a":1},"oas":null}`,
	`{"oas":{"a":1},"OaS":{"b":2}}`,
	`{"OAS":{"a":1},"oas":{"b":2}}`,
	`{"oa\u017f":{"kelvin-and-long-s-fold":true}}`,
	`{"\u006fas":{"escaped":true}}`,
	`{ "oas" : { "spaced" : [ 1 , 2 ] } , "x" : 1 }`,
	`{"oas":"text"}`, `{"oas":5}`, `{"oas":[]}`, `{"oas":{}}`,
	`{"other":{"a":1}}`, `{}`, `null`, `[]`, `"oas"`,
	`{"oas":{"oas":{"nested":1}},"tyk_oas":{"c":3}}`,
	`{"tyk_oas":null,"oas":null}`,
	`{"oas ":{"a":1},"tyk-oas":{"b":2}}`,
}

// TestDryRunDocument: the document is the one the struct decode gives, and
// a slice of the body.
func TestDryRunDocument(t *testing.T) {
	for _, body := range dryRunBodies {
		sameDryRun(t, []byte(body))
	}
}

func sameDryRun(t *testing.T, body []byte) {
	t.Helper()
	want := decodedDryRun(body)
	got, err := DryRunDocument(body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
		t.Fatalf("%s: document %q, want %q", body, got, want)
	}
	if got != nil && !bytes.Contains(body, got) {
		t.Fatalf("%s: %q is not the body's text", body, got)
	}
}

// FuzzDryRunDocument: any valid JSON body gives the struct decode's
// document.
func FuzzDryRunDocument(f *testing.F) {
	for _, body := range dryRunBodies {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if json.Valid([]byte(body)) {
			sameDryRun(t, []byte(body))
		}
	})
}
