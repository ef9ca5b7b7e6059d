package convert

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// BenchmarkDecodeClassic is the encoding/json share of BenchmarkConvert: decoding the classic input.
func BenchmarkDecodeClassic(b *testing.B) {
	raw := mustReadFile(&testing.T{}, filepath.Join("testdata", "bench-4k.json"))
	b.ReportAllocs()
	for b.Loop() {
		var api classicAPI
		if err := json.Unmarshal(raw, &api); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeDocument is the share of serialising one (the base) document.
func BenchmarkEncodeDocument(b *testing.B) {
	raw := mustReadFile(&testing.T{}, filepath.Join("testdata", "bench-4k.json"))
	var api classicAPI
	if err := json.Unmarshal(raw, &api); err != nil {
		b.Fatal(err)
	}
	c := &converter{api: &api}
	c.normalise()
	ts := c.splitVersions(Options{})
	d := c.buildDocument(ts[0])
	b.ReportAllocs()
	for b.Loop() {
		encode(d)
	}
}
