package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/migrate"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Migration modes (specification 2.5).
const (
	modeDryRun  = "dryRun"
	modeStage   = "stage"
	modePromote = "promote"
	modeDirect  = "direct"
)

// migrateChunk is how many APIs one round converts and then writes in one
// transaction: one fsync per chunk instead of one per API.
const migrateChunk = 1000

// Skip keys and their messages (CONTRACT §2 "Migrate").
const (
	skipAlreadyStaged = "already_staged"
	skipNotStaged     = "not_staged"
)

var skipMessages = map[string]string{
	migrate.SkipAlreadyMigrated: "API is already a Tyk OAS API",
	migrate.SkipGraphQL:         "GraphQL APIs are not migrated to Tyk OAS",
	migrate.SkipTCP:             "TCP and TLS APIs are not migrated to Tyk OAS",
	skipAlreadyStaged:           "API already has a staged copy; set overrideStaged to replace it",
	skipNotStaged:               "API has no staged copy; stage it first",
}

var (
	msgNotFound = []string{"API not found"}
	msgChanged  = []string{"API changed while it was being migrated; try again"}
	msgInternal = []string{"internal error"}
)

func migrateError(msg string) error {
	return rest.Error(codes.InvalidArgument, http.StatusBadRequest, msg)
}

// checkMigrateRequest applies the request rules, in the contract's order.
func checkMigrateRequest(req *managementv1.MigrateRequest) error {
	switch req.GetMode() {
	case "":
		return migrateError("mode is required")
	case modeDryRun, modeStage, modePromote, modeDirect:
	default:
		return migrateError("mode must be one of dryRun, stage, promote, direct")
	}
	switch ids := len(req.GetApiIds()); {
	case ids > 0 && req.GetAll():
		return migrateError("apiIDs and all cannot be used together")
	case ids == 0 && !req.GetAll():
		return migrateError("either apiIDs or all must be set")
	}
	return nil
}

// Migrate converts classic APIs to Tyk OAS in one of four modes and answers
// the migration report. Each API's writes (base, versions, removal of the
// classic or staged record) commit together; many APIs share a transaction.
// Every write re-checks, inside its transaction, what the conversion was
// based on, so concurrent requests never migrate an API twice.
func (s *Server) Migrate(ctx context.Context, req *managementv1.MigrateRequest) (*managementv1.MigrateResponse, error) {
	if err := checkMigrateRequest(req); err != nil {
		return nil, err
	}
	start := time.Now()
	ids, err := s.migrationIDs(req)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	run := &migration{s: s, mode: req.GetMode(), override: req.GetOverrideStaged(), abort: req.GetAbortOnFailure(), seen: map[string]bool{}}
	if err := run.run(ctx, ids); err != nil {
		return nil, err
	}
	rep := &run.report
	s.log.Info("migration", "mode", run.mode, "requested", len(ids), "success", len(rep.success),
		"failure", len(rep.failures), "skipped", len(rep.skipped), "aborted", rep.aborted, "duration", time.Since(start))
	return &managementv1.MigrateResponse{Report: &httpbody.HttpBody{ContentType: "application/json", Data: rep.encode()}}, nil
}

