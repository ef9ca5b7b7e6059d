package store

import (
	"bytes"
	"fmt"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Version 1 of the layout was a bbolt file with one bucket per kind, holding
// the same JSON records as this layout. The bbolt engine moves such buckets
// under legacy/<bucket>/ when it opens the file, carrying each bucket's
// sequence over to the sequence of the same name; upgrade moves the pairs to
// their prefixes here and deletes the legacy keys, in the schema transaction.
var (
	legacyPrefix  = []byte("legacy/")
	legacyVersion = []byte("legacy/meta/schema_version")
	// legacyMoves maps each version-1 bucket to its prefix in this layout.
	legacyMoves = []struct{ from, to string }{
		{"legacy/products/", "product/"},
		{"legacy/pages/", "page/"},
		{"legacy/page_orders/", "order/"},
		{"legacy/tags/", "tag/"},
		{"legacy/tag_names/", "tagname/"},
		{"legacy/categories/", "category/"},
		{"legacy/category_names/", "categoryname/"},
		{"legacy/api_keys/", "apikey/"},
		{"legacy/site/", "site/"},
	}
)

func upgrade(tx kv.WriteTx, _ int) error {
	v, err := tx.Get(legacyVersion)
	if err != nil || v == nil {
		return err // a new key space: nothing to convert
	}
	if string(v) != "1" {
		return fmt.Errorf("a bbolt file of portal layout version %q, which this binary cannot convert", v)
	}
	for _, m := range legacyMoves {
		err := tx.Scan([]byte(m.from), nil, func(k, v []byte) error {
			return tx.Put(concat([]byte(m.to), string(k[len(m.from):])), bytes.Clone(v))
		})
		if err != nil {
			return err
		}
	}
	return tx.Scan(legacyPrefix, nil, func(k, _ []byte) error { return tx.Delete(bytes.Clone(k)) })
}
