// Package migration is management's migration engine (CONTRACT §2
// "Migrate"): it selects classic APIs, converts them to Tyk OAS with the
// converter (package convert) and, per mode, stores nothing (dryRun), a
// staged copy beside the classic API (stage), the staged copy in place of
// the classic API (promote) or the conversion in place of the classic API
// (direct), and it reports what became of each API.
//
// The engine knows nothing of gRPC or REST: the handler translates a wire
// request into a Request and the Report back into the wire's JSON. Its
// errors are a *RequestError (the request breaks a rule), a store error
// (package store's sentinels, wrapped) or the context's error.
package migration

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/pkg/gcpercent"
	"github.com/gatehouse/gatehouse/pkg/tracing"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Mode is how a migration stores its conversions.
type Mode string

// The four modes of CONTRACT §2.
const (
	DryRun  Mode = "dryRun"
	Stage   Mode = "stage"
	Promote Mode = "promote"
	Direct  Mode = "direct"
)

// Request is one migration request, as the wire carries it.
type Request struct {
	Mode           Mode
	APIIDs         []string
	All            bool
	AbortOnFailure bool
	OverrideStaged bool // stage only
}

// RequestError is a request the engine refuses; Msg is the contract's message.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return e.Msg }

// Check applies the request rules, in the contract's order.
func (r Request) Check() error {
	switch r.Mode {
	case "":
		return &RequestError{"mode is required"}
	case DryRun, Stage, Promote, Direct:
	default:
		return &RequestError{"mode must be one of dryRun, stage, promote, direct"}
	}
	switch ids := len(r.APIIDs); {
	case ids > 0 && r.All:
		return &RequestError{"apiIDs and all cannot be used together"}
	case ids == 0 && !r.All:
		return &RequestError{"either apiIDs or all must be set"}
	}
	return nil
}

// chunk is how many APIs one round reads, converts and writes. Reading and
// converting the next chunks overlaps with writing the earlier ones; a small
// chunk keeps short the start (the first chunk converted, nothing to write
// yet) and the end (the last chunks written, nothing left to convert),
// when only one side has work; ahead chunks bound the memory a run holds.
const (
	chunk = 256
	ahead = 4 // converted chunks that wait for the writer, at most
)

// Write concurrency: how many per-API write transactions a run has open at
// once. The bbolt engine commits all the updates queued while it was
// committing the previous batch with one fsync, so the bound sets how many
// APIs share an fsync: at 64, 10,000 APIs took about 160 commits. At 512 (the
// bbolt engine's largest batch) the committer, done with one batch, found
// only the few writes queued since and committed them alone (25 to 33
// commits); at twice that, a full batch waits while one commits (15 to 20
// commits). An etcd cluster batches proposals itself: there,
// hundreds of open transactions per replica only queue behind each other
// until their request deadlines pass (seen as "store unavailable" failures
// with two replicas migrating at once on a loaded machine), so a run keeps
// fewer open.
const (
	// GroupCommitWrites suits an engine with group commit (bbolt).
	GroupCommitWrites = 1024
	// DefaultWrites suits every other engine (etcd).
	DefaultWrites = 32
)

// gcPercent is the collector's percent while a migration runs, when a
// memory limit is in force (package gcpercent): a 10,000-API migration
// allocates about 800 MB over a live heap of 30-100 MB, and at the default
// 100 the collector ran 26-28 times a run, at 300 8-9 times, 0.3-0.4 CPU-s
// less (BenchmarkDirect10k); the limit still bounds the heap.
const gcPercent = 300

// gcRaiseFrom is the fewest APIs for which a run raises the percent: a
// smaller run allocates too little for the collector's work to matter, and
// would only let the heap of the requests beside it grow up to the limit.
const gcRaiseFrom = chunk

// Engine runs migrations against one store.
type Engine struct {
	store   *store.Store
	records *apirecord.Maker
	log     *slog.Logger
	writes  int // per-API write transactions open at once
}

// New returns an engine over st, whose records records makes, that keeps
// up to writes per-API write transactions open at once (GroupCommitWrites or
// DefaultWrites; below 1 means 1).
func New(st *store.Store, records *apirecord.Maker, log *slog.Logger, writes int) *Engine {
	return &Engine{store: st, records: records, log: log.With("component", "migration"), writes: max(writes, 1)}
}

