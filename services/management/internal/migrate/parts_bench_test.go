package migrate

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

func BenchmarkPartDecode(b *testing.B) {
	raw := mustReadFile(&testing.T{}, filepath.Join("testdata", "bench-4k.json"))
	b.ReportAllocs()
	for b.Loop() {
		var api classicAPI
		if err := json.Unmarshal(raw, &api); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPartEncode(b *testing.B) {
	raw := mustReadFile(&testing.T{}, filepath.Join("testdata", "bench-4k.json"))
	var api classicAPI
	json.Unmarshal(raw, &api)
	c := &converter{api: &api}
	c.normalise()
	ts := c.splitVersions(Options{})
	d := c.buildDocument(ts[0])
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		encode(&buf, d)
	}
}
