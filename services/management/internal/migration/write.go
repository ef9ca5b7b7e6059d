package migration

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/services/management/internal/migrate"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// write stores the ready items in one transaction, stopping at the first
// failure when the run aborts on failure. If the transaction itself fails,
// each item is written again in its own, so that one API's storage error
// fails only that API.
func (r *run) write(items []*item) {
	err := r.e.store.Update(func(t *store.Tx) error { return r.writeEach(t, items) })
	if err == nil {
		return
	}
	r.e.log.Error("batch transaction failed; writing one API per transaction", "err", err)
	for _, it := range items {
		it.final = outcome{}
	}
	for i, it := range items {
		if it.planned.decided() {
			if it.planned.failure != nil && r.abort {
				return
			}
			continue
		}
		err := r.e.store.Update(func(t *store.Tx) error { return r.writeEach(t, items[i:i+1]) })
		if err != nil {
			r.e.log.Error("write", "api_id", it.id, "err", err)
			it.final = failed(msgInternal)
		}
		if it.final.failure != nil && r.abort {
			return
		}
	}
}

// writeEach writes items in order inside t; an error aborts the transaction.
func (r *run) writeEach(t *store.Tx, items []*item) error {
	for _, it := range items {
		if it.planned.decided() {
			if it.planned.failure != nil && r.abort {
				return nil
			}
			continue
		}
		var err error
		switch r.mode {
		case Direct:
			it.final, err = writeDirect(t, it)
		case Stage:
			it.final, err = writeStage(t, it, r.override)
		case Promote:
			it.final, err = writePromote(t, it)
		}
		if err != nil {
			return fmt.Errorf("api %s: %w", it.id, err)
		}
		if it.final.failure != nil && r.abort {
			return nil
		}
	}
	return nil
}

// current re-reads the classic API inside the write transaction: it must
// still be classic and, when the write is based on a conversion, hold the
// bytes the conversion read.
func current(t *store.Tx, it *item, sameDoc bool) (outcome, error) {
	cur, err := t.API(it.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return failed(msgNotFound), nil
	case err != nil:
		return outcome{}, err
	case cur.Kind != store.Classic:
		return skipped(migrate.SkipAlreadyMigrated), nil
	case sameDoc && !bytes.Equal(cur.Doc, it.doc), cur.DBID != it.dbID:
		return failed(msgChanged), nil
	}
	return outcome{}, nil
}

// versionConflict names a version ID that is taken by an API that is not a
// version of base.
func versionConflict(t *store.Tx, base string, ids []string) []string {
	for _, id := range ids {
		if a, err := t.API(id); err == nil && a.BaseID != base {
			return []string{fmt.Sprintf("version API %s already exists", id)}
		}
	}
	return nil
}

func documentIDs(docs []migrate.Document) []string {
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.APIID
	}
	return ids
}

// putConverted stores the converter's documents: the base as id, the
// versions as its children.
func putConverted(t *store.Tx, id, stagedFrom string, res *migrate.Result) error {
	err := t.PutConverted(store.API{ID: id, DBID: res.Base.DBID, Kind: store.OAS, Name: res.Name,
		Categories: res.Categories, StagedFrom: stagedFrom, Doc: res.Base.JSON})
	if err != nil {
		return err
	}
	for _, v := range res.Versions {
		if err := t.PutConverted(store.API{ID: v.APIID, DBID: v.DBID, Kind: store.OAS, Name: v.Name, BaseID: id, Doc: v.JSON}); err != nil {
			return err
		}
	}
	return nil
}

// deleteChildren removes the versions left over from an earlier life of id.
func deleteChildren(t *store.Tx, id string) error {
	for _, old := range t.Children(id) {
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
	if msg := versionConflict(t, it.id, documentIDs(it.res.Versions)); msg != nil {
		return failed(msg), nil
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
	previous, hasPrevious := t.StagedCopy(it.id)
	switch {
	case hasPrevious && !override:
		return skipped(SkipAlreadyStaged), nil
	case previous != it.saw.id:
		return failed(msgChanged), nil // the conversion chose the db id of the copy it saw
	case t.Exists(stagedID) && previous != stagedID:
		return failed([]string{fmt.Sprintf("API %s already exists and is not the staged copy of %s", stagedID, it.id)}), nil
	}
	if msg := versionConflict(t, stagedID, documentIDs(it.res.Versions)); msg != nil {
		return failed(msg), nil
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
// (migrate.Unstage) and stored with PutAPI.
func writePromote(t *store.Tx, it *item) (outcome, error) {
	if o, err := current(t, it, false); err != nil || o.decided() {
		return o, err
	}
	stagedID, ok := t.StagedCopy(it.id)
	if !ok {
		return skipped(SkipNotStaged), nil
	}
	staged, err := t.API(stagedID)
	if err != nil {
		return outcome{}, err
	}
	base, err := migrate.Unstage(staged.Doc)
	if err != nil {
		return failed([]string{fmt.Sprintf("the staged copy %s cannot be promoted: %v", stagedID, err)}), nil
	}
	var versions []migrate.Document
	for _, childID := range t.Children(stagedID) {
		child, err := t.API(childID)
		if err != nil {
			return outcome{}, err
		}
		doc, err := migrate.Unstage(child.Doc)
		if err != nil {
			return failed([]string{fmt.Sprintf("the staged version %s cannot be promoted: %v", childID, err)}), nil
		}
		versions = append(versions, migrate.Document{APIID: strings.TrimPrefix(childID, migrate.StagingIDPrefix), JSON: doc})
	}
	if msg := versionConflict(t, it.id, documentIDs(versions)); msg != nil {
		return failed(msg), nil
	}
	if _, err := t.DeleteAPIWithVersions(stagedID); err != nil {
		return outcome{}, err
	}
	if err := deleteChildren(t, it.id); err != nil {
		return outcome{}, err
	}
	if err := t.PutAPI(store.API{ID: it.id, DBID: it.dbID, Kind: store.OAS, Categories: staged.Categories, Doc: base}); err != nil {
		return outcome{}, err
	}
	for _, v := range versions {
		if err := t.PutAPI(store.API{ID: v.APIID, DBID: t.NewDBID(), Kind: store.OAS, BaseID: it.id, Doc: v.JSON}); err != nil {
			return outcome{}, err
		}
	}
	return outcome{ok: true}, nil
}
