package store

import (
	"context"
	"fmt"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
)

// The API operations of the REST and gRPC handlers, each one transaction,
// so that handlers translate between the wire and these calls and never
// open a transaction themselves. Every function a caller passes in may run
// more than once (see Update).

// CreateAPI stores a new API of a.Kind. An empty a.ID gets a fresh API ID; a
// given one that another API holds is ErrAlreadyExists. a.DBID is kept when
// it is 24 hex and free, otherwise a fresh db id is made. fill returns the
// record to store (PutAPI) given a with the final IDs: its document, name
// and categories. It returns the API as stored.
func (s *Store) CreateAPI(ctx context.Context, a API, fill func(API) (API, error)) (API, error) {
	var created API
	err := s.Update(ctx, func(tx *Tx) error {
		n := a
		var err error
		if n.ID == "" {
			if n.ID, err = tx.NewAPIID(); err != nil {
				return err
			}
		} else if taken, err := tx.Exists(n.ID); err != nil || taken {
			if err != nil {
				return err
			}
			return fmt.Errorf("%w: api %q", ErrAlreadyExists, n.ID)
		}
		if _, taken, err := tx.APIIDByDBID(n.DBID); err != nil || taken || !dbIDPattern.MatchString(n.DBID) {
			if err != nil {
				return err
			}
			if n.DBID, err = tx.NewDBID(); err != nil {
				return err
			}
		}
		id, dbID := n.ID, n.DBID
		if n, err = fill(n); err != nil {
			return err
		}
		n.ID, n.DBID = id, dbID
		auditctx.SetObject(ctx, n.ID) // the request's audit entry names the new API
		if err := tx.PutAPI(n); err != nil {
			return err
		}
		created, err = tx.API(n.ID)
		return err
	})
	return created, err
}

// GetAPI reads the API ref names: its API ID or its db id (Tx.Resolve).
func (s *Store) GetAPI(ctx context.Context, ref string) (API, error) {
	var a API
	err := s.View(ctx, func(tx *Tx) (err error) {
		a, err = tx.Resolve(ref)
		return err
	})
	return a, err
}

// kindError is the error for an API of the other kind than wanted.
func kindError(want Kind) error {
	if want == Classic {
		return ErrNotClassic
	}
	return ErrNotOAS
}

// UpdateAPI replaces the API ref names, which must be of kind (ErrNotClassic
// or ErrNotOAS otherwise), with the record edit makes of a copy of it
// (PutAPI: its document, name and categories); the ID, db id and links stay
// the stored ones.
func (s *Store) UpdateAPI(ctx context.Context, ref string, kind Kind, edit func(API) (API, error)) error {
	return s.Update(ctx, func(tx *Tx) error {
		old, err := tx.Resolve(ref)
		if err != nil {
			return err
		}
		if old.Kind != kind {
			return kindError(kind)
		}
		n, err := edit(old)
		if err != nil {
			return err
		}
		n.ID, n.DBID, n.Kind, n.StagedFrom, n.BaseID = old.ID, old.DBID, old.Kind, old.StagedFrom, old.BaseID
		return tx.PutAPI(n)
	})
}

// DeleteAPI removes the API ref names and, recursively, its child versions;
// kind 0 accepts either kind.
func (s *Store) DeleteAPI(ctx context.Context, ref string, kind Kind) error {
	return s.Update(ctx, func(tx *Tx) error {
		a, err := tx.Resolve(ref)
		if err != nil {
			return err
		}
		if kind != 0 && a.Kind != kind {
			return kindError(kind)
		}
		_, err = tx.DeleteAPIWithVersions(a.ID)
		return err
	})
}

// ListAPIs returns a page of the APIs in any of categories (every API when
// none is given) and how many there are, from one snapshot (Tx.List).
func (s *Store) ListAPIs(ctx context.Context, categories []string, offset, limit int) ([]API, int, error) {
	var apis []API
	var total int
	err := s.View(ctx, func(tx *Tx) (err error) {
		apis, total, err = tx.List(categories, offset, limit)
		return err
	})
	return apis, total, err
}

// CategoryCounts lists every category in use with its number of APIs.
func (s *Store) CategoryCounts(ctx context.Context) ([]CategoryCount, error) {
	var cats []CategoryCount
	err := s.View(ctx, func(tx *Tx) (err error) {
		cats, err = tx.Categories()
		return err
	})
	return cats, err
}
