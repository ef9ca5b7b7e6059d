package migration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/kvtest"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

var bg = context.Background()

// newStore opens a store on a fresh bbolt file whose indexes are checked at
// cleanup. Every update function runs twice (kvtest.Twice).
func newStore(t testing.TB) *store.Store {
	t.Helper()
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(bg, kvtest.Twice(e))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Check(bg); err != nil {
			t.Errorf("store consistency: %v", err)
		}
		st.Close()
	})
	return st
}

func newEngine(st *store.Store) *Engine {
	return New(st, apirecord.New(st.OrgID(), nil), slog.New(slog.NewTextHandler(io.Discard, nil)), GroupCommitWrites)
}

// classic is a classic definition the converter accepts: keyless, one
// listen path, and with versions, a header-versioned API with a default v1
// and a child v2.
func classic(id, name string, versions bool, extra map[string]any) []byte {
	def := map[string]any{
		"api_id": id, "name": name, "active": true, "use_keyless": true,
		"proxy": map[string]any{"listen_path": "/" + id + "/", "target_url": "http://upstream.test/", "strip_listen_path": true},
		"version_data": map[string]any{"not_versioned": true, "default_version": "",
			"versions": map[string]any{"Default": map[string]any{"name": "Default"}}},
	}
	if versions {
		def["definition"] = map[string]any{"location": "header", "key": "x-api-version"}
		def["version_data"] = map[string]any{"not_versioned": false, "default_version": "v1",
			"versions": map[string]any{"v1": map[string]any{"name": "v1"}, "v2": map[string]any{"name": "v2"}}}
	}
	for k, v := range extra {
		def[k] = v
	}
	b, err := json.Marshal(def)
	if err != nil {
		panic(err)
	}
	return b
}

