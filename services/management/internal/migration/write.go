package migration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// write stores each ready item in a transaction of its own, up to the
// engine's write concurrency at once, so that the engine can share commits among them. A run that
// aborts on failure writes one API at a time, in order, and stops at the
// first failure: no API after it is touched.
func (r *run) write(ctx context.Context, items []*item) {
	if r.abort {
		for _, it := range items {
			if it.planned.failure != nil {
				return
			}
			if !it.planned.decided() {
				r.writeOne(ctx, it)
				if it.final.failure != nil {
					return
				}
			}
		}
		return
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, r.e.writes)
	for _, it := range items {
		if it.planned.decided() {
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			r.writeOne(ctx, it)
		})
	}
	wg.Wait()
}

// writeOne runs the mode's write of one API in one transaction. A storage
// error fails that API alone: a write too large for the engine with the
// engine's message (it names the limit), anything else as an internal error.
func (r *run) writeOne(ctx context.Context, it *item) {
	var o outcome
	err := r.e.store.Update(ctx, func(t *store.Tx) error {
		var got outcome
		var err error
		switch r.mode {
		case Direct:
			got, err = writeDirect(t, it)
		case Stage:
			got, err = writeStage(t, it, r.override)
		case Promote:
			got, err = writePromote(t, it)
		}
		if err == nil && got.failure != nil {
			err = errRefused // roll back whatever the write did before it refused
		}
		o = got
		return err
	})
	switch {
	case errors.Is(err, errRefused):
	case errors.Is(err, kv.ErrTooLarge):
		o = failed([]string{err.Error()})
	case errors.Is(err, kv.ErrUnavailable):
		r.e.log.Warn("write", "api_id", it.id, "err", err)
		o = failed(msgUnavailable)
	case err != nil:
		r.e.log.Error("write", "api_id", it.id, "err", err)
		o = failed(msgInternal)
	}
	it.final = o
}

// errRefused rolls back a write that decided to fail its API.
var errRefused = errors.New("migration: write refused")

// current re-checks the classic API inside the write transaction: it must
// still be classic with the db id the conversion used and, when the write is
// based on a conversion, be the revision the conversion read.
func current(t *store.Tx, it *item, sameDoc bool) (outcome, error) {
	rev := it.rev
	if !sameDoc {
		rev = store.AnyRevision
	}
	state, err := t.CompareClassic(it.id, it.dbID, rev)
	switch {
	case err != nil:
		return outcome{}, err
	case state == store.Missing:
		return failed(msgNotFound), nil
	case state == store.NotClassic:
		return skipped(convert.SkipAlreadyMigrated), nil
	case state == store.Changed:
		return failed(msgChanged), nil
	}
	return outcome{}, nil
}

// versionConflict names a version ID that is taken by an API that is not a
// version of base.
func versionConflict(t *store.Tx, base string, ids []string) ([]string, error) {
	for _, id := range ids {
		a, err := t.API(id)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, err
		case a.BaseID != base:
			return []string{fmt.Sprintf("version API %s already exists", id)}, nil
		}
	}
	return nil, nil
}

func documentIDs(docs []convert.Document) []string {
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.APIID
	}
	return ids
}

// putConverted stores the converter's documents: the base as id, the
// versions as its children. The converter wrote each db id into its
// document, and the names and categories.
func putConverted(t *store.Tx, id, stagedFrom string, res *convert.Result) error {
	err := t.PutAPI(store.API{ID: id, DBID: res.Base.DBID, Kind: store.OAS, Name: res.Name,
		Categories: res.Categories, StagedFrom: stagedFrom, Doc: res.Base.JSON})
	if err != nil {
		return err
	}
	for _, v := range res.Versions {
		if err := t.PutAPI(store.API{ID: v.APIID, DBID: v.DBID, Kind: store.OAS, Name: v.Name, BaseID: id, Doc: v.JSON}); err != nil {
			return err
		}
	}
	return nil
}

// deleteChildren removes the versions left over from an earlier life of id.
func deleteChildren(t *store.Tx, id string) error {
	children, err := t.Children(id)
	if err != nil {
		return err
	}
	for _, old := range children {
		if _, err := t.DeleteAPIWithVersions(old); err != nil {
			return err
		}
	}
	return nil
}

// writeDirect replaces the classic API in place, keeping its API ID and db id.
func writeDirect(t *store.Tx, it *item) (outcome, error) {
	if o, err := current(t, it, true); err != nil || o.decided() {
		return o, err
	}
	if msg, err := versionConflict(t, it.id, documentIDs(it.res.Versions)); err != nil || msg != nil {
		return failed(msg), err
	}
	if err := deleteChildren(t, it.id); err != nil {
		return outcome{}, err
	}
	return outcome{ok: true}, putConverted(t, it.id, "", it.res)
}

