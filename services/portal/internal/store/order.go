package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// A product's pages have an order, kept under order/<product> as the list of their
// ids. The list is only written by a reorder or a removal: a page it does not
// name comes after those it names, in ascending id order, so a new page (the
// highest id so far) goes last without a write, and a store written before
// orders existed reads as ascending id order.

// changedKey holds when pages last changed in a way no UpdatedAt records:
// a reorder, a removal, a label's removal. It is written without being read
// in the transaction, so concurrent writers do not conflict on it.

// pageOrder returns the ids of product's pages in their order.
func pageOrder(tx kv.ReadTx, product uint32) ([]uint32, error) {
	var ids []uint32 // ascending, as the keys are
	err := tx.Scan(pagesOf(product), nil, func(k, _ []byte) error { ids = append(ids, lastID(k)); return nil })
	if err != nil {
		return nil, err
	}
	stored, err := tx.Get(orderKey(product))
	if err != nil {
		return nil, err
	}
	out := make([]uint32, 0, len(ids))
	named := make(map[uint32]bool, len(stored)/4)
	for i := 0; i+4 <= len(stored); i += 4 {
		id := binary.BigEndian.Uint32(stored[i:])
		if _, ok := slices.BinarySearch(ids, id); ok && !named[id] {
			named[id] = true
			out = append(out, id)
		}
	}
	for _, id := range ids {
		if !named[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

func setOrder(tx kv.WriteTx, product uint32, ids []uint32) error {
	raw := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		raw = binary.BigEndian.AppendUint32(raw, id)
	}
	return tx.Put(orderKey(product), raw)
}

// markChanged records now as the time pages last changed without an UpdatedAt.
func markChanged(tx kv.WriteTx) error {
	raw, err := time.Now().UTC().MarshalBinary()
	if err != nil {
		return err
	}
	return tx.Put(changedKey, raw)
}

func lastChange(tx kv.ReadTx) (time.Time, error) {
	var t time.Time
	raw, err := tx.Get(changedKey)
	if err == nil && raw != nil {
		_ = t.UnmarshalBinary(raw) // an unreadable time reads as never
	}
	return t, err
}

// pagesByID reads the pages of product with these ids, in this order, with
// their label names.
func pagesByID(tx kv.ReadTx, product uint32, ids []uint32) ([]Page, error) {
	out := make([]Page, 0, len(ids))
	names := map[labelRef]string{}
	for _, id := range ids {
		p, err := get[Page](tx, pageKey(product, id), "page")
		if err != nil {
			return nil, err
		}
		if err := fillNames(tx, &p, names); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// ReorderPages sets the order of product's pages: reorder receives their ids
// in the current order and returns the new order, or an error that aborts
// the change. The returned list must name only pages of the product (it is
// the caller's to check that it names each once); pages it leaves out keep
// their relative order after it. The pages come back in the new order.
// ErrNotFound when the product does not exist.
func (s *Store) ReorderPages(ctx context.Context, product uint32, reorder func(current []uint32) ([]uint32, error)) ([]Page, error) {
	var out []Page
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		if err := mustExist(tx, productKey(product)); err != nil {
			return err
		}
		current, err := pageOrder(tx, product)
		if err != nil {
			return err
		}
		next, err := reorder(slices.Clone(current))
		if err != nil {
			return err
		}
		for _, id := range current {
			if !slices.Contains(next, id) {
				next = append(next, id)
			}
		}
		if err := setOrder(tx, product, next); err != nil {
			return err
		}
		if err := markChanged(tx); err != nil {
			return err
		}
		order, err := pageOrder(tx, product)
		if err != nil {
			return err
		}
		pages, err := pagesByID(tx, product, order)
		if err != nil {
			return err
		}
		out = pages
		return nil
	})
	return out, err
}

// CleanPath is the URL a page's Path names under its product: without
// leading or trailing slashes. "" means the page has no path of its own.
func CleanPath(path string) string { return strings.Trim(path, "/") }

// PathTakenError is the refusal of a Path that another page of the same
// product already has (after CleanPath).
type PathTakenError struct {
	Path string // as requested
	By   uint32 // the page that has it
}

func (e *PathTakenError) Error() string {
	return fmt.Sprintf("path %q is taken by page %d", e.Path, e.By)
}

// Is makes a PathTakenError match ErrPathTaken.
func (e *PathTakenError) Is(target error) bool { return target == ErrPathTaken }

// pathFree checks that no page of product other than self has path. It
// reads the product's whole page range, so a concurrent page with the same
// path conflicts with this transaction.
func pathFree(tx kv.ReadTx, product, self uint32, path string) error {
	want := CleanPath(path)
	if want == "" {
		return nil
	}
	return tx.Scan(pagesOf(product), nil, func(k, v []byte) error {
		id := lastID(k)
		if id == self {
			return nil
		}
		s, err := decode[pathOnly](v, "page")
		if err != nil {
			return err
		}
		if CleanPath(s.Path) == want {
			return &PathTakenError{Path: path, By: id}
		}
		return nil
	})
}

type pathOnly struct {
	Path string `json:"path"`
}
