package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// openapi describes three operations the way protoc-gen-openapiv2 does.
const openapi = `{"paths":{
 "/api/things":{"post":{"operationId":"Things_Create","responses":{"201":{},"default":{}}}},
 "/api/things/{value}":{"get":{"operationId":"Things_Get","responses":{"200":{}}},
  "delete":{"operationId":"Things_Delete","responses":{"204":{}}}}}}`

func newLog(t testing.TB, limits config.Audit) (*Log, kv.Engine) {
	t.Helper()
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	return logOn(t, e, limits)
}

// newEtcdLog is newLog on an embedded single-member etcd.
func newEtcdLog(t testing.TB) (*Log, kv.Engine) {
	t.Helper()
	c := etcdtest.Start(t, 1)
	e, err := etcdkv.Open(context.Background(), etcdkv.Config{Endpoints: c.Endpoints(), Prefix: "/audit-test/"})
	if err != nil {
		t.Fatal(err)
	}
	return logOn(t, e, config.Audit{})
}

func logOn(t testing.TB, e kv.Engine, limits config.Audit) (*Log, kv.Engine) {
	t.Helper()
	t.Cleanup(func() { e.Close() })
	l, err := New(e, Options{Service: "test", OpenAPI: []byte(openapi), Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return l, Engine(e)
}

// call runs method through the interceptor as an authenticated (or, with
// user "", anonymous) caller; handler does the call's work.
func call(l *Log, method, user string, handler func(ctx context.Context) error) error {
	info := &grpc.UnaryServerInfo{FullMethod: "/test.v1.Things/" + method}
	_, err := l.Interceptor()(context.Background(), wrapperspb.String("obj-1"), info, func(ctx context.Context, _ any) (any, error) {
		if user == "" {
			return nil, status.Error(codes.Unauthenticated, "no key")
		}
		auditctx.SetCaller(ctx, user, user+"@example.com")
		return nil, handler(ctx)
	})
	return err
}

// list returns q's entries and the number of pages of matches.
func list(t *testing.T, l *Log, q Query) ([]Entry, int) {
	t.Helper()
	out, total, err := l.List(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	size := q.PageSize
	if size <= 0 {
		size = 10
	}
	if q.Page <= 0 {
		return out, min(1, total)
	}
	return out, (total + size - 1) / size
}

func writeThing(e kv.Engine, fail error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		return e.Update(ctx, func(w kv.WriteTx) error {
			if err := w.Put([]byte("thing/1"), []byte("x")); err != nil {
				return err
			}
			return fail
		})
	}
}

func TestWritesAreAuditedReadsAndAnonymousAreNot(t *testing.T) {
	l, e := newLog(t, config.Audit{})
	checkWritesAudited(t, l, e)
}

func TestWritesAreAuditedOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd")
	}
	l, e := newEtcdLog(t)
	checkWritesAudited(t, l, e)
	checkEntryCommitsWithTheWrite(t, l, e)
}

