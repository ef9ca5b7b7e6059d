package store

import (
	"bytes"
	"context"
	"slices"
	"strconv"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// CreateLabel stores a tag or category named name; ErrAlreadyExists when
// one of that kind has exactly that name. The name index is written in the
// same transaction as the label.
func (s *Store) CreateLabel(ctx context.Context, kind LabelKind, name string) (Label, error) {
	var out Label
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		taken, err := exists(tx, labelNameKey(kind, name))
		if err != nil {
			return err
		}
		if taken {
			return ErrAlreadyExists
		}
		id, err := kv.NextID32(tx, labelLayout[kind].seq)
		if err != nil {
			return err
		}
		auditctx.SetObject(ctx, strconv.FormatUint(uint64(id), 10)) // the request's audit entry names the new label
		l := Label{ID: id, Name: name}
		if err := tx.Put(labelNameKey(kind, name), idKey(nil, id)); err != nil {
			return err
		}
		if err := put(tx, labelKey(kind, id), l); err != nil {
			return err
		}
		out = l
		return nil
	})
	return out, err
}

// GetLabel reads one tag or category; ErrNotFound when there is none.
func (s *Store) GetLabel(ctx context.Context, kind LabelKind, id uint32) (Label, error) {
	var out Label
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		l, err := get[Label](tx, labelKey(kind, id), "label")
		out = l
		return err
	})
	return out, err
}

// RenameLabel gives a tag or category a new name; ErrNotFound when there is
// none, ErrAlreadyExists when another one of that kind has the name. Pages
// keep label IDs, so they show the new name at once.
func (s *Store) RenameLabel(ctx context.Context, kind LabelKind, id uint32, name string) (Label, error) {
	var out Label
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		l, err := get[Label](tx, labelKey(kind, id), "label")
		if err != nil {
			return err
		}
		if l.Name != name {
			taken, err := exists(tx, labelNameKey(kind, name))
			if err != nil {
				return err
			}
			if taken {
				return ErrAlreadyExists
			}
			if err := tx.Delete(labelNameKey(kind, l.Name)); err != nil {
				return err
			}
			l.Name = name
			if err := tx.Put(labelNameKey(kind, name), idKey(nil, id)); err != nil {
				return err
			}
			if err := put(tx, labelKey(kind, id), l); err != nil {
				return err
			}
			if err := markChanged(tx); err != nil {
				return err
			}
		}
		out = l
		return nil
	})
	return out, err
}

// ListLabels returns every tag or category in ascending id order.
func (s *Store) ListLabels(ctx context.Context, kind LabelKind) ([]Label, error) {
	return list[Label](ctx, s, labelLayout[kind].prefix, "label", nil)
}

// EachLabel calls fn with every label of a kind, in id order, from one
// snapshot.
func (s *Store) EachLabel(ctx context.Context, kind LabelKind, fn func(Label) error) error {
	return each(ctx, s, labelLayout[kind].prefix, "label", nil, fn)
}

// DeleteLabel removes a tag or category, its name and its id from every
// page that lists it, in one transaction.
func (s *Store) DeleteLabel(ctx context.Context, kind LabelKind, id uint32) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		l, err := get[Label](tx, labelKey(kind, id), "label")
		if err != nil {
			return err
		}
		if err := tx.Delete(labelNameKey(kind, l.Name)); err != nil {
			return err
		}
		if err := tx.Delete(labelKey(kind, id)); err != nil {
			return err
		}
		if err := markChanged(tx); err != nil {
			return err
		}
		return unlinkLabel(tx, kind, id)
	})
}

// unlinkLabel removes a label's id from every page that lists it.
func unlinkLabel(tx kv.WriteTx, kind LabelKind, id uint32) error {
	return tx.Scan(pagePrefix, nil, func(k, v []byte) error {
		p, err := decode[Page](v, "page")
		if err != nil {
			return err
		}
		list := &p.Tags
		if kind == Categories {
			list = &p.Categories
		}
		if !slices.Contains(*list, id) {
			return nil
		}
		*list = slices.DeleteFunc(*list, func(x uint32) bool { return x == id })
		return put(tx, bytes.Clone(k), p)
	})
}
