package consumers_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/kvtest"
	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
	"github.com/gatehouse/gatehouse/services/portal/internal/consumers/consumerstest"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

var ctx = context.Background()

// world is a consumer service on a fresh store (every update function runs
// twice, as a retrying engine may run it) with a keys double holding the
// policies "gold" and "bronze", one product offering one plan, and an
// active developer signed in.
type world struct {
	svc     *consumers.Service
	st      *store.Store
	keys    *consumerstest.Keys
	product store.Product
	plan    store.Plan
	dev     consumers.Signed
}

func newWorld(t *testing.T, autoApprove bool) *world {
	t.Helper()
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "portal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	st, err := store.Open(ctx, kvtest.Twice(e))
	if err != nil {
		t.Fatal(err)
	}
	w := &world{st: st, keys: consumerstest.New("gold", "bronze")}
	w.svc = consumers.New(st, consumers.Options{Signup: consumers.SignupOpen, Keys: w.keys})
	if w.plan, err = w.svc.CreatePlan(ctx, "Gold", "gold", autoApprove); err != nil {
		t.Fatal(err)
	}
	if w.product, err = st.CreateProduct(ctx, store.Product{Name: "payments", PolicyIDs: []string{"bronze"}, PlanIDs: []uint32{w.plan.ID}}); err != nil {
		t.Fatal(err)
	}
	w.dev = w.signUp(t, "ana@example.com")
	return w
}