func checkWritesAudited(t *testing.T, l *Log, e kv.Engine) {
	conflict := rest.Error(codes.AlreadyExists, http.StatusConflict, "taken")
	steps := []struct {
		method, user string
		handler      func(context.Context) error
	}{
		{"Create", "u1", writeThing(e, nil)},                         // committed: entry in the write's transaction
		{"Create", "u1", writeThing(e, conflict)},                    // rolled back: only the refusal
		{"Delete", "u2", func(context.Context) error { return nil }}, // wrote nothing: entry of its own
		{"Get", "u1", writeThing(e, nil)},                            // a read route: nothing
		{"Create", "", writeThing(e, nil)},                           // anonymous: only counted
	}
	for _, s := range steps {
		call(l, s.method, s.user, s.handler)
	}
	got, pages := list(t, l, Query{Page: 1})
	want := []struct {
		user, action string
		status       int
	}{{"u2", "DELETE /api/things/{value}", 204}, {"u1", "POST /api/things", 409}, {"u1", "POST /api/things", 201}}
	if len(got) != len(want) || pages != 1 {
		t.Fatalf("got %d entries (%d pages), want %d: %+v", len(got), pages, len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.UserID != w.user || g.UserEmail != w.user+"@example.com" || g.Action != w.action || g.Status != w.status || g.ObjectID == "" && w.action != "POST /api/things" {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}
	if got[0].ObjectID != "obj-1" {
		t.Errorf("object id %q, want the path's obj-1", got[0].ObjectID)
	}
}

// TestEntryCommitsWithTheWrite: the entry of a committed write is in the
// write's own transaction (it is there although storing it apart would
// fail), and a failed write's entry never says success.
func TestEntryCommitsWithTheWrite(t *testing.T) {
	l, e := newLog(t, config.Audit{})
	checkEntryCommitsWithTheWrite(t, l, e)
}

func checkEntryCommitsWithTheWrite(t *testing.T, l *Log, e kv.Engine) {
	before, _, _ := l.List(context.Background(), Query{})
	var sawEntry bool
	err := call(l, "Create", "u1", func(ctx context.Context) error {
		if err := writeThing(e, nil)(ctx); err != nil {
			return err
		}
		// Inside the request, after the commit: the entry is already stored.
		return e.View(ctx, func(r kv.ReadTx) error {
			n, err := r.Count(Prefix)
			sawEntry = n == len(before)+1
			return err
		})
	})
	if err != nil || !sawEntry {
		t.Fatalf("after the request's commit the entry was stored: %v (err %v)", sawEntry, err)
	}
	boom := errors.New("boom")
	call(l, "Create", "u1", writeThing(e, boom))
	got, _ := list(t, l, Query{Page: 1})
	if len(got) != len(before)+2 || got[0].Status != 500 || got[1].Status != 201 {
		t.Fatalf("entries %+v, want a 500 and a 201 on top of %d", got, len(before))
	}
}

func TestRefusedRequestsAreCappedPerCaller(t *testing.T) {
	l, _ := newLog(t, config.Audit{})
	deny := func(context.Context) error { return rest.Error(codes.PermissionDenied, 403, "no") }
	for range RefusedPerCaller + 20 {
		call(l, "Delete", "noisy", deny)
	}
	call(l, "Delete", "quiet", deny)
	if _, pages := list(t, l, Query{UserID: "noisy", Page: 1, PageSize: 1}); pages != RefusedPerCaller {
		t.Errorf("%d refused entries of one caller stored, want %d", pages, RefusedPerCaller)
	}
	if got, _ := list(t, l, Query{UserID: "quiet"}); len(got) != 1 {
		t.Errorf("another caller's refusal: %d entries, want 1", len(got))
	}
}

// seed stores entries one second apart, the newest at base.
func seed(t testing.TB, e kv.Engine, base time.Time, n int) {
	t.Helper()
	err := e.Update(context.Background(), func(w kv.WriteTx) error {
		for i := range n {
			at := base.Add(-time.Duration(i) * time.Second)
			en := Entry{ID: newID(at), Time: at, UserID: fmt.Sprintf("u%d", i%3), Action: []string{"POST /a", "DELETE /a/{id}"}[i%2], Status: 200}
			if err := putEntry(w, en); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestListPagesAndFilters(t *testing.T) {
	l, e := newLog(t, config.Audit{})
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	seed(t, e, base, 25)
	cases := []struct {
		name      string
		q         Query
		n, pages  int
		firstTime time.Time
	}{
		{"first page, newest first", Query{Page: 1}, 10, 3, base},
		{"last page", Query{Page: 3}, 5, 3, base.Add(-20 * time.Second)},
		{"all", Query{Page: 0}, 25, 1, base},
		{"one user", Query{Page: 1, UserID: "u1"}, 8, 1, base.Add(-time.Second)},
		{"one action", Query{Page: 2, Action: "POST /a"}, 3, 2, base.Add(-20 * time.Second)},
		{"time range, both ends included", Query{Page: 1, From: base.Add(-5 * time.Second), To: base.Add(-2 * time.Second)}, 4, 1, base.Add(-2 * time.Second)},
		{"user and range", Query{Page: 1, UserID: "u0", From: base.Add(-9 * time.Second)}, 4, 1, base},
	}
	for _, c := range cases {
		got, pages := list(t, l, c.q)
		if len(got) != c.n || pages != c.pages || (len(got) > 0 && !got[0].Time.Equal(c.firstTime)) {
			t.Errorf("%s: %d entries, %d pages, first %v; want %d, %d, %v", c.name, len(got), pages, got[0].Time, c.n, c.pages, c.firstTime)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Time.After(got[i-1].Time) {
				t.Errorf("%s: not newest first at %d", c.name, i)
			}
		}
	}
}

func TestExpiry(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	l, e := newLog(t, config.Audit{Retention: time.Hour, MaxEntries: 1000})
	seed(t, e, now.Add(-59*time.Minute), 1200) // 61 within the hour (the last at exactly an hour), the rest older
	n, err := l.Expire(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := list(t, l, Query{})
	if n != 1200-61 || len(got) != 61 {
		t.Fatalf("expired %d, kept %d; want 1139 expired (over an hour old), 61 kept", n, len(got))
	}

	l, e = newLog(t, config.Audit{Retention: 24 * time.Hour, MaxEntries: 700})
	seed(t, e, now, 1200)
	if n, err = l.Expire(context.Background(), now); err != nil || n != 500 {
		t.Fatalf("expired %d (%v), want the 500 oldest beyond the limit", n, err)
	}
	got, _ = list(t, l, Query{})
	if len(got) != 700 || !got[0].Time.Equal(now) || !got[699].Time.Equal(now.Add(-699*time.Second)) {
		t.Fatalf("kept %d entries from %v to %v, want the newest 700", len(got), got[0].Time, got[len(got)-1].Time)
	}
	if err := e.View(context.Background(), func(r kv.ReadTx) error {
		n, err := r.Count(OldestPrefix)
		if n != 700 {
			return fmt.Errorf("the oldest-first index holds %d keys, want 700", n)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestEntryPutOnceWhileUnchanged: a request committing several transactions
// puts its entry in the first and not again while the entry is the one
// committed (a migration commits one transaction per API); a new object
// puts it again. The entry is deleted behind the audited engine's back
// after each commit, so that the test sees which transaction put it.
func TestEntryPutOnceWhileUnchanged(t *testing.T) {
	raw, err := boltkv.Open(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	l, e := logOn(t, raw, config.Audit{})
	take := func() []Entry { // the entries stored, deleted
		var out []Entry
		err := raw.Update(context.Background(), func(w kv.WriteTx) error {
			out = nil
			return w.Scan([]byte(Prefix), nil, func(k, v []byte) error {
				var en Entry
				if err := json.Unmarshal(v, &en); err != nil {
					return err
				}
				out = append(out, en)
				return w.Delete(k)
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var first, again, changed []Entry
	err = call(l, "Create", "u1", func(ctx context.Context) error {
		for _, step := range []*[]Entry{&first, &again, &again} {
			if err := writeThing(e, nil)(ctx); err != nil {
				return err
			}
			*step = append(*step, take()...)
		}
		auditctx.SetObject(ctx, "obj-2")
		if err := writeThing(e, nil)(ctx); err != nil {
			return err
		}
		changed = take()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || first[0].Status != 201 || first[0].UserID != "u1" {
		t.Errorf("the first transaction put %+v, want the entry of u1's request", first)
	}
	if len(again) != 0 {
		t.Errorf("the next two transactions put the unchanged entry again: %+v", again)
	}
	if len(changed) != 1 || changed[0].ObjectID != "obj-2" || changed[0].ID != first[0].ID {
		t.Errorf("after a new object the transaction put %+v, want the same entry with obj-2", changed)
	}
}
