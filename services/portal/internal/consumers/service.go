// Package consumers is the portal's consumer side (CONTRACT §3
// "Consumers"): developers and their passwords and sessions, apps, access
// requests and plans, and the keys management issues for them. The admin
// API (internal/api) and the developer pages (internal/devsite) both call
// this service; it is the one place these records are written, and the one
// place that pairs a store write with a management call.
package consumers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// Signup modes (--developer-signup).
const (
	SignupOpen     = "open"     // a new account may sign in at once
	SignupApproval = "approval" // an admin activates it first (the default)
	SignupClosed   = "closed"   // no registration
)

// KeySpec is what a portal credential's key carries in management.
type KeySpec struct {
	Policies []string          // apply_policies: the product's policies and the plan's
	Alias    string            // "<app name> (<developer e-mail>)"
	Meta     map[string]string // portal_app_id, portal_user_id
}

// PortalKey is a key management holds whose meta_data names a portal app.
type PortalKey struct {
	Hash  string
	AppID uint32
}

// Keys is what the portal asks of management (internal/management
// implements it over gRPC). Every call is bounded by the caller's context.
type Keys interface {
	// MissingPolicies returns the ids among ids that name no management policy.
	MissingPolicies(ctx context.Context, ids []string) ([]string, error)
	// CreateKey asks for a new key; it returns the key and its hash.
	CreateKey(ctx context.Context, spec KeySpec) (key, hash string, err error)
	// DeleteKey deletes the key with this hash; an absent key is no error.
	DeleteKey(ctx context.Context, hash string) error
	// PortalKeys lists the keys whose meta_data names a portal app.
	PortalKeys(ctx context.Context) ([]PortalKey, error)
}

// Errors the callers map to answers.
var (
	// ErrNoManagement: the portal has no management connection configured.
	ErrNoManagement = errors.New("the consumer routes need --management-grpc-addr and --management-key-file")
	ErrEmailTaken   = errors.New("an account with this e-mail exists")
	ErrSignupClosed = errors.New("registration is closed")
	ErrBadLogin     = errors.New("unknown e-mail or wrong password")
	ErrThrottled    = errors.New("too many failed logins; try again in a minute")
	ErrNoSession    = errors.New("not signed in")
	ErrNotPending   = errors.New("the access request is not pending")
)

// Invalid lists the problems of a request, one sentence each (422).
type Invalid struct{ Problems []string }

func (e *Invalid) Error() string { return strings.Join(e.Problems, "; ") }

// ManagementError is a management call that failed; the request it served
// changed nothing in the portal (or was left pending with the error).
type ManagementError struct {
	Op  string
	Err error
}

func (e *ManagementError) Error() string { return "management " + e.Op + " failed: " + e.Err.Error() }
func (e *ManagementError) Unwrap() error { return e.Err }

// Options configure a Service.
type Options struct {
	Signup string // SignupOpen, SignupApproval (default) or SignupClosed
	Keys   Keys   // nil: no management; the routes that need it answer ErrNoManagement
	Log    *slog.Logger
	Now    func() time.Time
}

// Service is the consumer side over the portal's store.
type Service struct {
	store    *store.Store
	keys     Keys
	signup   string
	log      *slog.Logger
	now      func() time.Time
	hasher   *hasher
	throttle *throttle
}

