package oasdoc_test

import (
	"runtime"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/heaptest"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/oasimport"
)

// BenchmarkExportPeak measures GET /api/apis/oas/{id}/export of a large
// API's stored document (oasdoc.Export, as the handler runs it over the
// record it read) in JSON and YAML, whole and public (without the
// x-tyk-api-gateway extension). The stored documents are what an import of
// BenchmarkImportPeak's plain documents stores. held-x is the heap held at
// once (heaptest.PeakHeld), the answer included, over the stored document's
// size (the bound is 8, issue 32); out-x is the answer's size over it.
func BenchmarkExportPeak(b *testing.B) {
	on := true
	params := oasimport.Params{AllowList: &on, ValidateRequest: &on, MockResponse: &on}
	for _, c := range []struct {
		name string
		doc  func() []byte
	}{
		{"10k-paths", func() []byte { return plain(oasdoc.SmallPaths(oasdoc.MaxPaths)) }},
		{"6250x8-ops", func() []byte { return plain(oasdoc.ManyOperations(6250)) }},
		{"large-2000", func() []byte { return plain(oasdoc.Large(2000)) }},
		{"20k-schemas", func() []byte { return plain(manySchemas(20_000)) }},
	} {
		for _, f := range []struct {
			name   string
			format oasdoc.Format
			public bool
		}{
			{"json", oasdoc.JSON, false},
			{"json-public", oasdoc.JSON, true},
			{"yaml", oasdoc.YAML, false},
			{"yaml-public", oasdoc.YAML, true},
		} {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				stored, err := oasimport.Import(c.doc(), params)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(stored)))
				b.ReportAllocs()
				var out []byte
				run := func() {
					if out, err = oasdoc.Export(stored, f.format, f.public); err != nil {
						b.Fatal(err)
					}
					// a collection with the answer held: PeakHeld sees the
					// heap at collections, and an export that allocates
					// little more than its answer may end before one
					runtime.GC()
				}
				var held uint64
				for b.Loop() {
					held = max(held, heaptest.PeakHeld(run))
				}
				b.ReportMetric(float64(held)/float64(len(stored)), "held-x")
				b.ReportMetric(float64(len(out))/float64(len(stored)), "out-x")
				b.ReportMetric(float64(len(stored))/(1<<20), "stored-MiB")
			})
		}
	}
}
