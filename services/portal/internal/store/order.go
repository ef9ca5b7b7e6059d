package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/pkg/boltstore"
)

// A product's pages have an order, kept in orderBucket as the list of their
// ids. The list is only written by a reorder or a removal: a page it does not
// name comes after those it names, in ascending id order, so a new page (the
// highest id so far) goes last without a write, and a store written before
// orders existed reads as ascending id order.

// changedKey, in siteBucket, holds when pages last changed in a way no
// UpdatedAt records: a reorder, a removal, a label's removal.
var changedKey = []byte("changed_at")

// pageOrder returns the ids of product's pages in their order.
func pageOrder(tx *bolt.Tx, product uint32) []uint32 {
	var ids []uint32 // ascending, as the keys are
	prefix := boltstore.Key(product)
	c := tx.Bucket(pageBucket).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, binary.BigEndian.Uint32(k[len(prefix):]))
	}
	stored := tx.Bucket(orderBucket).Get(prefix)
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
	return out
}

func setOrder(tx *bolt.Tx, product uint32, ids []uint32) error {
	raw := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		raw = binary.BigEndian.AppendUint32(raw, id)
	}
	return tx.Bucket(orderBucket).Put(boltstore.Key(product), raw)
}

// markChanged records now as the time pages last changed without an UpdatedAt.
func markChanged(tx *bolt.Tx) error {
	raw, err := time.Now().UTC().MarshalBinary()
	if err != nil {
		return err
	}
	return tx.Bucket(siteBucket).Put(changedKey, raw)
}

func lastChange(tx *bolt.Tx) time.Time {
	var t time.Time
	if raw := tx.Bucket(siteBucket).Get(changedKey); raw != nil {
		_ = t.UnmarshalBinary(raw) // an unreadable time reads as never
	}
	return t
}

// pagesByID reads the pages of product with these ids, in this order, with
// their label names.
func pagesByID(tx *bolt.Tx, product uint32, ids []uint32) ([]Page, error) {
	out := make([]Page, 0, len(ids))
	b := tx.Bucket(pageBucket)
	names := map[labelRef]string{}
	for _, id := range ids {
		p, err := decode[Page](b.Get(pageKey(product, id)), "page")
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
func (s *Store) ReorderPages(_ context.Context, product uint32, reorder func(current []uint32) ([]uint32, error)) ([]Page, error) {
	var out []Page
	err := s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(productBucket).Get(boltstore.Key(product)) == nil {
			return ErrNotFound
		}
		current := pageOrder(tx, product)
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
		out, err = pagesByID(tx, product, pageOrder(tx, product))
		return err
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

// pathFree checks that no page of product other than self has path.
func pathFree(tx *bolt.Tx, product, self uint32, path string) error {
	want := CleanPath(path)
	if want == "" {
		return nil
	}
	prefix := boltstore.Key(product)
	c := tx.Bucket(pageBucket).Cursor()
	for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
		id := binary.BigEndian.Uint32(k[len(prefix):])
		if id == self {
			continue
		}
		s, err := decode[pathOnly](v, "page")
		if err != nil {
			return err
		}
		if CleanPath(s.Path) == want {
			return &PathTakenError{Path: path, By: id}
		}
	}
	return nil
}

type pathOnly struct {
	Path string `json:"path"`
}
