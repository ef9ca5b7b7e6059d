// Package devsite serves the developer pages of the public site (CONTRACT
// §3 "Developer pages"): register, log in and out, my apps, an app's
// credentials (a new key shown once, roll), and access requests. Server
// rendered with html/template, no JavaScript; every change goes through
// internal/consumers. Every form carries a CSRF token: the session's once
// signed in, before that a random token in a cookie of its own (register,
// log in), and a POST without the matching token is 403.
package devsite

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"

	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

var (
	//go:embed templates/*.html
	templateFiles embed.FS
	//go:embed static/devsite.css
	stylesheet []byte

	templates = template.Must(template.New("").ParseFS(templateFiles, "templates/*.html"))
)

// Cookie names.
const (
	sessionCookie = "gatehouse_session"
	csrfCookie    = "gatehouse_csrf" // before sign-in only
)

// maxForm bounds a form's body; more is 413.
const maxForm = 16 << 10

// Security headers: the site's, with forms allowed to post here only.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"X-Frame-Options":        "DENY",
	"Cache-Control":          "no-store", // pages carry keys and tokens
}

// Pages is the developer pages' handler.
type Pages struct {
	svc *consumers.Service
	log *slog.Logger
	mux *http.ServeMux
}

// New returns the developer pages over svc.
func New(svc *consumers.Service, log *slog.Logger) *Pages {
	p := &Pages{svc: svc, log: log.With("component", "devsite"), mux: http.NewServeMux()}
	p.mux.HandleFunc("GET /auth/register", p.registerForm)
	p.mux.HandleFunc("POST /auth/register", p.register)
	p.mux.HandleFunc("GET /auth/login", p.loginForm)
	p.mux.HandleFunc("POST /auth/login", p.login)
	p.mux.HandleFunc("POST /auth/logout", p.signed(p.logout))
	p.mux.HandleFunc("GET /apps", p.signed(p.apps))
	p.mux.HandleFunc("POST /apps", p.signed(p.createApp))
	p.mux.HandleFunc("GET /apps/{id}", p.signed(p.app))
	p.mux.HandleFunc("POST /apps/{id}/credentials/{cid}/roll", p.signed(p.roll))
	p.mux.HandleFunc("GET /products/{product_id}/access", p.signed(p.accessForm))
	p.mux.HandleFunc("POST /products/{product_id}/access", p.signed(p.requestAccess))
	p.mux.HandleFunc("GET /assets/devsite.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(stylesheet)
	})
	p.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { p.notFound(w, r, view{}) })
	return p
}

// Routes are the patterns the developer pages answer, for the site's mux.
var Routes = []string{"/auth/", "/apps", "/apps/", "/products/{product_id}/access", "/assets/devsite.css"}

func (p *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			p.errorPage(w, r, view{}, http.StatusRequestEntityTooLarge, "Form too large", "The form was larger than this site accepts.")
			return
		}
	}
	p.mux.ServeHTTP(w, r)
}

// view is what every template receives.
type view struct {
	Title, CSRF string
	Signed      *store.Developer
	Problems    []string

	Email, Name, Description string
	Active, Closed           bool
	Heading, Message         string

	Apps         []store.App
	App          store.App
	Requests     []store.AccessRequest
	ProductNames map[uint32]string
	PlanNames    map[uint32]string
	ProductID    uint32
	ProductName  string
	Plans        []store.Plan
}

func (p *Pages) render(w http.ResponseWriter, status int, name string, v view) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, v); err != nil {
		p.log.Error("developer page", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (p *Pages) errorPage(w http.ResponseWriter, _ *http.Request, v view, status int, heading, msg string) {
	v.Title, v.Heading, v.Message = heading, heading, msg
	p.render(w, status, "error", v)
}

// notFound is the one 404 of the developer pages: an unknown id and
// another developer's record answer the same.
func (p *Pages) notFound(w http.ResponseWriter, r *http.Request, v view) {
	p.errorPage(w, r, v, http.StatusNotFound, "Not found", "There is no such page.")
}

// fail answers an error of the consumer service.
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, v view, err error) {
	var mgmt *consumers.ManagementError
	switch {
	case errors.Is(err, store.ErrNotFound):
		p.notFound(w, r, v)
	case errors.Is(err, consumers.ErrNoManagement), errors.As(err, &mgmt):
		p.log.Warn("developer page: management", "err", err)
		p.errorPage(w, r, v, http.StatusServiceUnavailable, "Try again later", "The portal cannot issue keys right now. Nothing was changed; please try again later.")
	default:
		p.log.Error("developer page", "err", err)
		p.errorPage(w, r, v, http.StatusInternalServerError, "Something went wrong", "Nothing was changed; please try again.")
	}
}

var decimal = regexp.MustCompile(`^[0-9]{1,10}$`)

// formID reads an id from a path or a form; 0 when it is not one.
func formID(s string) uint32 {
	if !decimal.MatchString(s) {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// clientAddr is the remote address without its port, for login throttling.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil, MaxAge: maxAge})
}
