package store

import (
	"context"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Derive yields what an OAS API record keeps as API.Derived: the classic
// definition gateways load for it. It must depend only on the record it is
// given (it may run more than once per write: see Update).
type Derive func(a API) ([]byte, error)

// deriver is the store's Derive hook and its tag.
type deriver struct {
	tag string
	fn  Derive
}

// DeriveWith makes every write of an OAS API record keep fn's result with
// the record, in the same transaction (a record whose document fn refuses
// keeps none), marked with tag. Derived definitions marked with another tag
// — made by another build, whose derivation may differ — read as none (see
// Rederive). An empty tag keeps nothing. Call it before the store is used.
func (s *Store) DeriveWith(tag string, fn Derive) { s.derive = deriver{tag: tag, fn: fn} }

// MaxDerived bounds the derived definition a record keeps: a larger one is
// not kept (its reader derives it), so that a record still fits where its
// document alone fits (etcd's request size) but for this much.
const MaxDerived = 256 << 10

// of is what a record written now keeps: the tag and the derived bytes.
func (d deriver) of(a API) (string, []byte) {
	if a.Kind != OAS || d.fn == nil || d.tag == "" {
		return "", nil
	}
	def, err := d.fn(a)
	if err != nil || len(def) > MaxDerived {
		return d.tag, nil // refused or too large: not tried again
	}
	return d.tag, def
}

// rederiveBatch is how many records one Rederive transaction rewrites.
const rederiveBatch = 100

// Rederive rewrites, rederiveBatch per transaction, every OAS API record
// whose derived definition was not made by the store's Derive hook (written
// without it, by another build, or before records kept one), and returns how
// many it rewrote. A rewrite is a write (a new revision, a reload
// notification). Records written meanwhile by PutAPI are already current
// and skipped.
func (s *Store) Rederive(ctx context.Context) (int, error) {
	if s.derive.fn == nil || s.derive.tag == "" {
		return 0, nil
	}
	total := 0
	var after []byte
	for {
		var n int
		var next []byte
		err := s.Update(ctx, func(tx *Tx) error {
			n, next = 0, nil
			var stale []string
			err := tx.r.Scan(apiPrefix, after, func(k, v []byte) error {
				next = append(append([]byte(nil), k...), 0)
				a, _, err := decodeHeader(string(k[len(apiPrefix):]), v)
				if err != nil {
					return err
				}
				if a.Kind == OAS && a.derivedBy != s.derive.tag {
					stale = append(stale, a.ID)
				}
				if len(stale) == rederiveBatch {
					return kv.ErrStop
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, id := range stale {
				a, err := tx.API(id)
				if err != nil {
					return err
				}
				if err := tx.putRecord(a); err != nil {
					return err
				}
			}
			n = len(stale)
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < rederiveBatch {
			return total, nil
		}
		after = next
	}
}
