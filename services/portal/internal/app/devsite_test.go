package app

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// developer is a browser without JavaScript on the developer pages: a
// cookie jar, forms posted with the CSRF token of the page they are on.
type developer struct {
	t    testing.TB
	site string
	c    *http.Client
}

func newDeveloper(t testing.TB, site string) *developer {
	jar, _ := cookiejar.New(nil)
	return &developer{t: t, site: site, c: &http.Client{Jar: jar}}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// get loads a page and returns its status and body.
func (d *developer) get(path string) (int, string) {
	d.t.Helper()
	res, err := d.c.Get(d.site + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// submit loads the page at from, then posts the form fields to action
// with the page's CSRF token (none when from is ""), following redirects.
func (d *developer) submit(from, action string, fields ...string) (int, string) {
	d.t.Helper()
	form := url.Values{}
	if from != "" {
		_, page := d.get(from)
		if m := csrfField.FindStringSubmatch(page); m != nil {
			form.Set("csrf", m[1])
		}
	}
	for i := 0; i+1 < len(fields); i += 2 {
		form.Set(fields[i], fields[i+1])
	}
	res, err := d.c.PostForm(d.site+action, form)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (d *developer) register(email string) {
	d.t.Helper()
	if status, body := d.submit("/auth/register", "/auth/register", "email", email, "name", "Dev", "password", "correct horse battery"); status != http.StatusCreated {
		d.t.Fatalf("register %s: %d %s", email, status, body)
	}
}

func (d *developer) login(email string) {
	d.t.Helper()
	if status, body := d.submit("/auth/login", "/auth/login", "email", email, "password", "correct horse battery"); status != http.StatusOK || !strings.Contains(body, "My apps") {
		d.t.Fatalf("login %s: %d %s", email, status, body)
	}
}

func openSignup(c *config.Config) { c.Consumers.DeveloperSignup = "open" }

func TestDeveloperPages(t *testing.T) {
	in := servertest.Start(t, Serve, filepath.Join(t.TempDir(), "portal.db"), token, servertest.WithSite, openSignup)
	ana, bob := newDeveloper(t, in.Site), newDeveloper(t, in.Site)
	ana.register("ana@example.com")
	bob.register("bob@example.com")
	ana.login("ana@example.com")
	bob.login("bob@example.com")

	xss := `<script>window.__xss=1</script><img src=x onerror=alert(1)>`
	status, body := ana.submit("/apps", "/apps", "name", xss, "description", xss)
	if status != http.StatusOK || strings.Contains(body, "<script>") || strings.Contains(body, "<img") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("app with markup in its name: %d, the page must show it as text: %s", status, body)
	}
	_, list := ana.get("/apps")
	m := regexp.MustCompile(`href="/apps/(\d+)"`).FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("no app on the list: %s", list)
	}
	appPath := "/apps/" + m[1]

	t.Run("another developer's app is the unknown id's 404", func(t *testing.T) {
		s1, b1 := bob.get(appPath)
		s2, b2 := bob.get("/apps/4000000")
		if s1 != http.StatusNotFound || s1 != s2 || b1 != b2 {
			t.Fatalf("another's app %d, unknown %d; want the same 404", s1, s2)
		}
	})
	t.Run("CSRF", func(t *testing.T) {
		if s, _ := ana.submit("", "/apps", "name", "forged"); s != http.StatusForbidden {
			t.Errorf("POST /apps without a token: %d, want 403", s)
		}
		if s, _ := ana.submit("", "/apps", "name", "forged", "csrf", "not-the-token"); s != http.StatusForbidden {
			t.Errorf("POST /apps with a wrong token: %d, want 403", s)
		}
		if s, _ := newDeveloper(t, in.Site).submit("", "/auth/login", "email", "ana@example.com", "password", "correct horse battery"); s != http.StatusForbidden {
			t.Errorf("login without a token: %d, want 403", s)
		}
		if _, l := ana.get("/apps"); strings.Contains(l, "forged") {
			t.Error("a forged POST created an app")
		}
	})
	t.Run("session after logout", func(t *testing.T) {
		eve := newDeveloper(t, in.Site)
		eve.register("eve@example.com")
		eve.login("eve@example.com")
		u, _ := url.Parse(in.Site)
		stolen := eve.c.Jar.Cookies(u)
		if s, _ := eve.submit("/apps", "/auth/logout"); s != http.StatusOK {
			t.Fatalf("logout: %d", s)
		}
		replay := newDeveloper(t, in.Site)
		replay.c.Jar.SetCookies(u, stolen)
		replay.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		if s, _ := replay.get("/apps"); s != http.StatusSeeOther {
			t.Errorf("GET /apps with the cookie of a logged-out session: %d, want 303 to the login page", s)
		}
	})
	t.Run("50 wrong passwords", func(t *testing.T) {
		mallory := newDeveloper(t, in.Site)
		counts := map[int]int{}
		for range 50 {
			s, _ := mallory.submit("/auth/login", "/auth/login", "email", "bob@example.com", "password", "wrong password!!")
			counts[s]++
		}
		if counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != 40 {
			t.Errorf("50 wrong passwords answered %v, want 10×401 then 40×429", counts)
		}
	})
	t.Run("a form larger than 16 KiB", func(t *testing.T) {
		res, err := http.Post(in.Site+"/auth/register", "application/x-www-form-urlencoded", strings.NewReader("name="+strings.Repeat("a", 1<<20)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("1 MiB form: %d, want 413", res.StatusCode)
		}
	})
	t.Run("pages without a session", func(t *testing.T) {
		anon := newDeveloper(t, in.Site)
		anon.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		if s, _ := anon.get("/apps"); s != http.StatusSeeOther {
			t.Errorf("GET /apps signed out: %d, want 303", s)
		}
		if s, _ := anon.submit("", "/products/1/access", "app", "1", "plan", "1"); s != http.StatusForbidden {
			t.Errorf("POST access signed out: %d, want 403", s)
		}
	})
}