func (w *world) signUp(t *testing.T, email string) consumers.Signed {
	t.Helper()
	if _, err := w.svc.Register(ctx, email, "Ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	id, err := w.svc.Login(ctx, email, "correct horse battery", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	sg, err := w.svc.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return sg
}

// approved files a request for the product's plan for a new app and approves it.
func (w *world) approved(t *testing.T) (store.App, string) {
	t.Helper()
	app, err := w.svc.CreateApp(ctx, w.dev, "Shop <b>", "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.svc.RequestAccess(ctx, w.dev, app.ID, w.product.ID, w.plan.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status == store.RequestPending {
		if r, err = w.svc.Approve(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if r.Status != store.RequestApproved {
		t.Fatalf("request %+v, want approved", r)
	}
	shown, err := w.svc.MyApp(ctx, w.dev, app.ID)
	if err != nil || len(shown.Credentials) != 1 || shown.Credentials[0].Unseen == "" {
		t.Fatalf("first view: %+v, %v; want one credential with its key", shown, err)
	}
	return shown, shown.Credentials[0].Unseen
}

func TestApprovalIssuesAKeyShownOnce(t *testing.T) {
	w := newWorld(t, false)
	app, key := w.approved(t)
	if !w.keys.Works(key) {
		t.Fatal("approved key does not work")
	}
	spec := w.keys.Held[consumerstest.Hash(key)].Spec
	if got, want := spec.Alias, "Shop <b> (ana@example.com)"; got != want {
		t.Errorf("alias %q, want %q", got, want)
	}
	if len(spec.Policies) != 2 || spec.Policies[0] != "bronze" || spec.Policies[1] != "gold" {
		t.Errorf("policies %v, want the product's then the plan's", spec.Policies)
	}
	if spec.Meta["portal_app_id"] == "" || spec.Meta["portal_user_id"] == "" {
		t.Errorf("meta_data %v", spec.Meta)
	}
	again, err := w.svc.MyApp(ctx, w.dev, app.ID)
	if err != nil || again.Credentials[0].Unseen != "" || again.Credentials[0].KeyTail != key[len(key)-4:] {
		t.Fatalf("second view %+v, %v: want no key, its last four characters", again.Credentials, err)
	}
	if err := w.svc.Roll(ctx, w.dev, app.ID, app.Credentials[0].ID); err != nil {
		t.Fatal(err)
	}
	rolled, _ := w.svc.MyApp(ctx, w.dev, app.ID)
	if w.keys.Works(key) || !w.keys.Works(rolled.Credentials[0].Unseen) {
		t.Fatal("after a roll the old key must stop and the new one work")
	}
	if err := w.svc.RevokeCredential(ctx, app.ID, app.Credentials[0].ID); err != nil {
		t.Fatal(err)
	}
	if w.keys.Works(rolled.Credentials[0].Unseen) || len(w.keys.Held) != 0 {
		t.Fatal("revoked key still held")
	}
}

func TestAutoApprove(t *testing.T) {
	w := newWorld(t, true)
	_, key := w.approved(t)
	if !w.keys.Works(key) {
		t.Fatal("auto-approved key does not work")
	}
}

func TestFailedApprovalStaysPendingWithTheError(t *testing.T) {
	w := newWorld(t, false)
	app, _ := w.svc.CreateApp(ctx, w.dev, "Shop", "")
	r, err := w.svc.RequestAccess(ctx, w.dev, app.ID, w.product.ID, w.plan.ID)
	if err != nil {
		t.Fatal(err)
	}
	w.keys.Fail = true
	if _, err := w.svc.Approve(ctx, r.ID); !errors.As(err, new(*consumers.ManagementError)) {
		t.Fatalf("approve with management down: %v", err)
	}
	got, _ := w.st.GetAccessRequest(ctx, r.ID)
	a, _ := w.st.GetApp(ctx, app.ID)
	if got.Status != store.RequestPending || got.Error == "" || len(a.Credentials) != 0 {
		t.Fatalf("after a failed approval: %+v, credentials %v", got, a.Credentials)
	}
	w.keys.Fail = false
	if got, err = w.svc.Approve(ctx, r.ID); err != nil || got.Status != store.RequestApproved || got.Error != "" {
		t.Fatalf("retry: %+v %v", got, err)
	}
	if _, err := w.svc.Approve(ctx, r.ID); !errors.Is(err, consumers.ErrNotPending) {
		t.Fatalf("second approval: %v", err)
	}
}

func TestSuspendAndDeleteStopKeys(t *testing.T) {
	w := newWorld(t, true)
	app, key := w.approved(t)
	off, on := false, true
	if _, err := w.svc.SetDeveloper(ctx, w.dev.Developer.ID, nil, &off); err != nil {
		t.Fatal(err)
	}
	if w.keys.Works(key) {
		t.Fatal("suspended developer's key works")
	}
	if _, err := w.svc.Session(ctx, "x"); !errors.Is(err, consumers.ErrNoSession) {
		t.Fatal(err)
	}
	if a, _ := w.st.GetApp(ctx, app.ID); len(a.Credentials) != 1 || a.Credentials[0].KeyHash != "" {
		t.Fatalf("suspended credential %+v: want it kept without its key", a.Credentials)
	}
	if _, err := w.svc.SetDeveloper(ctx, w.dev.Developer.ID, nil, &on); err != nil {
		t.Fatal(err)
	}
	if err := w.svc.Reconcile(ctx); err != nil { // nothing to repair
		t.Fatal(err)
	}
	a, _ := w.svc.MyApp(ctx, w.dev, app.ID)
	if len(a.Credentials) != 1 || w.keys.Works(key) || !w.keys.Works(a.Credentials[0].Unseen) || len(w.keys.Held) != 1 {
		t.Fatalf("reactivated: %+v; want a new key, shown once, and the old one gone", a.Credentials)
	}
	if err := w.svc.DeleteDeveloper(ctx, w.dev.Developer.ID); err != nil {
		t.Fatal(err)
	}
	if len(w.keys.Held) != 0 {
		t.Fatal("deleted developer's key still held")
	}
}

func TestReconcile(t *testing.T) {
	w := newWorld(t, true)
	app, key := w.approved(t)
	// a key made by an approval that crashed before its credential was stored
	orphan, _, _ := w.keys.CreateKey(ctx, consumers.KeySpec{Meta: map[string]string{"portal_app_id": "99"}})
	// a credential whose key management lost
	delete(w.keys.Held, consumerstest.Hash(key))
	if err := w.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if w.keys.Works(orphan) {
		t.Error("orphan key survived reconciliation")
	}
	a, _ := w.st.GetApp(ctx, app.ID)
	pending, _ := w.st.ListAccessRequests(ctx, store.RequestPending)
	if len(a.Credentials) != 0 || len(pending) != 1 {
		t.Errorf("credential without key: app %+v, pending %+v; want it removed and its request pending", a, pending)
	}
}

func TestLoginThrottledAndSessions(t *testing.T) {
	w := newWorld(t, false)
	throttled := 0
	for range 50 {
		_, err := w.svc.Login(ctx, "ana@example.com", "wrong password!", "192.0.2.9")
		if errors.Is(err, consumers.ErrThrottled) {
			throttled++
		} else if !errors.Is(err, consumers.ErrBadLogin) {
			t.Fatal(err)
		}
	}
	if throttled != 40 {
		t.Errorf("%d of 50 wrong passwords throttled, want 40 (10 a minute)", throttled)
	}
	if _, err := w.svc.Login(ctx, "ana@example.com", "correct horse battery", "192.0.2.7"); !errors.Is(err, consumers.ErrThrottled) {
		t.Errorf("right password from another address while the e-mail is throttled: %v", err)
	}
	if err := w.svc.Logout(ctx, w.dev); err != nil {
		t.Fatal(err)
	}
	// sessions idle for 12 h are swept; a fresh one stays
	w.signUp(t, "bob@example.com")
	later := consumers.New(w.st, consumers.Options{Keys: w.keys, Now: func() time.Time { return time.Now().Add(consumers.SessionIdle + time.Minute) }})
	if err := later.ExpireSessions(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := w.st.ExpireSessions(ctx, time.Now().Add(time.Hour), 100); n != 0 {
		t.Errorf("%d sessions left after the sweep, want none", n)
	}
	other := w.signUp(t, "carl@example.com")
	mine, _ := w.svc.CreateApp(ctx, other, "Bob's", "")
	if _, err := w.svc.MyApp(ctx, w.dev, mine.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another developer's app: %v, want not found", err)
	}
	if _, err := w.svc.RequestAccess(ctx, w.dev, mine.ID, w.product.ID, w.plan.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("access for another developer's app: %v, want not found", err)
	}
	if err := w.svc.Roll(ctx, w.dev, mine.ID, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("roll in another developer's app: %v, want not found", err)
	}
	if _, err := w.svc.Register(ctx, "CARL@example.com", "B", "long enough password"); !errors.Is(err, consumers.ErrEmailTaken) {
		t.Errorf("same e-mail in other case: %v", err)
	}
	var inv *consumers.Invalid
	if _, err := w.svc.Register(ctx, "not-an-address", "", "short"); !errors.As(err, &inv) || len(inv.Problems) != 3 {
		t.Errorf("bad registration: %v", err)
	}
}

func BenchmarkLogin(b *testing.B) {
	e, _ := boltkv.Open(filepath.Join(b.TempDir(), "portal.db"))
	defer e.Close()
	st, _ := store.Open(ctx, e)
	svc := consumers.New(st, consumers.Options{Signup: consumers.SignupOpen})
	if _, err := svc.Register(ctx, "ana@example.com", "Ana", "correct horse battery"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Login(ctx, "ana@example.com", "correct horse battery", "192.0.2.1"); err != nil {
			b.Fatal(err)
		}
	}
}
