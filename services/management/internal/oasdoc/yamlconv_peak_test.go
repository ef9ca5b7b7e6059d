package oasdoc_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/pkg/heaptest"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
)

// BenchmarkYAMLConversionPeak measures YAMLToJSON alone, the first step of
// a YAML intake (BenchmarkYAMLIntakePeak), over the same documents: held-x
// is the heap it held at once over the YAML's size, json-x the JSON's size
// over it. The json/ documents are the same sent as they are: JSON text
// with a YAML content type (converted in pieces by yamljson.go), the rest
// are written by JSONToYAML.
func BenchmarkYAMLConversionPeak(b *testing.B) {
	for _, c := range []struct {
		name string
		doc  func() []byte
	}{
		{"10k-paths", func() []byte { return oasdoc.SmallPaths(oasdoc.MaxPaths) }},
		{"6250x8-ops", func() []byte { return oasdoc.ManyOperations(6250) }},
		{"large-2000", func() []byte { return oasdoc.Large(2000) }},
		{"20k-schemas", func() []byte { return manySchemas(20_000) }},
	} {
		for _, asJSON := range []bool{false, true} {
			name := c.name
			if asJSON {
				name = "json/" + name
			}
			b.Run(name, func(b *testing.B) {
				yamlConversionPeak(b, c.doc(), asJSON)
			})
		}
	}
}

// yamlConversionPeak is a sub-benchmark of BenchmarkYAMLConversionPeak: the
// conversion of the JSON document j as YAML, written by JSONToYAML unless
// asJSON.
func yamlConversionPeak(b *testing.B, j []byte, asJSON bool) {
	doc := j
	var err error
	if !asJSON {
		if doc, err = oasdoc.JSONToYAML(j); err != nil {
			b.Fatal(err)
		}
	}
	var held uint64
	var out []byte
	for b.Loop() {
		held = max(held, heaptest.PeakHeld(func() {
			if out, err = oasdoc.YAMLToJSON(doc); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(held)/float64(len(doc)), "held-x")
	b.ReportMetric(float64(len(out))/float64(len(doc)), "json-x")
	b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
}
