package convert

import (
	"path/filepath"
	"testing"
)

// BenchmarkConvert converts a ~4 KB classic API with two versions and about ten endpoints, including
// normalisation, validation and serialisation of both documents.
func BenchmarkConvert(b *testing.B) {
	raw := mustReadFile(&testing.T{}, filepath.Join("testdata", "bench-4k.json"))
	res, err := Convert(raw, Options{})
	if err != nil || len(res.Versions) != 1 {
		b.Fatalf("the benchmark input does not convert into a base and one version: %v", err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		if _, err := Convert(raw, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkClassify is the skip check the migrate endpoint runs before converting.
func BenchmarkClassify(b *testing.B) {
	raw := mustReadFile(&testing.T{}, filepath.Join("testdata", "bench-4k.json"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Classify(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToClassic derives the classic definition of the base document of BenchmarkConvert's input (the
// gateway sync's OAS → classic step, per API); compare with BenchmarkConvertBase.
func BenchmarkToClassic(b *testing.B) {
	raw := mustReadFile(&testing.T{}, filepath.Join("testdata", "bench-4k.json"))
	res, err := Convert(raw, Options{})
	if err != nil {
		b.Fatal(err)
	}
	doc := res.Base.JSON
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		if _, err := ToClassic(doc); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}
