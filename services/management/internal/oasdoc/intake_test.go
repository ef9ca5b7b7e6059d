package oasdoc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/heaptest"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/oasimport"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// intake is what POST /api/apis/oas (and PUT) does with a request body
// before it stores the record: Parse, Validate, the IDs read, and the
// record made with its derived classic definition (convert.ToClassic, as a
// management that serves gateways runs it).
func intake(ctx context.Context, maker *apirecord.Maker, body []byte) (store.API, error) {
	return intakeOf(ctx, maker, body, false)
}

// intakeOf is intake of a JSON or (yamlInput) a YAML body.
func intakeOf(ctx context.Context, maker *apirecord.Maker, body []byte, yamlInput bool) (store.API, error) {
	doc, err := oasdoc.Parse(body, yamlInput)
	if err != nil {
		return store.API{}, err
	}
	if err := oasdoc.Validate(ctx, doc); err != nil {
		return store.API{}, err
	}
	if _, _, err := oasdoc.ID(doc); err != nil {
		return store.API{}, err
	}
	if _, err := oasdoc.DBID(doc); err != nil {
		return store.API{}, err
	}
	return maker.OAS(store.API{ID: "a1", DBID: "d1"}, doc)
}

// manySchemas is a document of one path and n small component schemas.
func manySchemas(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Schemas","version":"1"},"paths":{"/p":{"get":{"responses":{"200":{"description":"ok"}}}}},"components":{"schemas":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"S%d":{"type":"string"}`, i)
	}
	b.WriteString(`}},"x-tyk-api-gateway":{"info":{"name":"Schemas","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/s/"}}}}`)
	return []byte(b.String())
}

// BenchmarkIntakePeak measures the whole intake of a document (intake
// above) and reports the heap it held at once above idle as a multiple of
// the document's size: held-x (heaptest.PeakHeld; the bound is 8, issue
// 32), and heap-x, the heap reached with garbage not yet collected
// (heaptest.Peak: at GOGC 100 a process lets garbage grow to its live heap,
// 4 MiB at least, so for small documents this is mostly the collector's
// pacing). 190k-paths is refused by its count; 10k-paths and 6250x8-ops
// are the largest accepted documents of those shapes, large-2000 one of
// richer operations with per-operation middleware, 20k-schemas one whose
// size is its components. Each document is made in its own sub-benchmark,
// so that no other is live while it is measured.
func BenchmarkIntakePeak(b *testing.B) {
	maker := apirecord.New("org", convert.ToClassicWithin)
	for _, c := range []struct {
		name string
		doc  func() []byte
	}{
		{"190k-paths", func() []byte { return oasdoc.SmallPaths(190_000) }},
		{"10k-paths", func() []byte { return oasdoc.SmallPaths(oasdoc.MaxPaths) }},
		{"6250x8-ops", func() []byte { return oasdoc.ManyOperations(6250) }},
		{"large-2000", func() []byte { return oasdoc.Large(2000) }},
		{"20k-schemas", func() []byte { return manySchemas(20_000) }},
		{"referenced-20k", func() []byte { return oasdoc.ReferencedSchemas(20_000) }},
		{"10k-callbacks", func() []byte { return oasdoc.CallbackPaths(oasdoc.MaxPaths, false) }},
		{"10k-callback-refs", func() []byte { return oasdoc.CallbackPaths(oasdoc.MaxPaths, true) }},
		{"10k-path-refs", func() []byte { return oasdoc.PathRefs(oasdoc.MaxPaths) }},
		{"encoded-refs-20k", func() []byte { return oasdoc.EncodedRefs(20_000) }},
		{"into-components-20k", func() []byte { return oasdoc.IntoComponents(20_000) }},
		{"10k-into-paths", func() []byte { return oasdoc.IntoPaths(oasdoc.MaxPaths) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			intakePeak(b, maker, c.doc(), false)
		})
	}
	// the shapes once checked whole: large(9_995) with one change each (at
	// most 10,000 paths)
	for i, c := range oasdoc.FallbackShapes {
		b.Run(c.Name, func(b *testing.B) {
			intakePeak(b, maker, oasdoc.FallbackShape(i, oasdoc.Large(oasdoc.MaxPaths-5)), c.Refused)
		})
	}
}