// New returns the service over st.
func New(st *store.Store, o Options) *Service {
	s := &Service{store: st, keys: o.Keys, signup: o.Signup, log: o.Log, now: o.Now, hasher: newHasher(), throttle: newThrottle()}
	if s.signup == "" {
		s.signup = SignupApproval
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With("component", "consumers")
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Signup is the registration mode.
func (s *Service) Signup() string { return s.signup }

func (s *Service) needKeys() error {
	if s.keys == nil {
		return ErrNoManagement
	}
	return nil
}

const maxName = 255
const maxDescription = 4096

func textProblems(field, v string, max int, required bool) []string {
	switch {
	case !utf8.ValidString(v):
		return []string{field + " must be valid UTF-8"}
	case required && strings.TrimSpace(v) == "":
		return []string{field + " is required"}
	case utf8.RuneCountInString(v) > max:
		return []string{fmt.Sprintf("%s is longer than %d characters", field, max)}
	}
	return nil
}

// Register creates a developer account: active at once with signup open,
// inactive until an admin activates it with signup approval.
func (s *Service) Register(ctx context.Context, email, name, password string) (store.Developer, error) {
	if s.signup == SignupClosed {
		return store.Developer{}, ErrSignupClosed
	}
	var problems []string
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > maxName {
		problems = append(problems, "Email must be an e-mail address such as ana@example.com")
	}
	problems = append(problems, textProblems("Name", name, maxName, true)...)
	switch n := utf8.RuneCountInString(password); {
	case n < MinPasswordLen:
		problems = append(problems, fmt.Sprintf("Password must have at least %d characters", MinPasswordLen))
	case len(password) > maxPasswordLen:
		problems = append(problems, fmt.Sprintf("Password must be at most %d bytes", maxPasswordLen))
	}
	if len(problems) > 0 {
		return store.Developer{}, &Invalid{problems}
	}
	hash, err := s.hasher.hash(ctx, password)
	if err != nil {
		return store.Developer{}, err
	}
	d, err := s.store.CreateDeveloper(ctx, store.Developer{Email: email, Name: name, Active: s.signup == SignupOpen,
		PasswordHash: hash, CreatedAt: s.now().UTC()})
	if errors.Is(err, store.ErrAlreadyExists) {
		return store.Developer{}, ErrEmailTaken
	}
	return d, err
}

// Developers lists every developer.
func (s *Service) Developers(ctx context.Context) ([]store.Developer, error) {
	return s.store.ListDevelopers(ctx)
}

// EachDeveloper calls fn with every developer, from one snapshot.
func (s *Service) EachDeveloper(ctx context.Context, fn func(store.Developer) error) error {
	return s.store.EachDeveloper(ctx, fn)
}

// Developer reads one developer.
func (s *Service) Developer(ctx context.Context, id uint32) (store.Developer, error) {
	return s.store.GetDeveloper(ctx, id)
}

// SetDeveloper changes a developer's name and whether the account is
// active. Suspending (Active false) deletes every key of the developer's
// apps in management and keeps each credential without its key, then
// drops the sessions with the account's change; reactivating asks
// management for a new key for each such credential (shown once on the
// app page). Tyk gateways ignore a policy-bound key's own is_inactive (the
// policies decide), so a suspended key is deleted rather than deactivated.
// Each credential changes right after its key, so a failure part-way
// answers an error with the account unchanged, and a retry finishes.
func (s *Service) SetDeveloper(ctx context.Context, id uint32, name *string, active *bool) (store.Developer, error) {
	if name != nil {
		if p := textProblems("Name", *name, maxName, true); p != nil {
			return store.Developer{}, &Invalid{p}
		}
	}
	d, err := s.store.GetDeveloper(ctx, id)
	if err != nil {
		return d, err
	}
	if active != nil {
		apps, err := s.store.AppsOf(ctx, id)
		if err != nil {
			return d, err
		}
		for _, a := range apps {
			for _, c := range a.Credentials {
				switch {
				case !*active && c.KeyHash != "":
					err = s.suspend(ctx, a.ID, c)
				case *active && c.KeyHash == "":
					err = s.reissue(ctx, d, a, c)
				}
				if err != nil {
					return d, err
				}
			}
		}
	}
	return s.store.UpdateDeveloper(ctx, id, func(d *store.Developer) error {
		if name != nil {
			d.Name = *name
		}
		if active != nil {
			d.Active = *active
		}
		return nil
	})
}

// suspend deletes a credential's key in management, then records the
// credential without it.
func (s *Service) suspend(ctx context.Context, appID uint32, c store.AppCredential) error {
	if err := s.needKeys(); err != nil {
		return err
	}
	if err := s.keys.DeleteKey(ctx, c.KeyHash); err != nil {
		return &ManagementError{"key delete", err}
	}
	_, err := s.store.UpdateApp(ctx, appID, func(a *store.App) error {
		for i := range a.Credentials {
			if a.Credentials[i].ID == c.ID && a.Credentials[i].KeyHash == c.KeyHash {
				a.Credentials[i].KeyHash, a.Credentials[i].KeyTail, a.Credentials[i].Unseen = "", "", ""
			}
		}
		return nil
	})
	return err
}

// reissue asks management for a new key for a suspended credential and
// records it, to be shown once; if the record fails the key is deleted again.
func (s *Service) reissue(ctx context.Context, d store.Developer, a store.App, c store.AppCredential) error {
	if err := s.needKeys(); err != nil {
		return err
	}
	spec, err := s.specFor(ctx, d, a, c.ProductID, c.PlanID)
	if err != nil {
		return err
	}
	key, hash, err := s.keys.CreateKey(ctx, spec)
	if err != nil {
		return &ManagementError{"key create", err}
	}
	_, err = s.store.UpdateApp(ctx, a.ID, func(a *store.App) error {
		for i := range a.Credentials {
			if a.Credentials[i].ID == c.ID && a.Credentials[i].KeyHash == "" {
				a.Credentials[i].KeyHash, a.Credentials[i].KeyTail, a.Credentials[i].Unseen = hash, tail(key), key
				return nil
			}
		}
		return store.ErrNotFound
	})
	if err != nil {
		if derr := s.keys.DeleteKey(context.WithoutCancel(ctx), hash); derr != nil {
			s.log.Warn("key of a failed reissue not deleted; reconciliation at the next start deletes it", "key_hash", hash, "error", derr)
		}
	}
	return err
}

// DeleteDeveloper revokes every key of the developer's apps and removes
// each app, then the developer with their remaining requests and sessions.
func (s *Service) DeleteDeveloper(ctx context.Context, id uint32) error {
	if _, err := s.store.GetDeveloper(ctx, id); err != nil {
		return err
	}
	apps, err := s.store.AppsOf(ctx, id)
	if err != nil {
		return err
	}
	for _, a := range apps { // an app per transaction keeps each within etcd's 128 writes
		if err := s.revokeAll(ctx, a); err != nil {
			return err
		}
		if err := s.store.DeleteApp(ctx, a.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return s.store.DeleteDeveloper(ctx, id)
}

// revokeAll deletes each key of an app in management and then its credential.
func (s *Service) revokeAll(ctx context.Context, a store.App) error {
	for _, c := range a.Credentials {
		if err := s.revoke(ctx, a.ID, c.ID); err != nil {
			return err
		}
	}
	return nil
}

// revoke deletes one credential's key in management, then the credential:
// a failed call changes nothing.
func (s *Service) revoke(ctx context.Context, appID, credID uint32) error {
	a, err := s.store.GetApp(ctx, appID)
	if err != nil {
		return err
	}
	c, ok := credential(a, credID)
	if !ok {
		return store.ErrNotFound
	}
	if c.KeyHash != "" { // a suspended developer's credential has none
		if err := s.needKeys(); err != nil {
			return err
		}
		if err := s.keys.DeleteKey(ctx, c.KeyHash); err != nil {
			return &ManagementError{"key delete", err}
		}
	}
	_, err = s.store.UpdateApp(ctx, appID, func(a *store.App) error {
		a.Credentials = without(a.Credentials, credID)
		return nil
	})
	return err
}

func credential(a store.App, id uint32) (store.AppCredential, bool) {
	for _, c := range a.Credentials {
		if c.ID == id {
			return c, true
		}
	}
	return store.AppCredential{}, false
}

func without(list []store.AppCredential, id uint32) []store.AppCredential {
	out := []store.AppCredential{}
	for _, c := range list {
		if c.ID != id {
			out = append(out, c)
		}
	}
	return out
}

// Apps lists every app.
func (s *Service) Apps(ctx context.Context) ([]store.App, error) { return s.store.ListApps(ctx) }

// EachApp calls fn with every app, from one snapshot.
func (s *Service) EachApp(ctx context.Context, fn func(store.App) error) error {
	return s.store.EachApp(ctx, fn)
}

// App reads one app.
func (s *Service) App(ctx context.Context, id uint32) (store.App, error) {
	return s.store.GetApp(ctx, id)
}

// DeleteApp revokes the app's keys, then removes it and its requests.
func (s *Service) DeleteApp(ctx context.Context, id uint32) error {
	a, err := s.store.GetApp(ctx, id)
	if err != nil {
		return err
	}
	if err := s.revokeAll(ctx, a); err != nil {
		return err
	}
	return s.store.DeleteApp(ctx, id)
}

// RevokeCredential deletes one credential's key, then the credential.
func (s *Service) RevokeCredential(ctx context.Context, appID, credID uint32) error {
	return s.revoke(ctx, appID, credID)
}