// Run checks req, migrates the APIs it selects and returns the report.
// Every API's writes (base, versions, removal of the classic or staged
// record) are one transaction of their own, and a chunk of APIs is many
// transactions written concurrently (the engine shares their commits). Each
// transaction re-checks what its conversion was based on, so concurrent runs
// (on any replica) never migrate an API twice.
func (e *Engine) Run(ctx context.Context, req Request) (*Report, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	start := time.Now()
	ids, err := e.selection(ctx, req)
	if err != nil {
		return nil, err
	}
	ctx, span := tracing.Tracer().Start(ctx, "migrate "+string(req.Mode), trace.WithAttributes(
		attribute.String("gatehouse.migrate.mode", string(req.Mode)), attribute.Int("gatehouse.migrate.requested", len(ids))))
	defer span.End()
	if len(ids) >= gcRaiseFrom {
		defer gcpercent.Raise(gcPercent)()
	}
	r := &run{e: e, mode: req.Mode, override: req.OverrideStaged && req.Mode == Stage, abort: req.AbortOnFailure,
		seen: map[string]bool{}, report: newReport(req.Mode)}
	if err := r.run(ctx, ids); err != nil {
		span.SetStatus(codes.Error, "migration interrupted")
		return nil, err
	}
	rep := r.report
	count(req.Mode, rep)
	span.SetAttributes(attribute.Int("gatehouse.migrate.success", len(rep.Success)),
		attribute.Int("gatehouse.migrate.failure", len(rep.Failures)), attribute.Int("gatehouse.migrate.skipped", len(rep.Skipped)))
	e.log.Info("migration", "mode", req.Mode, "requested", len(ids), "success", len(rep.Success),
		"failure", len(rep.Failures), "skipped", len(rep.Skipped), "warned", len(rep.Warnings), "aborted", rep.Aborted, "duration", time.Since(start))
	return rep, nil
}

// selection lists the requested IDs (duplicates once, in order), or with
// all: every classic API in ascending order (promote: every classic API
// with a staged copy).
func (e *Engine) selection(ctx context.Context, req Request) ([]string, error) {
	if !req.All {
		var ids []string
		seen := map[string]bool{}
		for _, id := range req.APIIDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return ids, nil
	}
	var ids []string
	err := e.store.View(ctx, func(t *store.Tx) error {
		if req.Mode != Promote {
			all, err := t.IDs(store.Classic)
			ids = all
			return err
		}
		staged, err := t.StagedClassicIDs()
		if err != nil {
			return err
		}
		var out []string
		for _, id := range staged {
			if a, err := t.API(id); err == nil && a.Kind == store.Classic {
				out = append(out, id)
			}
		}
		ids = out
		return nil
	})
	return ids, err
}

// run is one request's migration.
type run struct {
	e        *Engine
	mode     Mode
	override bool
	abort    bool
	seen     map[string]bool // classic IDs already taken, so that a staged copy's ID and its API count once
	report   *Report
}

// run migrates ids chunk by chunk: a producer goroutine reads and converts
// the next chunks while this one writes (the converter uses every core
// while the writer waits on its transactions' fsync). Without abort, the
// writes of a chunk start while those of the ones before are still in
// flight; each chunk is reported, in order, once its writes are done. The producer and
// every write are waited for before run returns, whatever happens.
func (r *run) run(ctx context.Context, ids []string) error {
	ctx, cancel := context.WithCancel(ctx)
	var producer sync.WaitGroup
	defer producer.Wait()
	defer cancel() // runs first: the producer sees it and returns
	prepared := make(chan []*item, ahead-1)
	producer.Go(func() {
		defer close(prepared)
		for ids := range slices.Chunk(ids, chunk) {
			if ctx.Err() != nil {
				return
			}
			sctx, span := tracing.Tracer().Start(ctx, "migrate read and convert", trace.WithAttributes(attribute.Int("gatehouse.migrate.apis", len(ids))))
			items := r.read(sctx, ids)
			// a converted chunk still waiting means the writes are behind: the
			// committer then gets a core of its own (prepare's other workers stop)
			r.prepare(items, func() bool { return len(prepared) > 0 })
			span.End()
			select {
			case prepared <- items:
			case <-ctx.Done():
				return
			}
		}
	})
	w := r.newWriter()
	// started are the chunks whose writes were started and not yet
	// reported, oldest first: as many as the write concurrency keeps busy
	// (at least one), so that the engine's committer always finds a full
	// batch queued.
	var started []*writing
	keep := max(1, r.e.writes/chunk)
	defer func() {
		for _, c := range started {
			c.wait()
		}
	}()
	for items := range prepared {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.mode == DryRun || r.abort { // nothing overlaps: a failure stops the run before the next chunk
			if r.mode != DryRun {
				sctx, span := tracing.Tracer().Start(ctx, "migrate write", trace.WithAttributes(attribute.Int("gatehouse.migrate.apis", len(items))))
				r.writeInOrder(sctx, items)
				span.End()
			}
			if !r.reportRound(items) {
				return nil
			}
			continue
		}
		started = append(started, w.start(ctx, items))
		for len(started) > keep {
			oldest := started[0]
			started = started[1:]
			if !r.finish(oldest) {
				return nil
			}
		}
	}
	for len(started) > 0 {
		oldest := started[0]
		started = started[1:]
		if !r.finish(oldest) {
			return nil
		}
	}
	return ctx.Err()
}

// finish waits for a chunk's writes and reports it; it returns false when
// the run stops.
func (r *run) finish(c *writing) bool {
	c.wait()
	return r.reportRound(c.items)
}

// reportRound adds a written chunk to the report; it returns false when the
// run stops on a failure.
func (r *run) reportRound(items []*item) bool {
	for _, it := range items {
		o := it.planned
		if !o.decided() {
			o = it.final
		}
		if r.mode == DryRun && !o.decided() {
			o = outcome{ok: true}
		}
		if !o.decided() { // not reached: an earlier API stopped the run
			return false
		}
		r.report.add(it, o)
		if o.failure != nil && r.abort {
			r.report.Aborted = true
			return false
		}
	}
	return true
}