// intakePeak is a sub-benchmark of BenchmarkIntakePeak: the intake of doc,
// which must be refused or not as refused says (a document of over
// MaxPaths paths is refused by its count).
func intakePeak(b *testing.B, maker *apirecord.Maker, doc []byte, refused bool) {
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	run := func() {
		_, err := intake(context.Background(), maker, doc)
		if err != nil && strings.Contains(err.Error(), "at most 10000 paths") {
			return
		}
		if (err != nil) != refused {
			b.Fatalf("refused: %v, want %v", err, refused)
		}
	}
	var held, heap uint64
	for b.Loop() {
		held = max(held, heaptest.PeakHeld(run))
		heap = max(heap, heaptest.Peak(run))
	}
	b.ReportMetric(float64(held)/float64(len(doc)), "held-x")
	b.ReportMetric(float64(heap)/float64(len(doc)), "heap-x")
	b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
}

// BenchmarkImportPeak measures an import as POST /api/apis/oas/import
// runs it (oasimport.Import with allowList, validateRequest and
// mockResponse on, then the intake) and reports the heap it held at once
// above idle as a multiple of the document's size, held-x (the bound is 8,
// issue 32), as BenchmarkIntakePeak does; the documents are plain OpenAPI:
// their x-tyk-api-gateway extension is left out, so the import makes it,
// with an entry per operation: held-stored-x is the same peak over the
// size of the document the import made (what is stored).
func BenchmarkImportPeak(b *testing.B) {
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
			doc := c.doc()
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			var stored int
			run := func() {
				out, err := oasimport.Import(doc, params)
				if err != nil {
					b.Fatal(err)
				}
				stored = len(out)
				if _, err := intake(context.Background(), maker, out); err != nil {
					b.Fatal(err)
				}
			}
			var held uint64
			for b.Loop() {
				held = max(held, heaptest.PeakHeld(run))
			}
			b.ReportMetric(float64(held)/float64(len(doc)), "held-x")
			b.ReportMetric(float64(held)/float64(stored), "held-stored-x")
			b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
		})
	}
}

// BenchmarkPatchPeak is BenchmarkImportPeak for PATCH /api/apis/oas/{apiId}:
// oasimport.Patch of the plain document over the stored record of its
// import (held, as the handler holds the record it updates), then the
// intake; held-x is over the body.
func BenchmarkPatchPeak(b *testing.B) {
	maker := apirecord.New("org", convert.ToClassicWithin)
	on := true
	params := oasimport.Params{AllowList: &on, ValidateRequest: &on, MockResponse: &on}
	for _, c := range []struct {
		name string
		doc  func() []byte
	}{
		{"10k-paths", func() []byte { return plain(oasdoc.SmallPaths(oasdoc.MaxPaths)) }},
		{"6250x8-ops", func() []byte { return plain(oasdoc.ManyOperations(6250)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			doc := c.doc()
			imported, err := oasimport.Import(doc, params)
			if err != nil {
				b.Fatal(err)
			}
			old, err := intake(context.Background(), maker, imported)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			run := func() {
				out, err := oasimport.Patch(old.Doc, doc, params)
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
			b.ReportMetric(float64(held)/float64(len(doc)), "held-x")
			b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
		})
	}
}

// plain is a generated document without its x-tyk-api-gateway extension
// (the generators end with it) and with a server URL for the upstream.
func plain(doc []byte) []byte {
	i := strings.LastIndex(string(doc), `,"x-tyk-api-gateway":`)
	return append(append([]byte(`{"servers":[{"url":"http://upstream.test/"}],`), doc[1:i]...), '}')
}

// BenchmarkYAMLIntakePeak is BenchmarkIntakePeak's accepted shapes sent as
// YAML (written by oasdoc.JSONToYAML, the export's emitter): the intake
// then starts with the YAML's conversion to JSON. held-x is over the YAML
// document's size.
func BenchmarkYAMLIntakePeak(b *testing.B) {
	maker := apirecord.New("org", convert.ToClassicWithin)
	for _, c := range []struct {
		name string
		doc  func() []byte
	}{
		{"10k-paths", func() []byte { return oasdoc.SmallPaths(oasdoc.MaxPaths) }},
		{"6250x8-ops", func() []byte { return oasdoc.ManyOperations(6250) }},
		{"large-2000", func() []byte { return oasdoc.Large(2000) }},
		{"20k-schemas", func() []byte { return manySchemas(20_000) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			doc, err := oasdoc.JSONToYAML(c.doc())
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			run := func() {
				if _, err := intakeOf(context.Background(), maker, doc, true); err != nil {
					b.Fatal(err)
				}
			}
			var held uint64
			for b.Loop() {
				held = max(held, heaptest.PeakHeld(run))
			}
			b.ReportMetric(float64(held)/float64(len(doc)), "held-x")
			b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
		})
	}
}
