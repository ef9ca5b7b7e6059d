package app

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// TestConsumerAdminWithoutManagement: the admin consumer routes on a portal
// started without --management-grpc-addr. Reads work; what needs
// management (a plan's policy check, an approval) answers 503 naming the
// setting; developers are activated and suspended; a rejected request
// changes nothing else.
func TestConsumerAdminWithoutManagement(t *testing.T) {
	in := servertest.Start(t, Serve, filepath.Join(t.TempDir(), "portal.db"), token, servertest.WithSite)
	p := &portal{t: t, base: in.Base, site: in.Site}

	msgs := p.errorsOf(p.do("POST", "/portal-api/plans", `{"Name":"Gold","PolicyID":"gold"}`), http.StatusServiceUnavailable, "plan without management")
	if !strings.Contains(msgs[0], "--management-grpc-addr") {
		t.Errorf("503 must name the setting: %v", msgs)
	}
	msgs = p.errorsOf(p.do("POST", "/portal-api/plans", `{"name":"Gold","PolicyID":7}`), http.StatusUnprocessableEntity, "bad plan body")
	if len(msgs) < 2 {
		t.Errorf("want one message per problem: %v", msgs)
	}
	prod := p.id(p.expect(p.do("POST", "/portal-api/products", `{"Name":"payments"}`), http.StatusCreated, "product"))
	msgs = p.errorsOf(p.do("PUT", "/portal-api/products/"+prod, `{"PlanIDs":["9","x"]}`), http.StatusUnprocessableEntity, "unknown plan")
	if len(msgs) != 1 || !strings.Contains(msgs[0], `"x"`) {
		t.Errorf("PlanIDs problems: %v", msgs)
	}
	msgs = p.errorsOf(p.do("PUT", "/portal-api/products/"+prod, `{"PlanIDs":["9"]}`), http.StatusUnprocessableEntity, "unknown plan")
	if !strings.Contains(msgs[0], `"9"`) {
		t.Errorf("PlanIDs problems: %v", msgs)
	}
	p.errorsOf(p.do("PUT", "/portal-api/products/"+prod, `{"PolicyIDs":["gold"]}`), http.StatusServiceUnavailable, "policy check without management")

	dev := newDeveloper(t, in.Site)
	dev.register("ana@example.com")
	if s, _ := dev.submit("/auth/login", "/auth/login", "email", "ana@example.com", "password", "correct horse battery"); s != http.StatusUnauthorized {
		t.Fatalf("login before activation: %d, want 401", s)
	}
	users := p.expect(p.do("GET", "/portal-api/users", ""), http.StatusOK, "users").([]any)
	if len(users) != 1 {
		t.Fatalf("users: %v", users)
	}
	u := users[0].(map[string]any)
	if u["Email"] != "ana@example.com" || u["Active"] != false || len(u) != 5 {
		t.Fatalf("user %v: want ID, Email, Name, Active false, CreatedAt", u)
	}
	p.errorsOf(p.do("GET", "/portal-api/users/x", ""), http.StatusBadRequest, "bad user id")
	p.errorsOf(p.do("GET", "/portal-api/users/9", ""), http.StatusNotFound, "unknown user")
	p.expect(p.do("PUT", "/portal-api/users/1", `{"Active":true}`), http.StatusOK, "activate")
	dev.login("ana@example.com")
	if s, _ := dev.submit("/apps", "/apps", "name", "Shop", "description", "my shop"); s != http.StatusOK {
		t.Fatalf("create app: %d", s)
	}
	apps := p.expect(p.do("GET", "/portal-api/apps", ""), http.StatusOK, "apps").([]any)
	app := apps[0].(map[string]any)
	if app["Name"] != "Shop" || app["UserID"].(interface{ String() string }).String() != "1" || len(app["Credentials"].([]any)) != 0 {
		t.Fatalf("app %v", app)
	}
	if s, _ := dev.get("/products/" + prod + "/access"); s != http.StatusOK {
		t.Fatalf("access form: %d", s)
	}
	if s, body := dev.submit("/products/"+prod+"/access", "/products/"+prod+"/access", "app", "1", "plan", "1"); s != http.StatusUnprocessableEntity {
		t.Fatalf("request for a plan the product does not offer: %d %s", s, body)
	}
	p.expect(p.do("GET", "/portal-api/access-requests?status=pending", ""), http.StatusOK, "requests")
	p.errorsOf(p.do("GET", "/portal-api/access-requests?status=maybe", ""), http.StatusBadRequest, "bad status")
	p.errorsOf(p.do("PUT", "/portal-api/access-requests/1/approve", ""), http.StatusNotFound, "no request")

	// suspension ends the session at once
	p.expect(p.do("PUT", "/portal-api/users/1", `{"Active":false}`), http.StatusOK, "suspend")
	dev.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if s, _ := dev.get("/apps"); s != http.StatusSeeOther {
		t.Errorf("session of a suspended developer: %d, want 303 to the login page", s)
	}
	p.expect(p.do("DELETE", "/portal-api/apps/1", ""), http.StatusOK, "delete app without credentials")
	p.expect(p.do("DELETE", "/portal-api/users/1", ""), http.StatusOK, "delete developer")
	p.errorsOf(p.do("GET", "/portal-api/users/1", ""), http.StatusNotFound, "deleted user")
}