// writeStage stores the staged copy beside the untouched classic API,
// replacing an earlier staged copy when overrideStaged is set.
func writeStage(t *store.Tx, it *item, override bool) (outcome, error) {
	if o, err := current(t, it, true); err != nil || o.decided() {
		return o, err
	}
	stagedID := it.res.APIID
	previous, hasPrevious, err := t.StagedCopy(it.id)
	if err != nil {
		return outcome{}, err
	}
	taken, err := t.Exists(stagedID)
	if err != nil {
		return outcome{}, err
	}
	switch {
	case hasPrevious && !override:
		return skipped(SkipAlreadyStaged), nil
	case previous != it.saw.id:
		return failed(msgChanged), nil // the conversion chose the db id of the copy it saw
	case taken && previous != stagedID:
		return failed([]string{fmt.Sprintf("API %s already exists and is not the staged copy of %s", stagedID, it.id)}), nil
	}
	if msg, err := versionConflict(t, stagedID, documentIDs(it.res.Versions)); err != nil || msg != nil {
		return failed(msg), err
	}
	if hasPrevious {
		if _, err := t.DeleteAPIWithVersions(previous); err != nil {
			return outcome{}, err
		}
	}
	if err := deleteChildren(t, stagedID); err != nil {
		return outcome{}, err
	}
	return outcome{ok: true, stagedID: stagedID}, putConverted(t, stagedID, it.id, it.res)
}

// writePromote replaces the classic API with its staged copy, as edited
// since staging, without the staging prefixes and with the classic db id.
// The staged documents were edited through the API, so they are read back
// (convert.Unstage), stamped with their db ids and named from their
// documents (stamped).
func writePromote(t *store.Tx, it *item) (outcome, error) {
	if o, err := current(t, it, false); err != nil || o.decided() {
		return o, err
	}
	stagedID, ok, err := t.StagedCopy(it.id)
	if err != nil || !ok {
		return skipped(SkipNotStaged), err
	}
	staged, err := t.API(stagedID)
	if err != nil {
		return outcome{}, err
	}
	base, err := convert.Unstage(staged.Doc)
	if err != nil {
		return failed([]string{fmt.Sprintf("the staged copy %s cannot be promoted: %v", stagedID, err)}), nil
	}
	versions, o, err := stagedVersions(t, stagedID)
	if err != nil || o.decided() {
		return o, err
	}
	if msg, err := versionConflict(t, it.id, documentIDs(versions)); err != nil || msg != nil {
		return failed(msg), err
	}
	if _, err := t.DeleteAPIWithVersions(stagedID); err != nil {
		return outcome{}, err
	}
	if err := deleteChildren(t, it.id); err != nil {
		return outcome{}, err
	}
	return outcome{ok: true}, putPromoted(t, store.API{ID: it.id, DBID: it.dbID, Kind: store.OAS, Categories: staged.Categories, Doc: base}, versions)
}

// putPromoted stores the promoted base and its versions, each version with
// a fresh db id.
func putPromoted(t *store.Tx, base store.API, versions []convert.Document) error {
	if err := putStamped(t, base); err != nil {
		return err
	}
	for _, v := range versions {
		dbID, err := t.NewDBID()
		if err != nil {
			return err
		}
		if err := putStamped(t, store.API{ID: v.APIID, DBID: dbID, Kind: store.OAS, BaseID: base.ID, Categories: []string{}, Doc: v.JSON}); err != nil {
			return err
		}
	}
	return nil
}

// stagedVersions reads back the staged copy's versions, without the
// staging prefixes; a version that cannot be promoted fails the API.
func stagedVersions(t *store.Tx, stagedID string) ([]convert.Document, outcome, error) {
	children, err := t.Children(stagedID)
	if err != nil {
		return nil, outcome{}, err
	}
	var versions []convert.Document
	for _, childID := range children {
		child, err := t.API(childID)
		if err != nil {
			return nil, outcome{}, err
		}
		doc, err := convert.Unstage(child.Doc)
		if err != nil {
			return nil, failed([]string{fmt.Sprintf("the staged version %s cannot be promoted: %v", childID, err)}), nil
		}
		versions = append(versions, convert.Document{APIID: strings.TrimPrefix(childID, convert.StagingIDPrefix), JSON: doc})
	}
	return versions, outcome{}, nil
}

// putStamped stores an OAS API whose document does not hold its db id yet.
func putStamped(t *store.Tx, a store.API) error {
	doc, err := oasdoc.Stamp(a.Doc, a.DBID)
	if err != nil {
		return fmt.Errorf("%w: api %q: %v", store.ErrInvalid, a.ID, err)
	}
	a.Doc, a.Name = doc, oasdoc.Name(doc)
	return t.PutAPI(a)
}
