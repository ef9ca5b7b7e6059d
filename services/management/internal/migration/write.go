package migration

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/pkg/tracing"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// writer stores the ready items of a run, each in a transaction of its
// own, with up to the engine's write concurrency open at once across
// chunks, so that the engine can share commits among them.
type writer struct {
	r     *run
	slots chan struct{}
}

func (r *run) newWriter() *writer {
	return &writer{r: r, slots: make(chan struct{}, r.e.writes)}
}

// writing is a chunk whose writes were started.
type writing struct {
	items []*item
	wg    sync.WaitGroup
	span  trace.Span
}

// wait returns when every write of the chunk is done.
func (c *writing) wait() {
	c.wg.Wait()
	c.span.End()
}

// start starts writing items; it returns once each has a write slot (the
// writes of an earlier chunk hold the others).
func (w *writer) start(ctx context.Context, items []*item) *writing {
	c := &writing{items: items}
	ctx, c.span = tracing.Tracer().Start(ctx, "migrate write", trace.WithAttributes(attribute.Int("gatehouse.migrate.apis", len(items))))
	for _, it := range items {
		if it.planned.decided() {
			continue
		}
		w.slots <- struct{}{}
		c.wg.Go(func() {
			defer func() { <-w.slots }()
			w.r.writeOne(ctx, it)
		})
	}
	return c
}

// writeInOrder is the write of a run that aborts on failure: one API at a
// time, in order, stopping at the first failure, so that no API after it is
// touched.
func (r *run) writeInOrder(ctx context.Context, items []*item) {
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
}

// writeOne runs the mode's write of one API in one transaction. A storage
// error fails that API alone (storeFailure).
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
	case err != nil:
		o = r.storeFailure(it.id, err)
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

// versionIDs are the IDs of the versions among an item's records.
func versionIDs(made []store.API) []string {
	ids := make([]string, 0, len(made))
	for _, a := range made[min(1, len(made)):] {
		ids = append(ids, a.ID)
	}
	return ids
}

// putMade stores an item's records, made before the transaction: the base,
// then its versions.
func putMade(t *store.Tx, made []store.API) error {
	for _, a := range made {
		if err := t.PutAPI(a, store.AnyRevision); err != nil {
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
	if msg, err := versionConflict(t, it.id, versionIDs(it.made)); err != nil || msg != nil {
		return failed(msg), err
	}
	if err := deleteChildren(t, it.id); err != nil {
		return outcome{}, err
	}
	return outcome{ok: true}, putMade(t, it.made)
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
	if msg, err := versionConflict(t, stagedID, versionIDs(it.made)); err != nil || msg != nil {
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
	return outcome{ok: true, stagedID: stagedID}, putMade(t, it.made)
}

// writePromote replaces the classic API with its staged copy, as edited
// since staging and read before the transaction (preparePromotion): the
// copy and its versions must still be at the revisions read.
func writePromote(t *store.Tx, it *item) (outcome, error) {
	if o, err := current(t, it, false); err != nil || o.decided() {
		return o, err
	}
	stagedID, ok, err := t.StagedCopy(it.id)
	if err != nil || !ok {
		return skipped(SkipNotStaged), err
	}
	if same, err := samePromotion(t, stagedID, it.promo); err != nil || !same {
		return failed(msgChanged), err
	}
	if msg, err := versionConflict(t, it.id, versionIDs(it.made)); err != nil || msg != nil {
		return failed(msg), err
	}
	if _, err := t.DeleteAPIWithVersions(stagedID); err != nil {
		return outcome{}, err
	}
	if err := deleteChildren(t, it.id); err != nil {
		return outcome{}, err
	}
	return outcome{ok: true}, putMade(t, it.made)
}

// samePromotion reports whether the staged copy stagedID and its versions
// are still those p read, at the same revisions.
func samePromotion(t *store.Tx, stagedID string, p *promotion) (bool, error) {
	if stagedID != p.copy.ID {
		return false, nil
	}
	if rev, ok, err := t.Revision(stagedID); err != nil || !ok || rev != p.copy.Revision {
		return false, err
	}
	children, err := t.Children(stagedID)
	if err != nil || len(children) != len(p.versions) {
		return false, err
	}
	for i, v := range p.versions {
		if children[i] != v.ID {
			return false, nil
		}
		if rev, ok, err := t.Revision(v.ID); err != nil || !ok || rev != v.Revision {
			return false, err
		}
	}
	return true, nil
}
