package store

import (
	"context"
	"strconv"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// CreatePage stores a new page of product, last in the product's order,
// and its Rendered when fill sets one. fill sets the page's fields; it runs inside the transaction (perhaps more
// than once, each time on a new Page) and may look labels up, and its error
// aborts the creation. The product must exist, and a Path already used by
// another page of the product is a *PathTakenError.
func (s *Store) CreatePage(ctx context.Context, product uint32, fill func(*Page, LabelLookup) error) (Page, error) {
	var out Page
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		if err := mustExist(tx, productKey(product)); err != nil {
			return err
		}
		var p Page
		lookup, lookupErr := lookupIn(tx)
		if err := fill(&p, lookup); err != nil {
			return err
		}
		if err := lookupErr(); err != nil {
			return err
		}
		if err := pathFree(tx, product, 0, p.Path); err != nil {
			return err
		}
		id, err := kv.NextID32(tx, pageSeq)
		if err != nil {
			return err
		}
		auditctx.SetObject(ctx, strconv.FormatUint(uint64(id), 10)) // the request's audit entry names the new page
		p.ID, p.ProductID = id, product
		if err := put(tx, pageKey(product, id), p); err != nil {
			return err
		}
		if err := putRendered(tx, p); err != nil {
			return err
		}
		if err := fillNames(tx, &p, nil); err != nil {
			return err
		}
		out = p
		return nil
	})
	return out, err
}

// GetPage reads page id of product; a page of another product is ErrNotFound.
func (s *Store) GetPage(ctx context.Context, product, id uint32) (Page, error) {
	var p Page
	err := s.kv.View(ctx, func(tx kv.ReadTx) (err error) {
		if p, err = get[Page](tx, pageKey(product, id), "page"); err != nil {
			return err
		}
		return fillNames(tx, &p, nil)
	})
	return p, err
}

// ListPages returns up to limit pages of product after skipping offset, in
// the product's page order; ErrNotFound when the product does not exist.
func (s *Store) ListPages(ctx context.Context, product uint32, offset, limit int) ([]Page, error) {
	var out []Page
	err := s.EachPage(ctx, product, offset, limit, func(p Page) error {
		out = append(out, p)
		return nil
	})
	return out, err
}

// EachPage is ListPages calling fn with each page instead of keeping them,
// from one snapshot: a list is written as it is read (pkg/liststream), one
// page (of up to 16 MiB of content) at a time.
func (s *Store) EachPage(ctx context.Context, product uint32, offset, limit int, fn func(Page) error) error {
	return s.kv.View(ctx, func(tx kv.ReadTx) error {
		if err := mustExist(tx, productKey(product)); err != nil {
			return err
		}
		order, err := pageOrder(tx, product)
		if err != nil {
			return err
		}
		order = order[min(offset, len(order)):]
		order = order[:min(limit, len(order))]
		names := map[labelRef]string{}
		for _, id := range order {
			p, err := get[Page](tx, pageKey(product, id), "page")
			if err != nil {
				return err
			}
			if err := fillNames(tx, &p, names); err != nil {
				return err
			}
			if err := fn(p); err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdatePage runs update on page id of product inside one transaction and
// stores the result (and its Rendered, when update sets one) unless update
// fails. update may look labels up and may
// run more than once, each time on a fresh copy; the page's ID and product
// cannot change. A new Path already used by another page of the product is
// a *PathTakenError.
func (s *Store) UpdatePage(ctx context.Context, product, id uint32, update func(*Page, LabelLookup) error) (Page, error) {
	var out Page
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		p, err := get[Page](tx, pageKey(product, id), "page")
		if err != nil {
			return err
		}
		before := CleanPath(p.Path)
		lookup, lookupErr := lookupIn(tx)
		if err := update(&p, lookup); err != nil {
			return err
		}
		if err := lookupErr(); err != nil {
			return err
		}
		if CleanPath(p.Path) != before {
			if err := pathFree(tx, product, id, p.Path); err != nil {
				return err
			}
		}
		p.ID, p.ProductID = id, product
		if err := put(tx, pageKey(product, id), p); err != nil {
			return err
		}
		if err := putRendered(tx, p); err != nil {
			return err
		}
		if err := fillNames(tx, &p, nil); err != nil {
			return err
		}
		out = p
		return nil
	})
	return out, err
}

// DeletePage removes page id of product and takes it out of the order.
func (s *Store) DeletePage(ctx context.Context, product, id uint32) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		if err := mustExist(tx, pageKey(product, id)); err != nil {
			return err
		}
		if err := tx.Delete(pageKey(product, id)); err != nil {
			return err
		}
		if err := tx.Delete(renderedKey(product, id)); err != nil {
			return err
		}
		order, err := pageOrder(tx, product)
		if err != nil {
			return err
		}
		if err := setOrder(tx, product, order); err != nil {
			return err
		}
		return markChanged(tx)
	})
}

type labelRef struct {
	kind LabelKind
	id   uint32
}

// fillNames sets the names of p's tags and categories; a label that no
// longer exists is left out. cache, when not nil, remembers names across pages.
func fillNames(tx kv.ReadTx, p *Page, cache map[labelRef]string) error {
	var err error
	if p.CategoryNames, err = names(tx, Categories, p.Categories, cache); err != nil {
		return err
	}
	p.TagNames, err = names(tx, Tags, p.Tags, cache)
	return err
}

func names(tx kv.ReadTx, kind LabelKind, ids []uint32, cache map[labelRef]string) ([]string, error) {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if n, ok := cache[labelRef{kind, id}]; ok {
			out = append(out, n)
			continue
		}
		raw, err := tx.Get(labelKey(kind, id))
		if err != nil {
			return nil, err
		}
		if raw == nil {
			continue
		}
		l, err := decode[Label](raw, "label")
		if err != nil {
			return nil, err
		}
		if cache != nil {
			cache[labelRef{kind, id}] = l.Name
		}
		out = append(out, l.Name)
	}
	return out, nil
}
