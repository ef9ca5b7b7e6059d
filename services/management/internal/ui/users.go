package ui

import (
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

// areas are the permission areas the UI offers (the Tyk Dashboard's names
// the service checks).
var areas = []string{"apis", "policy", "keys", "users", "assets", "audit_logs", "system"}

var levels = map[string]int{"deny": 0, "read": 1, "write": 2}

func (u *UI) routeUsers() {
	u.mux.HandleFunc("GET /ui/users", u.signedIn(u.users))
	u.mux.HandleFunc("POST /ui/users", u.signedIn(u.createUser))
	u.mux.HandleFunc("POST /ui/users/{id}/reset", u.signedIn(u.resetKey))
}

type usersData struct {
	Users       []*managementv1.User
	Page, Pages int
	Prev, Next  string
	Areas       []areaChoice
	Form        userForm
	Errors      []string
	NewKey      string // a key shown once: of a new user or a reset
	NewKeyOf    string
}

// areaChoice is one area's select on the form: the levels the signed-in
// user may grant (what it holds; an admin everything).
type areaChoice struct {
	Area     string
	Levels   []string
	Selected string
}

type userForm struct{ FirstName, LastName, Email string }

func (u *UI) choices(q *request, selected map[string]string) []areaChoice {
	var out []areaChoice
	for _, a := range areas {
		held := 2
		if !q.who.Admin {
			held = levels[q.who.Permissions[a]]
		}
		c := areaChoice{Area: a, Selected: selected[a]}
		for _, l := range []string{"deny", "read", "write"} {
			if levels[l] <= held {
				c.Levels = append(c.Levels, l)
			}
		}
		out = append(out, c)
	}
	return out
}

func (u *UI) usersPage(w http.ResponseWriter, r *http.Request, q *request, code int, d usersData) {
	p, _ := strconv.ParseInt(r.URL.Query().Get("p"), 10, 64)
	p = max(p, 1)
	res, err := u.svc.ListUsers(q.ctx, &managementv1.ListUsersRequest{P: &p})
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	d.Users, d.Page, d.Pages = res.GetUsers(), int(p), max(int(res.GetPages()), 1)
	if p > 1 {
		d.Prev = "/ui/users?p=" + strconv.FormatInt(p-1, 10)
	}
	if d.Page < d.Pages {
		d.Next = "/ui/users?p=" + strconv.FormatInt(p+1, 10)
	}
	if d.Areas == nil {
		d.Areas = u.choices(q, nil)
	}
	u.render(w, r, code, "users", q, page{Title: "Users", Nav: "users", Data: d})
}

func (u *UI) users(w http.ResponseWriter, r *http.Request, q *request) {
	u.usersPage(w, r, q, http.StatusOK, usersData{})
}

// createUser creates a user with the permissions chosen (the service
// refuses any the signed-in user does not hold) and shows its key once.
func (u *UI) createUser(w http.ResponseWriter, r *http.Request, q *request) {
	f := r.PostForm
	form := userForm{FirstName: strings.TrimSpace(f.Get("first_name")), LastName: strings.TrimSpace(f.Get("last_name")), Email: strings.TrimSpace(f.Get("email_address"))}
	perms := map[string]any{}
	chosen := map[string]string{}
	for _, a := range areas {
		if l := f.Get("perm_" + a); l == "read" || l == "write" {
			perms[a], chosen[a] = l, l
		}
	}
	if f.Get("admin") == "yes" {
		perms = map[string]any{"IsAdmin": "admin"}
	}
	sp, _ := structpb.NewStruct(perms)
	res, err := u.svc.CreateUser(q.ctx, &managementv1.CreateUserRequest{User: &managementv1.UserInput{
		FirstName: form.FirstName, LastName: form.LastName, EmailAddress: form.Email, UserPermissions: sp}})
	if err != nil {
		code := httpStatus(statusOf(err))
		if code >= 500 {
			u.fail(w, r, q, err)
			return
		}
		u.usersPage(w, r, q, code, usersData{Form: form, Errors: messages(err), Areas: u.choices(q, chosen)})
		return
	}
	u.usersPage(w, r, q, http.StatusOK, usersData{NewKey: res.GetAccessKey(), NewKeyOf: form.Email})
}

// resetKey gives a user a new key, shown once.
func (u *UI) resetKey(w http.ResponseWriter, r *http.Request, q *request) {
	id := r.PathValue("id")
	res, err := u.svc.ResetUserKey(q.ctx, &managementv1.ResetUserKeyRequest{UserId: id})
	if err != nil {
		code := httpStatus(statusOf(err))
		if code >= 500 || code == http.StatusNotFound {
			u.fail(w, r, q, err)
			return
		}
		u.usersPage(w, r, q, code, usersData{Errors: messages(err)})
		return
	}
	if id == q.who.UserID { // the session's own key changed: keep it signed in
		u.sessions.rekey(q.sess.id, res.GetAccessKey())
		q.ctx = metadata.AppendToOutgoingContext(r.Context(), "authorization", res.GetAccessKey())
	}
	u.usersPage(w, r, q, http.StatusOK, usersData{NewKey: res.GetAccessKey(), NewKeyOf: id})
}
