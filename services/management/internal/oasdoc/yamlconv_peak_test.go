package oasdoc_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/pkg/heaptest"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
)

// BenchmarkYAMLConversionPeak measures YAMLToJSON alone, the first step of
// a YAML intake (BenchmarkYAMLIntakePeak), over the same documents: held-x
// is the heap it held at once over the YAML's size, json-x the JSON's size
// over it. The documents are written by JSONToYAML; json/ ones are sent as
// they are, JSON text with a YAML content type (converted in pieces by
// yamljson.go), marked/ ones begin with the document start marker ---.
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
		for _, form := range []string{"", "json/", "marked/"} {
			b.Run(form+c.name, func(b *testing.B) {
				yamlConversionPeak(b, c.doc(), form)
			})
		}
	}
}

// yamlConversionPeak is a sub-benchmark of BenchmarkYAMLConversionPeak: the
// conversion of the JSON document j in the form form names.
func yamlConversionPeak(b *testing.B, j []byte, form string) {
	doc := j
	var err error
	if form != "json/" {
		if doc, err = oasdoc.JSONToYAML(j); err != nil {
			b.Fatal(err)
		}
	}
	if form == "marked/" {
		doc = append([]byte("---\n"), doc...)
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