// migrationIDs lists the requested IDs (duplicates once, in order), or with
// all: every classic API in ascending order (promote: every classic API
// with a staged copy).
func (s *Server) migrationIDs(req *managementv1.MigrateRequest) ([]string, error) {
	if !req.GetAll() {
		var ids []string
		seen := map[string]bool{}
		for _, id := range req.GetApiIds() {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return ids, nil
	}
	var ids []string
	err := s.store.View(func(t *store.Tx) error {
		if req.GetMode() != modePromote {
			ids = t.IDs(store.Classic)
			return nil
		}
		for _, id := range t.StagedClassicIDs() {
			if a, err := t.API(id); err == nil && a.Kind == store.Classic {
				ids = append(ids, id)
			}
		}
		return nil
	})
	return ids, err
}

// migration is one request's run.
type migration struct {
	s        *Server
	mode     string
	override bool
	abort    bool
	seen     map[string]bool // classic IDs already taken, so that a staged copy's ID and its API count once (reader only)
	report   migrationReport
}

// item is one API of a round.
type item struct {
	id      string    // the classic api_id (a staged copy's ID resolved to it)
	classic store.API // the stored classic API, as the conversion read it
	res     *migrate.Result
	planned outcome // decided while reading and converting; zero: ready to write
	final   outcome // decided while writing
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

// run migrates ids chunk by chunk. Reading and converting the next chunk
// overlaps with writing the current one: the converter uses every core while
// the writer waits on its transaction's fsync. That is safe because every
// write re-checks what its conversion read.
func (m *migration) run(ctx context.Context, ids []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prepared := make(chan []*item, 1)
	go func() {
		defer close(prepared)
		for chunk := range slices.Chunk(ids, migrateChunk) {
			items := m.read(chunk)
			if m.mode != modePromote {
				m.convert(items)
			}
			select {
			case prepared <- items:
			case <-ctx.Done():
				return
			}
		}
	}()
	for items := range prepared {
		if err := ctx.Err(); err != nil {
			return err
		}
		if m.mode != modeDryRun {
			m.write(items)
		}
		if !m.reportRound(items) {
			return nil // cancel stops the producer
		}
	}
	return ctx.Err()
}

// reportRound adds a written chunk to the report; it returns false when the
// run stops on a failure.
func (m *migration) reportRound(items []*item) bool {
	for _, it := range items {
		o := it.planned
		if !o.decided() {
			o = it.final
		}
		if m.mode == modeDryRun && !o.decided() {
			o = outcome{ok: true}
		}
		if !o.decided() { // not reached: an earlier API stopped the run
			return false
		}
		m.report.add(it, o, m.mode)
		if o.failure != nil && m.abort {
			m.report.aborted = true
			return false
		}
	}
	return true
}

// read resolves each ID in one read transaction and decides the skips and
// failures that need no conversion.
func (m *migration) read(ids []string) []*item {
	items := make([]*item, 0, len(ids))
	err := m.s.store.View(func(t *store.Tx) error {
		for _, id := range ids {
			it := &item{id: id}
			a, err := t.API(id)
			if err == nil && a.Kind == store.OAS && a.StagedFrom != "" { // a staged copy's ID means its classic API
				it.id = a.StagedFrom
				a, err = t.API(it.id)
			}
			if m.seen[it.id] {
				continue
			}
			m.seen[it.id] = true
			items = append(items, it)
			switch {
			case errors.Is(err, store.ErrNotFound):
				it.planned = failed(msgNotFound)
				continue
			case err != nil:
				m.s.log.Error("migration: read an API", "api_id", id, "err", err)
				it.planned = failed(msgInternal)
				continue
			case a.Kind != store.Classic:
				it.planned = skipped(migrate.SkipAlreadyMigrated)
				continue
			}
			it.classic = a
			key, err := migrate.Classify(a.Doc)
			_, hasStaged := t.StagedCopy(it.id)
			switch {
			case err != nil:
				it.planned = failed([]string{err.Error()})
			case key != "":
				it.planned = skipped(key)
			case m.mode == modeStage && hasStaged && !m.override:
				it.planned = skipped(skipAlreadyStaged)
			case m.mode == modePromote && !hasStaged:
				it.planned = skipped(skipNotStaged)
			}
		}
		return nil
	})
	if err != nil {
		m.s.log.Error("migration: read transaction", "err", err)
		for _, it := range items {
			if !it.planned.decided() {
				it.planned = failed(msgInternal)
			}
		}
	}
	return items
}

// convert runs the converter over the ready items on every core.
func (m *migration) convert(items []*item) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(items)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(items); i = int(next.Add(1)) - 1 {
				if it := items[i]; !it.planned.decided() {
					m.convertOne(it)
				}
			}
		})
	}
	wg.Wait()
}

func (m *migration) convertOne(it *item) {
	defer func() {
		if p := recover(); p != nil {
			m.s.log.Error("migration: converter panic", "api_id", it.id, "panic", p, "stack", string(debug.Stack()))
			it.planned = failed(msgInternal)
		}
	}()
	res, err := migrate.Convert(it.classic.Doc, migrate.Options{DBID: it.classic.DBID, Staging: m.mode == modeStage})
	var f *migrate.Failure
	switch {
	case errors.As(err, &f):
		it.planned = failed(f.Messages)
	case err != nil:
		it.planned = failed([]string{err.Error()})
	default:
		it.res = res
	}
}

// write stores the ready items in one transaction, stopping at the first
// failure when the run aborts on failure. If the transaction itself fails,
// each item is written again in its own, so that one API's storage error
// fails only that API.
func (m *migration) write(items []*item) {
	err := m.s.store.Update(func(t *store.Tx) error { return m.writeEach(t, items) })
	if err == nil {
		return
	}
	m.s.log.Error("migration: batch transaction failed; writing one API per transaction", "err", err)
	for _, it := range items {
		it.final = outcome{}
	}
	for i, it := range items {
		if it.planned.decided() {
			if it.planned.failure != nil && m.abort {
				return
			}
			continue
		}
		err := m.s.store.Update(func(t *store.Tx) error { return m.writeEach(t, items[i:i+1]) })
		if err != nil {
			m.s.log.Error("migration: write", "api_id", it.id, "err", err)
			it.final = failed(msgInternal)
		}
		if it.final.failure != nil && m.abort {
			return
		}
	}
}