// seed stores classic definitions under their api_id with fresh db ids.
func seed(t testing.TB, st *store.Store, docs ...[]byte) {
	t.Helper()
	err := st.Update(bg, func(tx *store.Tx) error {
		for _, d := range docs {
			var head struct {
				APIID string `json:"api_id"`
			}
			json.Unmarshal(d, &head)
			if err := tx.PutAPI(store.API{ID: head.APIID, DBID: store.NewDBID(), Kind: store.Classic, Doc: d}, store.AnyRevision); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func get(t testing.TB, st *store.Store, id string) (store.API, error) {
	t.Helper()
	var a store.API
	err := st.View(bg, func(tx *store.Tx) (err error) { a, err = tx.API(id); return err })
	return a, err
}

// summary is a report reduced to what the tables compare.
type summary struct {
	success, failed, skipped []string // IDs; skipped as "id:key"
	staged                   []string // "classic→copy"
	warned                   []string // "id:number of warnings"
	aborted                  bool
}

func summarize(r *Report) summary {
	var s summary
	s.success = r.Success
	for _, f := range r.Failures {
		s.failed = append(s.failed, f.APIID)
	}
	for _, k := range r.Skipped {
		s.skipped = append(s.skipped, k.APIID+":"+k.Key)
	}
	for _, p := range r.Staged {
		s.staged = append(s.staged, p.ClassicAPIID+"→"+p.OASAPIID)
	}
	for _, w := range r.Warnings {
		s.warned = append(s.warned, fmt.Sprintf("%s:%d", w.APIID, len(w.Messages)))
	}
	s.aborted = r.Aborted
	return s
}

func (s summary) String() string {
	return fmt.Sprintf("success %q failed %q skipped %q staged %q warned %q aborted %v", s.success, s.failed, s.skipped, s.staged,
		s.warned, s.aborted)
}

func equal(a, b summary) bool {
	return slices.Equal(a.success, b.success) && slices.Equal(a.failed, b.failed) && slices.Equal(a.skipped, b.skipped) &&
		slices.Equal(a.staged, b.staged) && slices.Equal(a.warned, b.warned) && a.aborted == b.aborted
}

func TestRequestRules(t *testing.T) {
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{APIIDs: []string{"a"}}, "mode is required"},
		{Request{Mode: "move", APIIDs: []string{"a"}}, "mode must be one of dryRun, stage, promote, direct"},
		{Request{Mode: Direct, APIIDs: []string{"a"}, All: true}, "apiIDs and all cannot be used together"},
		{Request{Mode: Direct}, "either apiIDs or all must be set"},
		{Request{Mode: Direct, APIIDs: []string{}}, "either apiIDs or all must be set"},
		{Request{Mode: Stage, All: true}, ""},
		{Request{Mode: DryRun, APIIDs: []string{"a"}, OverrideStaged: true}, ""},
	} {
		_, err := newEngine(newStore(t)).Run(context.Background(), c.req)
		var re *RequestError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want no error", c.req, err)
		case c.want != "" && (!errors.As(err, &re) || re.Msg != c.want):
			t.Errorf("%+v: %v, want RequestError %q", c.req, err, c.want)
		}
	}
}

// TestOutcomes runs each mode over one store state and compares the report.
func TestOutcomes(t *testing.T) {
	state := func(t *testing.T) *store.Store {
		st := newStore(t)
		seed(t, st,
			classic("plain", "Plain #one #two", false, nil),
			classic("versioned", "Versioned", true, nil),
			classic("expiring", "Expiring", false, map[string]any{"version_data": map[string]any{"not_versioned": true,
				"versions": map[string]any{"Default": map[string]any{"name": "Default", "expires": "3000-01-02 15:04"}}}}),
			classic("gql", "GraphQL", false, map[string]any{"graphql": map[string]any{"enabled": true}}),
			classic("tcp", "TCP", false, map[string]any{"protocol": "tcp"}),
			classic("lossy", "Lossy", true, map[string]any{"definition": map[string]any{"location": "cookie"}}),
			[]byte(`{"api_id":"broken","name":"Broken","active":"yes"}`),
		)
		if err := st.Update(bg, func(tx *store.Tx) error {
			return tx.PutAPI(store.API{ID: "oas", DBID: store.NewDBID(), Kind: store.OAS,
				Doc: []byte(`{"openapi":"3.0.3","info":{"title":"O","version":"1"},"paths":{},"x-tyk-api-gateway":{"info":{"id":"oas","name":"O"}}}`)}, store.AnyRevision)
		}); err != nil {
			t.Fatal(err)
		}
		return st
	}
	all := []string{"plain", "versioned", "expiring", "gql", "tcp", "lossy", "broken", "oas", "nope", "plain"}
	// versioned: a request naming an unknown version is answered 404 instead of 403; expiring: the
	// X-Tyk-Api-Expires header of its Default version is no longer sent.
	warned := []string{"versioned:1", "expiring:1"}
	for _, c := range []struct {
		name string
		req  Request
		want summary
	}{
		{"dryRun", Request{Mode: DryRun, APIIDs: all}, summary{
			success: []string{"plain", "versioned", "expiring"}, failed: []string{"lossy", "broken", "nope"},
			skipped: []string{"gql:is_graphql", "tcp:is_tcp", "oas:already_migrated"}, warned: warned}},
		{"direct", Request{Mode: Direct, APIIDs: all}, summary{
			success: []string{"plain", "versioned", "expiring"}, failed: []string{"lossy", "broken", "nope"},
			skipped: []string{"gql:is_graphql", "tcp:is_tcp", "oas:already_migrated"}, warned: warned}},
		{"direct all", Request{Mode: Direct, All: true}, summary{
			success: []string{"expiring", "plain", "versioned"}, failed: []string{"broken", "lossy"},
			skipped: []string{"gql:is_graphql", "tcp:is_tcp"}, warned: []string{"expiring:1", "versioned:1"}}},
		{"abort", Request{Mode: Direct, APIIDs: all, AbortOnFailure: true}, summary{
			success: []string{"plain", "versioned", "expiring"}, failed: []string{"lossy"},
			skipped: []string{"gql:is_graphql", "tcp:is_tcp"}, warned: warned, aborted: true}},
		{"stage", Request{Mode: Stage, APIIDs: []string{"plain", "versioned", "oas"}}, summary{
			success: []string{"plain", "versioned"}, skipped: []string{"oas:already_migrated"},
			staged: []string{"plain→staging-plain", "versioned→staging-versioned"}, warned: []string{"versioned:1"}}},
		{"promote unstaged", Request{Mode: Promote, APIIDs: []string{"plain", "nope"}}, summary{
			failed: []string{"nope"}, skipped: []string{"plain:not_staged"}}},
		{"promote all, none staged", Request{Mode: Promote, All: true}, summary{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := state(t)
			rep, err := newEngine(st).Run(context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(rep); !equal(got, c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
			var decoded struct {
				Success struct {
					Warnings []struct {
						APIID   string   `json:"apiID"`
						Message []string `json:"message"`
					} `json:"warnings"`
				} `json:"success"`
			}
			if err := json.Unmarshal(rep.JSON(), &decoded); err != nil {
				t.Fatalf("report JSON: %v\n%s", err, rep.JSON())
			}
			// success.warnings is always present, [] when no API has one, and says what the report holds.
			if ws := decoded.Success.Warnings; ws == nil || len(ws) != len(rep.Warnings) {
				t.Errorf("success.warnings = %v, want %d entries: %s", ws, len(rep.Warnings), rep.JSON())
			} else {
				for i, w := range ws {
					if w.APIID != rep.Warnings[i].APIID || !slices.Equal(w.Message, rep.Warnings[i].Messages) {
						t.Errorf("success.warnings[%d] = %v, want %v", i, w, rep.Warnings[i])
					}
				}
			}
			if c.req.Mode == DryRun {
				if len(rep.Definitions) != 3 || len(rep.Definitions[1].Versions) != 1 {
					t.Errorf("dryRun: %d definitions", len(rep.Definitions))
				}
				if a, _ := get(t, st, "plain"); a.Kind != store.Classic {
					t.Error("dryRun stored something")
				}
			} else if len(rep.Definitions) != 0 {
				t.Errorf("%s reported definitions", c.req.Mode)
			}
		})
	}
}

// TestDirectStoresTheConversion checks what a direct migration leaves in the
// store: the classic API's ID and db id, the converter's categories and
// name, a child per version with its own db id written in its document.
func TestDirectStoresTheConversion(t *testing.T) {
	st := newStore(t)
	seed(t, st, classic("v", "Shop #retail #retail", true, nil))
	before, _ := get(t, st, "v")
	rep, err := newEngine(st).Run(context.Background(), Request{Mode: Direct, APIIDs: []string{"v"}})
	if err != nil || len(rep.Success) != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
	base, err := get(t, st, "v")
	if err != nil || base.Kind != store.OAS || base.DBID != before.DBID || base.Name != "Shop #retail #retail" || !slices.Equal(base.Categories, []string{"retail"}) {
		t.Fatalf("base = %+v, %v", base, err)
	}
	if !bytes.Contains(base.Doc, []byte(`"dbId":"`+before.DBID+`"`)) {
		t.Errorf("base document lacks its db id: %s", base.Doc)
	}
	childID := convert.ChildID("v", "v2")
	child, err := get(t, st, childID)
	if err != nil || child.BaseID != "v" || child.DBID == "" || child.DBID == base.DBID || !bytes.Contains(child.Doc, []byte(`"dbId":"`+child.DBID+`"`)) {
		t.Fatalf("child = %+v, %v", child, err)
	}
}

// TestStagePromote stages, edits the staged copy, stages again (skipped,
// then overridden), and promotes.
func TestStagePromote(t *testing.T) {
	st := newStore(t)
	seed(t, st, classic("s", "Staged #cat", true, nil))
	classicAPI, _ := get(t, st, "s")
	e := newEngine(st)
	run := func(req Request) summary {
		t.Helper()
		rep, err := e.Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return summarize(rep)
	}
	if got := run(Request{Mode: Stage, APIIDs: []string{"s"}}); !slices.Equal(got.staged, []string{"s→staging-s"}) {
		t.Fatalf("stage: %v", got)
	}
	first, _ := get(t, st, "staging-s")
	if first.StagedFrom != "s" || first.DBID == classicAPI.DBID || first.Name != "[staged] Staged #cat" {
		t.Fatalf("staged copy: %+v", first)
	}
	if got := run(Request{Mode: Stage, APIIDs: []string{"staging-s"}}); !slices.Equal(got.skipped, []string{"s:already_staged"}) {
		t.Fatalf("stage again: %v", got)
	}
	if got := run(Request{Mode: Stage, APIIDs: []string{"s"}, OverrideStaged: true}); len(got.success) != 1 {
		t.Fatalf("stage with override: %v", got)
	}
	second, _ := get(t, st, "staging-s")
	if second.DBID != first.DBID {
		t.Errorf("an overridden staged copy changed db id: %s → %s", first.DBID, second.DBID)
	}
	// an edit of the staged copy survives the promotion
	edited := bytes.Replace(second.Doc, []byte(`http://upstream.test/`), []byte(`http://edited.test/`), 1)
	if err := st.Update(bg, func(tx *store.Tx) error { second.Doc = edited; return tx.PutAPI(second, store.AnyRevision) }); err != nil {
		t.Fatal(err)
	}
	if got := run(Request{Mode: Promote, All: true}); !slices.Equal(got.success, []string{"s"}) {
		t.Fatalf("promote: %v", got)
	}
	promoted, _ := get(t, st, "s")
	if promoted.Kind != store.OAS || promoted.DBID != classicAPI.DBID || !bytes.Contains(promoted.Doc, []byte(`http://edited.test/`)) ||
		bytes.Contains(promoted.Doc, []byte("staging")) || !slices.Equal(promoted.Categories, []string{"cat"}) {
		t.Fatalf("promoted: %+v %s", promoted, promoted.Doc)
	}
	for _, gone := range []string{"staging-s", convert.StagingIDPrefix + convert.ChildID("s", "v2")} {
		if _, err := get(t, st, gone); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s still stored: %v", gone, err)
		}
	}
	if c, err := get(t, st, convert.ChildID("s", "v2")); err != nil || c.BaseID != "s" {
		t.Errorf("promoted child: %+v %v", c, err)
	}
}

// TestConcurrentRunsMigrateOnce starts several direct migrations of the
// same APIs at once: each API is migrated by exactly one of them.
func TestConcurrentRunsMigrateOnce(t *testing.T) {
	const n, runs = 300, 4
	st := newStore(t)
	var docs [][]byte
	for i := range n {
		docs = append(docs, classic(fmt.Sprintf("api%04d", i), "A", i%3 == 0, nil))
	}
	seed(t, st, docs...)
	reps := make([]*Report, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			var err error
			if reps[i], err = newEngine(st).Run(context.Background(), Request{Mode: Direct, All: true}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	migrated := map[string]int{}
	for _, r := range reps {
		for _, id := range r.Success {
			migrated[id]++
		}
		for _, f := range r.Failures {
			t.Errorf("failure %s: %q", f.APIID, f.Messages)
		}
	}
	for i := range n {
		if id := fmt.Sprintf("api%04d", i); migrated[id] != 1 {
			t.Errorf("%s migrated %d times", id, migrated[id])
		}
	}
}

// TestCanceledRunLeavesNoGoroutine cancels a large run: Run returns the
// context's error and its producer has ended.
func TestCanceledRunLeavesNoGoroutine(t *testing.T) {
	st := newStore(t)
	var docs [][]byte
	for i := range 3 * chunk {
		docs = append(docs, classic(fmt.Sprintf("api%05d", i), "A", false, nil))
	}
	seed(t, st, docs...)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newEngine(st).Run(ctx, Request{Mode: Direct, All: true}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run on a canceled context = %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	newEngine(st).Run(ctx, Request{Mode: DryRun, All: true})
	// A goroutine that has said it is done may still be on its way out when
	// Run returns: wait for the count (a hang bound, not a speed goal); a
	// leaked goroutine stays.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(5 * time.Millisecond)
	}
	if after > before {
		t.Errorf("%d goroutines 5 s after Run returned, %d before", after, before)
	}
	if a, _ := get(t, st, "api00000"); !strings.HasPrefix(string(a.Doc), "{") {
		t.Errorf("store unreadable after a canceled run")
	}
}

// limited is an engine that refuses transactions writing more than max
// bytes, as etcd refuses requests over --max-request-bytes.
type limited struct {
	kv.Engine
	max int
}

func (e limited) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	return e.Engine.Update(ctx, func(w kv.WriteTx) error {
		c := &countingTx{WriteTx: w}
		if err := fn(c); err != nil {
			return err
		}
		if c.bytes > e.max {
			return fmt.Errorf("%w: %d bytes in one transaction, the limit is %d", kv.ErrTooLarge, c.bytes, e.max)
		}
		return nil
	})
}

type countingTx struct {
	kv.WriteTx
	bytes int
}

func (c *countingTx) Put(k, v []byte) error {
	c.bytes += len(k) + len(v)
	return c.WriteTx.Put(k, v)
}

// TestTooLargeFailsOneAPI migrates an API whose writes exceed the engine's
// transaction limit beside one that fits: the large one fails in the report
// with the engine's message and stays classic; the other is migrated.
func TestTooLargeFailsOneAPI(t *testing.T) {
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(bg, limited{e, 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seed(t, st, classic("small", "Small", true, nil))
	seed(t, st, classic("big", strings.Repeat("B", 6<<10), true, nil))
	rep, err := newEngine(st).Run(bg, Request{Mode: Direct, APIIDs: []string{"big", "small"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summarize(rep), (summary{success: []string{"small"}, failed: []string{"big"}, warned: []string{"small:1"}}); !equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	if msg := rep.Failures[0].Messages; len(msg) != 1 || !strings.Contains(msg[0], kv.ErrTooLarge.Error()) || !strings.Contains(msg[0], "limit") {
		t.Errorf("failure message %q does not name the limit", msg)
	}
	if a, _ := get(t, st, "big"); a.Kind != store.Classic {
		t.Error("the API too large to migrate is no longer classic")
	}
	if _, err := get(t, st, convert.ChildID("big", "v2")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a version of the API too large to migrate was stored: %v", err)
	}
	if err := st.Check(bg); err != nil {
		t.Error(err)
	}
}

// conflicting is an engine whose read-write transactions that write the
// API key named by api fail as a transaction that kept losing to other
// writers does (kv.ErrConflict), as etcd's after its retries.
type conflicting struct {
	kv.Engine
	api   string
	armed *atomic.Bool // off while the test seeds the store
}

func (e conflicting) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	return e.Engine.Update(ctx, func(w kv.WriteTx) error {
		c := &watchingTx{WriteTx: w, key: "api/" + e.api}
		if err := fn(c); err != nil {
			return err
		}
		if c.hit && e.armed.Load() {
			return fmt.Errorf("commit: %w", kv.ErrConflict)
		}
		return nil
	})
}

type watchingTx struct {
	kv.WriteTx
	key string
	hit bool
}

func (c *watchingTx) Put(k, v []byte) error {
	c.hit = c.hit || string(k) == c.key
	return c.WriteTx.Put(k, v)
}

// TestConflictFailsOneAPI: an API whose write keeps conflicting fails with
// the store's conflict message (503, retry later, as every service answers
// it: grpcserver.CallerError), never "internal error", and stays classic.
func TestConflictFailsOneAPI(t *testing.T) {
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	st, err := store.Open(bg, conflicting{e, "busy", &armed})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seed(t, st, classic("calm", "Calm", true, nil))
	seed(t, st, classic("busy", "Busy", true, nil))
	armed.Store(true)
	rep, err := newEngine(st).Run(bg, Request{Mode: Direct, APIIDs: []string{"busy", "calm"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].APIID != "busy" {
		t.Fatalf("failures %+v, want busy alone", rep.Failures)
	}
	if msg := rep.Failures[0].Messages; len(msg) != 1 || msg[0] != kv.ErrConflict.Error() {
		t.Errorf("failure message %q, want %q", msg, kv.ErrConflict.Error())
	}
	if a, _ := get(t, st, "busy"); a.Kind != store.Classic {
		t.Error("the API whose write conflicted is no longer classic")
	}
}

// TestPrepareWhileBehind: however often the writes lag (prepare's behind),
// every item of a chunk is converted, once.
func TestPrepareWhileBehind(t *testing.T) {
	st := newStore(t)
	r := &run{e: newEngine(st), mode: Direct, seen: map[string]bool{}, report: newReport(Direct)}
	for _, behind := range []func(*atomic.Int32) bool{
		func(*atomic.Int32) bool { return false },
		func(*atomic.Int32) bool { return true },
		func(n *atomic.Int32) bool { return n.Add(1)%3 == 0 },
	} {
		items := make([]*item, 300)
		for i := range items {
			id := fmt.Sprintf("%032x", i+1)
			items[i] = &item{id: id, dbID: store.NewDBID(), doc: classic(id, "API", i%2 == 0, nil)}
		}
		var calls atomic.Int32
		r.prepare(items, func() bool { return behind(&calls) })
		for _, it := range items {
			if it.planned.decided() || it.res == nil || len(it.made) != 1+len(it.res.Versions) {
				t.Fatalf("%s not converted: planned %+v, made %d", it.id, it.planned, len(it.made))
			}
		}
	}
}
