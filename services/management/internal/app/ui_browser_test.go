package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/browsertest"
)

// TestUIBrowser drives the web UI in headless Chromium (pkg/browsertest):
// sign-in, a dry run of three classic APIs (one warns, one fails) whose
// report shows the warning beside the marked documents, a direct
// migration, the APIs listed as Tyk OAS, at 1280×800 and at phone width,
// with user text that would run script if it were markup. With
// GATEHOUSE_SCREENSHOTS=dir it saves the README's screenshots there.
func TestUIBrowser(t *testing.T) {
	b := browsertest.New(t, browsertest.Options{ShotsEnv: "GATEHOUSE_SCREENSHOTS"})
	in := start(t, "")
	ids := seedUI(t, in)
	expect(t, "oas api", in.admin("POST", "/api/apis/oas", oasDoc("payments-oas", "Payments", "/payments/")), 200, "")
	expect(t, "policy", in.admin("POST", "/api/portal/policies", `{"name":`+quote(xssPolicy)+`,"active":true,"rate":10,"per":1,"quota_max":-1,"access_rights":{}}`), 200, "")
	expect(t, "policy", in.admin("POST", "/api/portal/policies", `{"name":"Gold tier","active":true,"rate":1000,"per":60,"quota_max":100000,"access_rights":{}}`), 200, "")
	b.Viewport(1280, 800)

	noScriptRan := func(where string) {
		t.Helper()
		if ran := browsertest.Eval[string](b, `typeof window.__xss`); ran != "undefined" {
			t.Fatalf("%s: user text ran as script (window.__xss is %s)", where, ran)
		}
	}

	// Signed out, the UI sends the browser to the sign-in page.
	if got := b.Open(in.base + "/ui/apis"); got != 200 {
		t.Fatalf("open: %d", got)
	}
	if h := b.Text("h1"); h != "Sign in" {
		t.Fatalf("signed out: h1 %q, want the sign-in page", h)
	}
	b.ShotView("sign-in")
	b.Type("#key", adminToken)
	if got := b.Follow(`form button[type="submit"]`); got != 200 {
		t.Fatalf("sign in: %d", got)
	}
	if h := b.Text("h1"); h != "APIs" {
		t.Fatalf("after signing in: h1 %q", h)
	}
	noScriptRan("APIs")
	names := browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#apis tbody td:first-child')).map(e => e.textContent.trim())`)
	if !slices.Contains(names, `Orders <script>window.__xss=1</script> "q" #shop`) {
		t.Fatalf("API names %q: the name is not shown as text", names)
	}
	b.ShotView("apis")

	// Search: a part of a listen path, in another case, finds one API;
	// the form keeps what was typed.
	apiIDs := func() []string {
		return browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#apis tbody tr')).map(r => r.cells[5].textContent.trim())`)
	}
	b.Type("#q", "/EXPIRING")
	if got := b.Follow(`form.filters button[type="submit"]`); got != 200 {
		t.Fatalf("search: %d", got)
	}
	if got := apiIDs(); !slices.Equal(got, []string{ids[1]}) {
		t.Fatalf("search /EXPIRING: APIs %q, want %s alone", got, ids[1])
	}
	if q := browsertest.Eval[string](b, `document.querySelector('#q').value`); q != "/EXPIRING" {
		t.Fatalf("search field holds %q after the search", q)
	}
	b.Open(in.base + "/ui/apis?q=PAY&kind=oas&active=yes")
	if got := apiIDs(); !slices.Equal(got, []string{"payments-oas"}) {
		t.Fatalf("active Tyk OAS APIs named pay: %q", got)
	}

	// Migration: pick the three classic APIs, dry run.
	if got := b.Follow(`a[href="/ui/migrate"]`); got != 200 {
		t.Fatalf("migrate: %d", got)
	}
	for _, id := range ids {
		b.Click(`input[name="apiIDs"][value="` + id + `"]`)
	}
	b.ShotView("migrate-pick")
	if got := b.Follow("#dry-run"); got != 200 {
		t.Fatalf("dry run: %d", got)
	}
	noScriptRan("dry run")
	if got := b.Text(".summary"); got != "2 migrated (nothing stored), 1 failed, 0 skipped." {
		t.Fatalf("dry run summary %q", got)
	}
	if w := b.Text("#r-" + ids[1] + " ~ .warnings"); !strings.Contains(w, expiryWarn) {
		t.Fatalf("warnings of %s: %q, want the expiry warning", ids[1], w)
	}
	if f := b.Text(".result.failed .failures"); !strings.Contains(f, jqFailure) {
		t.Fatalf("failures: %q", f)
	}
	marked := browsertest.Eval[int](b, `document.querySelectorAll('.diff .chg').length`)
	sides := browsertest.Eval[int](b, `document.querySelectorAll('.diff .sides pre').length`)
	if marked == 0 || sides != 4 {
		t.Fatalf("diffs: %d marked lines, %d documents; want some, and 4 (two APIs, two sides)", marked, sides)
	}
	// The script's toggle leaves only the marked lines.
	b.Click("[data-diff-toggle]")
	if n := browsertest.Eval[int](b, `Array.from(document.querySelectorAll('.only-marked .ln')).filter(e => e.offsetParent !== null && !e.classList.contains('chg')).length`); n != 0 {
		t.Fatalf("show marked lines only: %d unmarked lines visible", n)
	}
	b.Click("[data-diff-toggle]")
	b.ScrollTo("#r-" + ids[1])
	b.ShotView("dry-run")

	// Direct, confirmed.
	b.Click(`input[name="mode"][value="direct"]`)
	b.Click(`input[name="confirm"]`)
	if got := b.Follow("#run"); got != 200 {
		t.Fatalf("direct: %d", got)
	}
	if got := b.Text(".summary"); got != "2 migrated, 1 failed, 0 skipped." {
		t.Fatalf("direct summary %q", got)
	}
	b.ShotView("report")

	// The APIs list shows them as Tyk OAS.
	b.Open(in.base + "/ui/apis?kind=oas")
	rows := browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#apis tbody tr')).map(r => r.cells[5].textContent.trim() + ' ' + r.cells[1].textContent.trim())`)
	for _, want := range []string{ids[0] + " Tyk OAS", ids[1] + " Tyk OAS"} {
		if !slices.Contains(rows, want) {
			t.Fatalf("Tyk OAS APIs %q lack %q", rows, want)
		}
	}
	if b.Open(in.base+"/ui/apis/"+ids[0]) != 200 || !strings.Contains(b.Text("pre.doc"), "x-tyk-api-gateway") {
		t.Fatal("the migrated API's page does not show its Tyk OAS document")
	}
	noScriptRan("API page")
	b.ShotView("api")

	b.Open(in.base + "/ui/policies")
	noScriptRan("policies")
	b.ShotView("policies")

	// A phone-sized screen: nothing wider than the screen but the tables'
	// own scrolling boxes.
	b.Viewport(390, 844)
	for _, path := range []string{"/ui/apis", "/ui/migrate", "/ui/users"} {
		b.Open(in.base + path)
		if w := browsertest.Eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("%s at 390 px: the page is %d px wider than the screen", path, w)
		}
	}
	b.Open(in.base + "/ui/apis")
	b.ShotView("apis-phone")
	b.Viewport(1280, 800)
	b.Open(in.base + "/ui/users")
	if w := browsertest.Eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		t.Errorf("users at 1280 px: %d px too wide", w)
	}
	b.ShotView("users")

	// Signing out ends the session.
	b.Follow(`.signout button`)
	if h := b.Text("h1"); h != "Sign in" {
		t.Fatalf("after signing out: h1 %q", h)
	}
	b.Open(in.base + "/ui/apis")
	if h := b.Text("h1"); h != "Sign in" {
		t.Fatalf("after signing out, /ui/apis shows %q", h)
	}

	// A read-only user is offered no migration.
	_, key := in.createUser(`{"apis":"read"}`)
	b.Type("#key", key)
	b.Follow(`form button[type="submit"]`)
	if n := browsertest.Eval[int](b, `document.querySelectorAll('a[href="/ui/migrate"]').length`); n != 0 {
		t.Fatalf("an apis:read user sees %d links to the migration", n)
	}
}
