// Package ui is management's web UI (CONTRACT §7), served under /ui/ on the
// HTTP port: server-rendered pages (html/template, templates/) and one
// stylesheet and one script of our own (static/), both embedded.
//
// A signed-in user's every action is an RPC of ManagementService made over
// the connection the REST facade uses, with the user's access key as its
// authorization: the same interceptors authorize it (areas, least
// privilege) and write the audit log, so the UI has no permission rules or
// write path of its own. It only hides what Permits says the user may not
// do; the service refuses it anyway.
package ui

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// Prefix is where the UI is served.
const Prefix = "/ui/"

// DefaultIdleTimeout ends a session not used for this long (CONTRACT §7).
const DefaultIdleTimeout = 12 * time.Hour

// maxForm bounds a form body (a policy's JSON, a migration's API IDs).
const maxForm = 2 << 20

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Identity is the signed-in user, as the service knows it from the key.
type Identity struct {
	UserID, Email string
	// Permissions are the user's area permissions (empty for an admin).
	Permissions map[string]string
	Admin       bool
	// May reports whether the user may call an RPC (by name, such as
	// "Migrate"), by the service's own permission table.
	May func(rpc string) bool
}

// Options are what the UI needs from the service.
type Options struct {
	// Conn reaches ManagementService through its interceptors.
	Conn grpc.ClientConnInterface
	// Identify returns the active user a key belongs to; an error means
	// none (the sign-in is refused, a session ends).
	Identify func(ctx context.Context, key string) (Identity, error)
	Log      *slog.Logger
	// IdleTimeout ends unused sessions; DefaultIdleTimeout when zero.
	IdleTimeout time.Duration
	// Now is the clock; time.Now when nil (tests move it).
	Now func() time.Time
	// MaxSessions bounds the sessions held; DefaultMaxSessions when zero.
	MaxSessions int
}

// UI serves the pages.
type UI struct {
	opts     Options
	svc      managementv1.ManagementServiceClient
	sessions *sessions
	pages    map[string]*template.Template
	mux      *http.ServeMux
	log      *slog.Logger
}

// New returns the UI's handler.
func New(o Options) *UI {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	u := &UI{opts: o, svc: managementv1.NewManagementServiceClient(o.Conn), sessions: newSessions(o.IdleTimeout, o.MaxSessions, o.Now),
		pages: parsePages(), mux: http.NewServeMux(), log: o.Log.With("component", "ui")}
	static, _ := fs.Sub(staticFS, "static")
	u.mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	u.mux.HandleFunc("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/apis", http.StatusSeeOther) })
	u.mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/apis", http.StatusSeeOther) })
	u.routeLogin()
	u.routeAPIs()
	u.routeMigrate()
	u.routePolicies()
	u.routeKeys()
	u.routeGateways()
	u.routeAudit()
	u.routeUsers()
	u.mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		u.render(w, r, http.StatusNotFound, "error", nil, page{Title: "Not found", Error: "There is no page at this address."})
	})
	return u
}

// csp allows the page's own origin only: no inline script or style.
const csp = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: browsers would send Origin: null
	h.Set("Cache-Control", "no-store")
	if r.Method == http.MethodPost {
		if !sameOrigin(r) {
			u.render(w, r, http.StatusForbidden, "error", nil, page{Title: "Refused", Error: "This form was sent from another site."})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	}
	u.mux.ServeHTTP(w, r)
}

// sameOrigin refuses a POST whose Origin (sent by every current browser)
// names another site; a request without one (not a browser) passes to the
// CSRF token check.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	ou, err := url.Parse(o)
	return err == nil && ou.Host == r.Host
}

// request is one signed-in request: its session, its user, and a context
// whose calls carry the user's key.
type request struct {
	sess session
	who  Identity
	ctx  context.Context
	// refused is a change the service refused, for the page shown again
	refused error
}

// signedIn wraps a page that needs a session: without one (or once the key
// no longer works) the browser goes to the sign-in page. POSTs must carry
// the session's CSRF token.
func (u *UI) signedIn(next func(w http.ResponseWriter, r *http.Request, q *request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := u.sessions.get(sessionID(r))
		if !ok {
			u.toLogin(w, r)
			return
		}
		who, err := u.opts.Identify(r.Context(), sess.key)
		if err != nil {
			if status.Code(err) == codes.Unauthenticated {
				u.sessions.end(sess.id)
				u.toLogin(w, r)
				return
			}
			u.fail(w, r, nil, err)
			return
		}
		q := &request{sess: sess, who: who, ctx: metadata.AppendToOutgoingContext(r.Context(), "authorization", sess.key)}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				u.render(w, r, http.StatusBadRequest, "error", q, page{Title: "Bad request", Error: "The form could not be read."})
				return
			}
			if !sess.validCSRF(r.PostForm.Get(csrfField)) {
				u.render(w, r, http.StatusForbidden, "error", q, page{Title: "Refused", Error: "This form has expired or did not come from this page; reload the page and try again."})
				return
			}
		}
		next(w, r, q)
	}
}

func (u *UI) toLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		u.render(w, r, http.StatusUnauthorized, "login", nil, page{Title: "Sign in", Error: "Your session has ended; sign in again."})
		return
	}
	http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// page is what every template receives.
type page struct {
	Title   string
	Nav     string // the current section
	Error   string // shown at the top
	Notice  string
	Who     *Identity
	CSRF    string
	CSRFKey string
	Data    any
}

// may is the template's view of Identity.May.
func (p page) May(rpc string) bool { return p.Who != nil && p.Who.May != nil && p.Who.May(rpc) }

func (u *UI) render(w http.ResponseWriter, r *http.Request, code int, name string, q *request, p page) {
	t := u.pages[name]
	p.CSRFKey = csrfField
	if q != nil {
		p.Who = &q.who
		p.CSRF = q.sess.csrf
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if r.Method == http.MethodHead {
		return
	}
	if err := t.ExecuteTemplate(w, "layout", p); err != nil {
		u.log.Error("render failed", "page", name, "err", err)
	}
}

// fail answers an RPC's error as the service decided it: its REST status
// and message (a 403 stays a 403; the service's messages are written for
// clients, "internal error" included); a session whose key stopped
// working ends.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, q *request, err error) {
	st := status.Convert(err)
	if st.Code() == codes.Unauthenticated && q != nil {
		u.sessions.end(q.sess.id)
		u.toLogin(w, r)
		return
	}
	code := httpStatus(st)
	msg := strings.Join(messages(err), "; ")
	if _, fromService := status.FromError(err); !fromService || st.Code() == codes.Unknown {
		// not an answer of the service (a page that could not read it):
		// its text is for the log
		u.log.Error("page failed", "path", r.URL.Path, "err", err)
		code, msg = http.StatusInternalServerError, "The page could not be made ("+strconv.Itoa(code)+"); try again."
	}
	u.render(w, r, code, "error", q, page{Title: http.StatusText(code), Error: msg})
}

// httpStatus is the REST status of an RPC error, as the facade answers it.
func httpStatus(st *status.Status) int {
	if code, _, ok := rest.Detail(st); ok {
		return code
	}
	return runtime.HTTPStatusFromCode(st.Code())
}

// messages are an RPC error's texts for a form: the service's own
// validation messages, one per problem.
func messages(err error) []string {
	st := status.Convert(err)
	if _, msgs, ok := rest.Detail(st); ok && len(msgs) > 0 {
		return msgs
	}
	return []string{st.Message()}
}

func statusOf(err error) *status.Status { return status.Convert(err) }

func pathEscape(s string) string { return url.PathEscape(s) }