// writeEach writes items in order inside t; an error aborts the transaction.
func (m *migration) writeEach(t *store.Tx, items []*item) error {
	for _, it := range items {
		if it.planned.decided() {
			if it.planned.failure != nil && m.abort {
				return nil
			}
			continue
		}
		var err error
		switch m.mode {
		case modeDirect:
			it.final, err = m.writeDirect(t, it)
		case modeStage:
			it.final, err = m.writeStage(t, it)
		case modePromote:
			it.final, err = m.writePromote(t, it)
		}
		if err != nil {
			return fmt.Errorf("api %s: %w", it.id, err)
		}
		if it.final.failure != nil && m.abort {
			return nil
		}
	}
	return nil
}

// current re-reads the classic API inside the write transaction: it must
// still be classic and, when the write is based on a conversion, unchanged.
func (m *migration) current(t *store.Tx, it *item, sameDoc bool) (store.API, outcome, error) {
	cur, err := t.API(it.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return cur, failed(msgNotFound), nil
	case err != nil:
		return cur, outcome{}, err
	case cur.Kind != store.Classic:
		return cur, skipped(migrate.SkipAlreadyMigrated), nil
	case sameDoc && !bytes.Equal(cur.Doc, it.classic.Doc):
		return cur, failed(msgChanged), nil
	}
	return cur, outcome{}, nil
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

// putVersions stores child version documents under base.
func putVersions(t *store.Tx, base string, docs []migrate.Document) error {
	for _, d := range docs {
		if err := t.PutAPI(store.API{ID: d.APIID, DBID: t.NewDBID(), Kind: store.OAS, BaseID: base, Doc: d.JSON}); err != nil {
			return err
		}
	}
	return nil
}

// writeDirect replaces the classic API in place, keeping its API ID and db id.
func (m *migration) writeDirect(t *store.Tx, it *item) (outcome, error) {
	cur, o, err := m.current(t, it, true)
	if err != nil || o.decided() {
		return o, err
	}
	if msg := versionConflict(t, it.id, documentIDs(it.res.Versions)); msg != nil {
		return failed(msg), nil
	}
	for _, old := range t.Children(it.id) { // left over from an earlier life of this ID
		if _, err := t.DeleteAPIWithVersions(old); err != nil {
			return outcome{}, err
		}
	}
	err = t.PutAPI(store.API{ID: it.id, DBID: cur.DBID, Kind: store.OAS, Categories: it.res.Categories, Doc: it.res.Base.JSON})
	if err != nil {
		return outcome{}, err
	}
	return outcome{ok: true}, putVersions(t, it.id, it.res.Versions)
}

// writeStage stores the staged copy beside the untouched classic API,
// replacing an earlier staged copy when overrideStaged is set.
func (m *migration) writeStage(t *store.Tx, it *item) (outcome, error) {
	if _, o, err := m.current(t, it, true); err != nil || o.decided() {
		return o, err
	}
	stagedID := it.res.APIID
	previous, hasPrevious := t.StagedCopy(it.id)
	switch {
	case hasPrevious && !m.override:
		return skipped(skipAlreadyStaged), nil
	case t.Exists(stagedID) && previous != stagedID:
		return failed([]string{fmt.Sprintf("API %s already exists and is not the staged copy of %s", stagedID, it.id)}), nil
	}
	if msg := versionConflict(t, stagedID, documentIDs(it.res.Versions)); msg != nil {
		return failed(msg), nil
	}
	dbID := ""
	if hasPrevious {
		old, err := t.API(previous)
		if err != nil {
			return outcome{}, err
		}
		dbID = old.DBID
		if _, err := t.DeleteAPIWithVersions(previous); err != nil {
			return outcome{}, err
		}
	}
	if dbID == "" {
		dbID = t.NewDBID()
	}
	err := t.PutAPI(store.API{ID: stagedID, DBID: dbID, Kind: store.OAS, StagedFrom: it.id, Categories: it.res.Categories, Doc: it.res.Base.JSON})
	if err != nil {
		return outcome{}, err
	}
	return outcome{ok: true, stagedID: stagedID}, putVersions(t, stagedID, it.res.Versions)
}

// writePromote replaces the classic API with its staged copy, as edited
// since staging, without the staging prefixes and with the classic db id.
func (m *migration) writePromote(t *store.Tx, it *item) (outcome, error) {
	cur, o, err := m.current(t, it, false)
	if err != nil || o.decided() {
		return o, err
	}
	stagedID, ok := t.StagedCopy(it.id)
	if !ok {
		return skipped(skipNotStaged), nil
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
	err = t.PutAPI(store.API{ID: it.id, DBID: cur.DBID, Kind: store.OAS, Categories: staged.Categories, Doc: base})
	if err != nil {
		return outcome{}, err
	}
	return outcome{ok: true}, putVersions(t, it.id, versions)
}
