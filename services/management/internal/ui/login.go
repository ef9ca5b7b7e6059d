package ui

import (
	"net/http"
	"strings"

	"google.golang.org/grpc/status"
)

func (u *UI) routeLogin() {
	u.mux.HandleFunc("GET /ui/login", func(w http.ResponseWriter, r *http.Request) {
		u.render(w, r, http.StatusOK, "login", nil, page{Title: "Sign in", Data: loginData{Next: safeNext(r.URL.Query().Get("next"))}})
	})
	u.mux.HandleFunc("POST /ui/login", u.login)
	u.mux.HandleFunc("POST /ui/logout", u.signedIn(func(w http.ResponseWriter, r *http.Request, q *request) {
		u.sessions.end(q.sess.id)
		setCookie(w, r, "", -1)
		http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
	}))
}

type loginData struct{ Next string }

// login exchanges an access key (form field key) for a session. The key is
// checked by the service; a wrong one gets one message whatever the reason.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		u.render(w, r, http.StatusBadRequest, "login", nil, page{Title: "Sign in", Error: "The form could not be read."})
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	key := strings.TrimSpace(r.PostForm.Get("key"))
	if key == "" {
		u.render(w, r, http.StatusBadRequest, "login", nil, page{Title: "Sign in", Error: "Enter your access key.", Data: loginData{Next: next}})
		return
	}
	if _, err := u.opts.Identify(r.Context(), key); err != nil {
		code := httpStatus(status.Convert(err))
		msg := "That access key is not valid for an active user."
		if code >= 500 {
			msg = "The service could not check the key; try again."
		}
		u.render(w, r, code, "login", nil, page{Title: "Sign in", Error: msg, Data: loginData{Next: next}})
		return
	}
	sess, ok := u.sessions.create(key)
	if !ok {
		w.Header().Set("Retry-After", "60")
		u.render(w, r, http.StatusServiceUnavailable, "login", nil, page{Title: "Sign in", Error: "Too many people are signed in; try again in a minute."})
		return
	}
	setCookie(w, r, sess.id, 0)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext is where to go after signing in: a path of the UI, never
// another site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return "/ui/apis"
	}
	return next
}
