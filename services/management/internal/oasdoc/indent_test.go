package oasdoc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// exportWithCopies is the export as it was written before it stopped
// copying the document (rawjson.Delete for public, json.Compact then
// json.Indent for JSON, JSONToYAML of the copy for YAML): the answers must
// stay byte-identical to it.
func exportWithCopies(doc []byte, f Format, public bool) ([]byte, error) {
	if public {
		var err error
		if doc, _, err = rawjson.Delete(doc, Extension); err != nil {
			return nil, err
		}
	}
	if f == YAML {
		return JSONToYAML(doc)
	}
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil {
		return nil, err
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// exportDocuments are documents whose export is compared: the generated
// shapes, and the extension anywhere (first, between, last, alone, twice,
// absent), whitespace anywhere, escapes and punctuation in strings, empty
// containers with space inside.
var exportDocuments = []string{
	rich,
	string(large(20)),
	string(manyOperations(30)),
	string(smallPaths(50)),
	`{}`,
	` { } `,
	`{"x-tyk-api-gateway":{}}`,
	`{ "x-tyk-api-gateway" : { "a" : [ ] } , "x-tyk-api-gateway":1 }`,
	`{"openapi":"3.0.3","x-tyk-api-gateway":{"info":{"name":"n"}},"info":{}}`,
	`{"openapi":"3.0.3","info":{},"x-tyk-api-gateway":{"info":{"name":"n"}}}`,
	`{"x-tyk-api-gateway":null,"openapi":"3.0.3","x-tyk-api-gateway":[1,2],"paths":{}}`,
	`{"x-tyk-api-gatew\u0061y":true,"a":"x-tyk-api-gateway"}`,
	"\n\t{\r\n \"a\" :\t[ 1 ,2.50e+3, -0 , true,false , null, { }, [ ] ,\"\" ],\n\"b\":{\"c\":{\"d\":[[[]]]}}}\n\n",
	`{"s":"{[,:]}\" \\\" \\\\\" \u00e9 \ud83d\ude00 \/ \b\f\n\r\t","k{,}":"v:[","":""}`,
	`{"a":{"b":[{"c":"yes","d":"no","e":"1.0","f":"0x1F","g":"~","h":"- x","i":"a: b","j":"multi\nline\n"}]}}`,
	`{"x-tyk-api-gateway":{"nested":{"x-tyk-api-gateway":1}},"keep":{"x-tyk-api-gateway":2}}`,
	`[]`, `[1,{"a":[]},"s"]`, `"text"`, `12.50`, `null`,
}

// TestExportBytes holds Export to the export with copies over
// exportDocuments, JSON and YAML, whole and public.
func TestExportBytes(t *testing.T) {
	for i, doc := range exportDocuments {
		for _, f := range []Format{JSON, YAML} {
			for _, public := range []bool{false, true} {
				sameExport(t, i, []byte(doc), f, public)
			}
		}
	}
}

func sameExport(t *testing.T, i int, doc []byte, f Format, public bool) {
	t.Helper()
	want, wantErr := exportWithCopies(doc, f, public)
	got, err := Export(doc, f, public)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("document %d (format %d, public %v): error %v, want %v", i, f, public, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("document %d (format %d, public %v):\n got %q\nwant %q", i, f, public, got, want)
	}
	if cap(got) != len(got) { // counted first, then written into its size
		t.Fatalf("document %d (format %d, public %v): %d bytes in %d", i, f, public, len(got), cap(got))
	}
}

// FuzzExport: any valid JSON exports as the export with copies writes it.
func FuzzExport(f *testing.F) {
	for _, doc := range exportDocuments {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		for _, format := range []Format{JSON, YAML} {
			for _, public := range []bool{false, true} {
				sameExport(t, 0, []byte(doc), format, public)
			}
		}
	})
}
