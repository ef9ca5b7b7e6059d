package store

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
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
func (s *Store) Outline(ctx context.Context, product uint32) (Outline, time.Time, error) {
	var o Outline
	var changed time.Time
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		p, err := get[Product](tx, productKey(product), "product")
		if err != nil {
			return err
		}
		if o, err = outline(tx, p); err != nil {
			return err
		}
		changed, err = lastChange(tx)
		return err
	})
	return o, changed, err
}

// Outlines returns every product's outline in ascending product id order,
// and when pages last changed without an UpdatedAt moving.
func (s *Store) Outlines(ctx context.Context) ([]Outline, time.Time, error) {
	var out []Outline
	var changed time.Time
	err := s.kv.View(ctx, func(tx kv.ReadTx) (err error) {
		if changed, err = lastChange(tx); err != nil {
			return err
		}
		return tx.Scan(productPrefix, nil, func(_, v []byte) error {
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

func outline(tx kv.ReadTx, p Product) (Outline, error) {
	o := Outline{Product: p}
	order, err := pageOrder(tx, p.ID)
	if err != nil {
		return o, err
	}
	for _, id := range order {
		s, err := get[PageSummary](tx, pageKey(p.ID, id), "page")
		if err != nil {
			return o, err
		}
		o.Pages = append(o.Pages, s)
	}
	return o, nil
}
