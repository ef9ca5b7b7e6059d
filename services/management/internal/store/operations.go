package store

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/gatehouse/gatehouse/pkg/kv"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
)

// The API operations of the REST and gRPC handlers, each one transaction,
// so that handlers translate between the wire and these calls and never
// open a transaction themselves. Every function a caller passes in may run
// more than once (see Update).

// CreateAPI stores a new API, made by its maker outside the transaction
// (IDs, document, name, categories, derived definition): ErrAlreadyExists
// when its API ID or db id addresses another API (Tx.PutAPI).
func (s *Store) CreateAPI(ctx context.Context, a API) error {
	return s.Update(ctx, func(tx *Tx) error {
		if err := tx.PutAPI(a, NotStored); err != nil {
			return err
		}
		auditctx.SetObject(ctx, a.ID) // the request's audit entry names the new API
		return nil
	})
}

// CreateVersion stores a new API as a child version of the Tyk OAS API
// ref names, in one transaction with the base's new record, which
// newBase makes (outside the transaction, and again when the base changed
// meanwhile) from the stored base: a.BaseID is set to the base's ID, and
// the base keeps its IDs and place as UpdateAPI keeps them.
func (s *Store) CreateVersion(ctx context.Context, ref string, a API, newBase func(base API) (API, error)) error {
	for range updateAttempts {
		old, err := s.GetAPI(ctx, ref)
		if err != nil {
			return err
		}
		if old.Kind != OAS {
			return ErrNotOAS
		}
		n, err := newBase(old)
		if err != nil {
			return err
		}
		n.ID, n.DBID, n.Kind, n.StagedFrom, n.BaseID = old.ID, old.DBID, old.Kind, old.StagedFrom, old.BaseID
		a.BaseID = old.ID
		err = s.Update(ctx, func(tx *Tx) error {
			if err := tx.PutAPI(a, NotStored); err != nil {
				return err
			}
			if err := tx.PutAPI(n, old.Revision); err != nil {
				return err
			}
			auditctx.SetObject(ctx, a.ID)
			return nil
		})
		if !errors.Is(err, ErrRevisionMoved) {
			return err
		}
	}
	return ErrRevisionMoved
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

// updateAttempts bounds UpdateAPI's retries when other writers keep
// changing the API between its read and its write.
const updateAttempts = 16

// UpdateAPI replaces the API ref names, which must be of kind (ErrNotClassic
// or ErrNotOAS otherwise), with the record edit makes of it (its document,
// name, categories, derived definition); the ID, db id and links stay the
// stored ones. edit runs outside any transaction (it may derive, which
// takes milliseconds) and may run more than once: the write fails when the
// API changed since the read (Tx.PutAPI's revision check), and the API is
// read and edited again, as Kubernetes' GuaranteedUpdate does; after
// updateAttempts it gives up with ErrRevisionMoved.
func (s *Store) UpdateAPI(ctx context.Context, ref string, kind Kind, edit func(API) (API, error)) error {
	for range updateAttempts {
		old, err := s.GetAPI(ctx, ref)
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
		err = s.Update(ctx, func(tx *Tx) error { return tx.PutAPI(n, old.Revision) })
		if !errors.Is(err, ErrRevisionMoved) {
			return err
		}
	}
	return ErrRevisionMoved
}

// DeleteAPI removes the API ref names and, recursively, its child versions;
// kind 0 accepts either kind. check, when set, runs first in the same
// transaction with the API's header (no Doc: the record is not decoded
// whole to delete it), and its error refuses the delete (what still uses
// the API).
func (s *Store) DeleteAPI(ctx context.Context, ref string, kind Kind, check func(*Tx, API) error) error {
	return s.Update(ctx, func(tx *Tx) error {
		a, err := tx.resolveHeader(ref)
		if err != nil {
			return err
		}
		if kind != 0 && a.Kind != kind {
			return kindError(kind)
		}
		if check != nil {
			if err := check(tx, a); err != nil {
				return err
			}
		}
		return tx.deleteWithVersions(a, nil)
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

// SearchAPIs returns a page of the APIs match finds (Tx.EachFound): limit
// of them after skipping offset (limit < 0: all), each copied whole, and
// how many there are.
func (s *Store) SearchAPIs(ctx context.Context, categories []string, match func(API) bool, offset, limit int) ([]API, int, error) {
	var apis []API
	var total int
	err := s.View(ctx, func(tx *Tx) (err error) {
		apis = apis[:0]
		total, err = tx.EachFound(categories, match, offset, limit, func(a API) error {
			a.Doc = bytes.Clone(a.Doc)
			apis = append(apis, a)
			return nil
		})
		return err
	})
	return apis, total, err
}

// CategoryCounts lists every category in use with its number of APIs.
// The counts of the last scan are answered again while the engine's
// revision has not moved (kv.Revisioned), without a transaction when the
// engine names its committed revision (kv.Committed): a scan of the whole
// category index per request only when something was written since.
func (s *Store) CategoryCounts(ctx context.Context) ([]CategoryCount, error) {
	cats, _, _, err := s.CategoryCountsAt(ctx)
	return cats, err
}

// CategoryCountsAt is CategoryCounts with the revision the counts are of;
// known is false when the engine names no revision (an answer built from
// them then cannot be kept by revision).
func (s *Store) CategoryCountsAt(ctx context.Context) (cats []CategoryCount, rev int64, known bool, err error) {
	if rev, ok := kv.CommittedOf(s.e); ok {
		if c, hit := s.categories.Get(rev); hit {
			return slices.Clone(c), rev, true, nil // no transaction: nothing was committed since the scan
		}
	}
	err = s.View(ctx, func(tx *Tx) (err error) {
		rev, known = kv.RevisionOf(tx.r)
		if known {
			if c, hit := s.categories.Get(rev); hit {
				cats = slices.Clone(c)
				return nil
			}
		}
		c, err := tx.Categories()
		if err != nil {
			return err
		}
		if known {
			s.categories.Set(rev, c)
		}
		cats = slices.Clone(c)
		return nil
	})
	return cats, rev, known, err
}
