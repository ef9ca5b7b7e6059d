package apirecord

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// rederiveBatch is how many records one Rederive transaction rewrites.
const rederiveBatch = 100

// Rederive rewrites every OAS record of st whose derived definition this
// maker did not make (written without derivation, by another build, or
// before records kept one) and returns how many it rewrote: it finds them
// in one read, derives rederiveBatch at a time outside any transaction and
// writes each batch in one, each record only over the revision it derived
// from — a record written meanwhile is already current and left alone. A
// rewrite is a write (a new revision, a reload notification).
func (m *Maker) Rederive(ctx context.Context, st *store.Store) (int, error) {
	if m.derive == nil || m.tag == "" {
		return 0, nil
	}
	var stale []string
	err := st.View(ctx, func(tx *store.Tx) error {
		stale = stale[:0]
		return tx.EachAPI(func(a store.API) error {
			if !m.Current(a) {
				stale = append(stale, a.ID)
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	total := 0
	for len(stale) > 0 {
		batch := stale[:min(rederiveBatch, len(stale))]
		stale = stale[len(batch):]
		var read []store.API
		err := st.View(ctx, func(tx *store.Tx) error {
			read = read[:0]
			for _, id := range batch {
				a, err := tx.API(id)
				switch {
				case errors.Is(err, store.ErrNotFound):
				case err != nil:
					return err
				default:
					read = append(read, a)
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		made := make([]store.API, 0, len(read))
		for _, a := range read {
			if a.Kind == store.OAS {
				made = append(made, m.Derived(a))
			}
		}
		var n int
		err = st.Update(ctx, func(tx *store.Tx) error {
			n = 0
			for _, a := range made {
				switch err := tx.PutAPI(a, a.Revision); {
				case errors.Is(err, store.ErrRevisionMoved):
				case err != nil:
					return err
				default:
					n++
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
