package store

import (
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
)

// TestOnEtcd runs the store's cases on an etcd member, where update
// functions retry on conflicts: the store is written once, and its rules
// (orders, unique paths and names, one bootstrap key) must hold on both
// engines. The cases that reopen a bbolt file stay bbolt-only.
func TestOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd member")
	}
	c := etcdtest.Start(t, 1)
	n := 0
	openOther = func(t testing.TB) *Store {
		n++
		e, err := etcdkv.Open(ctx, etcdkv.Config{Endpoints: c.Endpoints(), Prefix: fmt.Sprintf("/portal-test/%d/", n)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		s, err := Open(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.checkIndexes(); err != nil {
				t.Errorf("indexes: %v", err)
			}
		})
		return s
	}
	defer func() { openOther = nil }()
	for name, test := range map[string]func(*testing.T){
		"PageOrder":                             TestPageOrder,
		"PathUniquePerProduct":                  TestPathUniquePerProduct,
		"ProductsIDsAreNeverReused":             TestProductsIDsAreNeverReused,
		"ListProductsWindows":                   TestListProductsWindows,
		"DeleteProductRemovesOnlyItsPages":      TestDeleteProductRemovesOnlyItsPages,
		"PageBelongsToItsProduct":               TestPageBelongsToItsProduct,
		"UpdatePageKeepsFieldsAndAbortsOnError": TestUpdatePageKeepsFieldsAndAbortsOnError,
		"LabelsUniqueAndUnlinkedOnDelete":       TestLabelsUniqueAndUnlinkedOnDelete,
		"LabelLookupSeesTheTransaction":         TestLabelLookupSeesTheTransaction,
		"ConcurrentFirstAdmin":                  TestConcurrentFirstAdmin,
		"ConcurrentPathsStayUnique":             TestConcurrentPathsStayUnique,
		"ConcurrentLabelNamesStayUnique":        TestConcurrentLabelNamesStayUnique,
	} {
		t.Run(name, test)
	}
}
