package oasdoc_test

import (
	"context"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/heaptest"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/oasimport"
)

// BenchmarkDryRunPeak is BenchmarkImportPeak for POST
// /api/apis/oas/dry-run: the body {"oas": document} parsed, its document
// read (oasimport.DryRunDocument), imported and taken in; held-x is over
// the body.
func BenchmarkDryRunPeak(b *testing.B) {
	maker := apirecord.New("org", convert.ToClassicWithin)
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
		b.Run(c.name, func(b *testing.B) {
			body := append(append([]byte(`{"oas":`), c.doc()...), '}')
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			run := func() {
				parsed, err := oasdoc.Parse(body, false)
				if err != nil {
					b.Fatal(err)
				}
				doc, err := oasimport.DryRunDocument(parsed)
				if err != nil || doc == nil {
					b.Fatal(doc == nil, err)
				}
				out, err := oasimport.Import(doc, params)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := intake(context.Background(), maker, out); err != nil {
					b.Fatal(err)
				}
			}
			var held uint64
			for b.Loop() {
				held = max(held, heaptest.PeakHeld(run))
			}
			b.ReportMetric(float64(held)/float64(len(body)), "held-x")
			b.ReportMetric(float64(len(body))/(1<<20), "body-MiB")
		})
	}
}
