package devsite

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
)

// anonymousCSRF returns the pre-sign-in CSRF token, setting its cookie when
// the browser has none.
func anonymousCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	b := make([]byte, 32)
	rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	setCookie(w, r, csrfCookie, token, 0)
	return token
}

// anonymousCSRFValid checks a pre-sign-in form's token against its cookie.
func anonymousCSRFValid(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	form := r.PostForm.Get("csrf")
	return err == nil && c.Value != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) == 1
}

func (p *Pages) forbidden(w http.ResponseWriter, r *http.Request, v view) {
	p.errorPage(w, r, v, http.StatusForbidden, "Form expired", "This form was not sent from this site's page, or the page is too old. Go back, reload it and try again.")
}

func (p *Pages) registerForm(w http.ResponseWriter, r *http.Request) {
	p.render(w, http.StatusOK, "register", view{Title: "Register", CSRF: anonymousCSRF(w, r), Closed: p.svc.Signup() == consumers.SignupClosed})
}

func (p *Pages) register(w http.ResponseWriter, r *http.Request) {
	v := view{Title: "Register", CSRF: anonymousCSRF(w, r), Email: r.PostForm.Get("email"), Name: r.PostForm.Get("name")}
	if !anonymousCSRFValid(r) {
		p.forbidden(w, r, v)
		return
	}
	d, err := p.svc.Register(r.Context(), v.Email, v.Name, r.PostForm.Get("password"))
	var invalid *consumers.Invalid
	switch {
	case errors.As(err, &invalid):
		v.Problems = invalid.Problems
		p.render(w, http.StatusUnprocessableEntity, "register", v)
	case errors.Is(err, consumers.ErrEmailTaken):
		v.Problems = []string{"An account with this e-mail exists: log in instead."}
		p.render(w, http.StatusUnprocessableEntity, "register", v)
	case errors.Is(err, consumers.ErrSignupClosed):
		v.Closed = true
		p.render(w, http.StatusForbidden, "register", v)
	case err != nil:
		p.fail(w, r, v, err)
	default:
		p.render(w, http.StatusCreated, "registered", view{Title: "Account created", Active: d.Active})
	}
}

func (p *Pages) loginForm(w http.ResponseWriter, r *http.Request) {
	p.render(w, http.StatusOK, "login", view{Title: "Log in", CSRF: anonymousCSRF(w, r)})
}

func (p *Pages) login(w http.ResponseWriter, r *http.Request) {
	v := view{Title: "Log in", CSRF: anonymousCSRF(w, r), Email: r.PostForm.Get("email")}
	if !anonymousCSRFValid(r) {
		p.forbidden(w, r, v)
		return
	}
	id, err := p.svc.Login(r.Context(), v.Email, r.PostForm.Get("password"), clientAddr(r))
	switch {
	case errors.Is(err, consumers.ErrThrottled):
		w.Header().Set("Retry-After", "60")
		v.Problems = []string{"Too many failed logins. Wait a minute and try again."}
		p.render(w, http.StatusTooManyRequests, "login", v)
	case errors.Is(err, consumers.ErrBadLogin):
		v.Problems = []string{"Unknown e-mail, wrong password, or an account that is not active."}
		p.render(w, http.StatusUnauthorized, "login", v)
	case err != nil:
		p.fail(w, r, v, err)
	default:
		setCookie(w, r, sessionCookie, id, 0)
		setCookie(w, r, csrfCookie, "", -1)
		http.Redirect(w, r, "/apps", http.StatusSeeOther)
	}
}

// signed wraps a handler that needs a session: without one a GET is sent
// to the login page and a POST is 403; a POST must carry the session's
// CSRF token (403 otherwise, nothing changed).
func (p *Pages) signed(h func(http.ResponseWriter, *http.Request, consumers.Signed, view)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var sg consumers.Signed
		err := consumers.ErrNoSession
		if c, cerr := r.Cookie(sessionCookie); cerr == nil {
			sg, err = p.svc.Session(r.Context(), c.Value)
		}
		if errors.Is(err, consumers.ErrNoSession) {
			setCookie(w, r, sessionCookie, "", -1)
			if r.Method == http.MethodPost {
				p.forbidden(w, r, view{})
				return
			}
			http.Redirect(w, r, "/auth/login", http.StatusSeeOther)
			return
		}
		if err != nil {
			p.fail(w, r, view{}, err)
			return
		}
		dev := sg.Developer
		v := view{CSRF: sg.CSRF, Signed: &dev}
		if r.Method == http.MethodPost && !sg.CSRFValid(r.PostForm.Get("csrf")) {
			p.forbidden(w, r, v)
			return
		}
		h(w, r, sg, v)
	}
}

func (p *Pages) logout(w http.ResponseWriter, r *http.Request, sg consumers.Signed, v view) {
	if err := p.svc.Logout(r.Context(), sg); err != nil {
		p.fail(w, r, v, err)
		return
	}
	setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/auth/login", http.StatusSeeOther)
}
