package migration

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/status"

	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Skip keys of the engine itself (the converter's are convert.Skip*).
const (
	SkipAlreadyStaged = "already_staged"
	SkipNotStaged     = "not_staged"
)

var (
	msgNotFound = []string{"API not found"}
	msgChanged  = []string{"API changed while it was being migrated; try again"}
	msgInternal = []string{"internal error"} // a converter panic
)

// storeFailure fails an API for a storage error, with the message every
// service answers for it (grpcserver.CallerError, which logs what it calls
// an internal failure): "store unavailable" when the store did not answer in
// time, the store's conflict (503, retry later) when other writers kept
// winning, the engine's message for a write over its limits (it names the
// limit). The API is unchanged, and a later run migrates it.
func (r *run) storeFailure(id string, err error) outcome {
	return failed([]string{status.Convert(grpcserver.CallerError(r.e.log.With("api_id", id), err)).Message()})
}

// item is one API of a round.
type item struct {
	id    string // the classic api_id (a staged copy's ID resolved to it)
	dbID  string // the classic API's db id
	doc   []byte // the classic definition, as read
	rev   uint64 // its record's revision: every write checks it is still the stored one
	saw   staged // the staged copy the read saw
	stage string // stage: the db id of the new staged copy

	res   *convert.Result
	promo *promotion // promote: the staged copy as read
	// made are the records the write puts, made outside its transaction by
	// the store's record maker: the base first, then its versions.
	made    []store.API
	planned outcome // decided while reading and converting; zero: ready to write
	final   outcome // decided while writing
}

// staged is a classic API's staged copy, as one transaction saw it.
type staged struct{ id, dbID string }

// promotion is the staged copy a promotion reads, with its versions, in
// the read transaction: the write checks their revisions are still the
// stored ones.
type promotion struct {
	copy     store.API
	versions []store.API
}

// outcome is what the report says of an API; the zero value means undecided.
type outcome struct {
	ok       bool
	skipKey  string
	failure  []string
	stagedID string // stage: the staged copy's ID
}

func (o outcome) decided() bool { return o.ok || o.skipKey != "" || o.failure != nil }

func failed(msgs []string) outcome { return outcome{failure: msgs} }
func skipped(key string) outcome   { return outcome{skipKey: key} }

// read resolves each ID in one read transaction and decides what needs no
// conversion: unknown IDs, APIs that are already Tyk OAS.
func (r *run) read(ctx context.Context, ids []string) []*item {
	items := make([]*item, 0, len(ids))
	err := r.e.store.View(ctx, func(t *store.Tx) error {
		for _, id := range ids {
			it := &item{id: id}
			a, err := t.API(id)
			if err == nil && a.Kind == store.OAS && a.StagedFrom != "" { // a staged copy's ID means its classic API
				it.id = a.StagedFrom
				a, err = t.API(it.id)
			}
			if r.seen[it.id] {
				continue
			}
			r.seen[it.id] = true
			items = append(items, it)
			switch {
			case errors.Is(err, store.ErrNotFound):
				it.planned = failed(msgNotFound)
				continue
			case err != nil:
				it.planned = r.storeFailure(id, err)
				continue
			case a.Kind != store.Classic:
				it.planned = skipped(convert.SkipAlreadyMigrated)
				continue
			}
			it.dbID, it.doc, it.rev = a.DBID, a.Doc, a.Revision
			sid, ok, err := t.StagedCopy(it.id)
			if err != nil {
				return err
			}
			if ok {
				s, err := t.API(sid)
				if err != nil {
					return err
				}
				it.saw = staged{id: sid, dbID: s.DBID}
				if r.mode == Promote {
					if it.promo, err = readPromotion(t, s); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		for _, it := range items {
			if !it.planned.decided() {
				it.planned = r.storeFailure(it.id, err)
			}
		}
	}
	return items
}

// prepare decodes, classifies and (except to promote) converts the ready
// items on every core; each classic definition is decoded once. While
// behind reports true (the writes lag: converted chunks wait for them),
// only one worker takes items, so that the store's committer, a single
// goroutine, gets a core of its own while converted work piles up (with two
// workers on 2 cores it gets about two thirds of one, falls behind, and the
// workers then wait on the full queue while a core stands idle).
func (r *run) prepare(items []*item, behind func() bool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(runtime.GOMAXPROCS(0), len(items)) {
		wg.Go(func() {
			for w == 0 || !behind() {
				i := int(next.Add(1)) - 1
				if i >= len(items) {
					return
				}
				if it := items[i]; !it.planned.decided() {
					r.prepareOne(it)
				}
			}
		})
	}
	wg.Wait()
}

func (r *run) prepareOne(it *item) {
	defer func() {
		if p := recover(); p != nil {
			r.e.log.Error("converter panic", "api_id", it.id, "panic", p, "stack", string(debug.Stack()))
			it.planned = failed(msgInternal)
		}
	}()
	classic := convert.Parse(it.doc)
	key, err := classic.SkipKey()
	switch {
	case err != nil:
		it.planned = failure(err)
		return
	case key != "":
		it.planned = skipped(key)
		return
	case r.mode == Stage && it.saw.id != "" && !r.override:
		it.planned = skipped(SkipAlreadyStaged)
		return
	case r.mode == Promote:
		if it.saw.id == "" {
			it.planned = skipped(SkipNotStaged)
			return
		}
		r.preparePromotion(it) // promotion stores the staged copy; nothing to convert
		return
	}
	opts := convert.Options{DBID: it.dbID}
	switch r.mode {
	case Stage:
		opts.Staging = true
		it.stage = it.saw.dbID // an overridden staged copy keeps its db id
		if it.stage == "" {
			it.stage = store.NewDBID()
		}
		opts.DBID = it.stage
		opts.VersionDBID = func(string) string { return store.NewDBID() }
	case Direct:
		opts.VersionDBID = func(string) string { return store.NewDBID() }
	}
	res, err := classic.Convert(opts)
	if err != nil {
		it.planned = failure(err)
		return
	}
	it.res = res
	if r.mode == Direct || r.mode == Stage {
		base, stagedFrom := it.id, ""
		if r.mode == Stage {
			base, stagedFrom = res.APIID, it.id
		}
		it.made = append(it.made, r.e.records.Converted(store.API{ID: base, DBID: res.Base.DBID, Name: res.Name,
			Categories: res.Categories, StagedFrom: stagedFrom, Doc: res.Base.JSON}))
		for _, v := range res.Versions {
			it.made = append(it.made, r.e.records.Converted(store.API{ID: v.APIID, DBID: v.DBID, Name: v.Name, BaseID: base, Doc: v.JSON}))
		}
	}
}

// readPromotion reads a staged copy's versions beside it.
func readPromotion(t *store.Tx, copy store.API) (*promotion, error) {
	children, err := t.Children(copy.ID)
	if err != nil {
		return nil, err
	}
	p := &promotion{copy: copy}
	for _, id := range children {
		v, err := t.API(id)
		if err != nil {
			return nil, err
		}
		p.versions = append(p.versions, v)
	}
	return p, nil
}

// preparePromotion makes the records of a promotion: the staged copy, as
// edited since staging, without the staging prefixes and with the classic
// db id, and each version with a fresh db id; a document that cannot be
// promoted fails the API.
func (r *run) preparePromotion(it *item) {
	p := it.promo
	base, err := r.e.records.Promoted(store.API{ID: it.id, DBID: it.dbID, Categories: p.copy.Categories}, p.copy.Doc)
	if err != nil {
		it.planned = failed([]string{fmt.Sprintf("the staged copy %s cannot be promoted: %v", p.copy.ID, err)})
		return
	}
	it.made = append(it.made, base)
	for _, v := range p.versions {
		rec, err := r.e.records.Promoted(store.API{ID: strings.TrimPrefix(v.ID, convert.StagingIDPrefix), DBID: store.NewDBID(),
			BaseID: it.id, Categories: []string{}}, v.Doc)
		if err != nil {
			it.planned = failed([]string{fmt.Sprintf("the staged version %s cannot be promoted: %v", v.ID, err)})
			return
		}
		it.made = append(it.made, rec)
	}
}

// failure is the outcome of a converter error: its messages.
func failure(err error) outcome {
	var f *convert.Failure
	if errors.As(err, &f) {
		return failed(f.Messages)
	}
	return failed([]string{err.Error()})
}
