package store

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/pkg/boltstore"
)

// Outline is a product with a summary of each of its pages, in their order:
// what the public site needs to list and link them.
type Outline struct {
	Product Product
	Pages   []PageSummary
}

// PageSummary is a page without its content.
type PageSummary struct {
	ID        uint32    `json:"id"`
	Title     string    `json:"title"`
	Lede      string    `json:"lede"`
	Status    string    `json:"status"`
	Path      string    `json:"path"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Outline returns product's outline and when pages last changed without an
// UpdatedAt moving (a reorder or a removal anywhere); ErrNotFound when the
// product does not exist.
func (s *Store) Outline(_ context.Context, product uint32) (Outline, time.Time, error) {
	var o Outline
	var changed time.Time
	err := s.db.View(func(tx *bolt.Tx) error {
		p, err := decode[Product](tx.Bucket(productBucket).Get(boltstore.Key(product)), "product")
		if err != nil {
			return err
		}
		o, err = outline(tx, p)
		changed = lastChange(tx)
		return err
	})
	return o, changed, err
}

// Outlines returns every product's outline in ascending product id order,
// and when pages last changed without an UpdatedAt moving.
func (s *Store) Outlines(_ context.Context) ([]Outline, time.Time, error) {
	var out []Outline
	var changed time.Time
	err := s.db.View(func(tx *bolt.Tx) error {
		changed = lastChange(tx)
		return tx.Bucket(productBucket).ForEach(func(_, v []byte) error {
			p, err := decode[Product](v, "product")
			if err != nil {
				return err
			}
			o, err := outline(tx, p)
			out = append(out, o)
			return err
		})
	})
	return out, changed, err
}

func outline(tx *bolt.Tx, p Product) (Outline, error) {
	o := Outline{Product: p}
	b := tx.Bucket(pageBucket)
	for _, id := range pageOrder(tx, p.ID) {
		s, err := decode[PageSummary](b.Get(pageKey(p.ID, id)), "page")
		if err != nil {
			return o, err
		}
		o.Pages = append(o.Pages, s)
	}
	return o, nil
}
