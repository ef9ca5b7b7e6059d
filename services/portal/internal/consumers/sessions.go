package consumers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// Sessions (CONTRACT §3): an opaque random id (32 bytes) in the cookie,
// stored only as its SHA-256; dropped on logout, when the account is
// suspended or deleted, and after SessionIdle without a request. LastSeen
// moves at most once per touchEvery, so reading pages is not a write each.
const (
	SessionIdle = 12 * time.Hour
	touchEvery  = time.Minute
)

// dummyHash is verified against when the e-mail is unknown, so that a
// login takes as long whether or not the account exists.
var dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// Signed is a developer's valid session.
type Signed struct {
	Developer store.Developer
	CSRF      string // the token every form that changes something carries
	hash      []byte
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func sessionHash(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// Login checks e-mail and password and returns a new session id (the
// cookie's value). addr is the client's address: failures count against
// it and the e-mail, at most 10 a minute each (ErrThrottled, without
// checking the password). An inactive account is ErrBadLogin too, with the
// same cost, so a login tells nothing about which accounts exist.
func (s *Service) Login(ctx context.Context, email, password, addr string) (string, error) {
	now := s.now()
	keys := []string{"e-mail " + strings.ToLower(email), "addr " + addr}
	if s.throttle.blocked(now, keys...) {
		return "", ErrThrottled
	}
	if len(password) > maxPasswordLen {
		s.throttle.fail(now, keys...)
		return "", ErrBadLogin
	}
	d, err := s.store.DeveloperByEmail(ctx, email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	stored := d.PasswordHash
	if err != nil {
		stored = dummyHash
	}
	ok, verr := s.hasher.verify(ctx, stored, password)
	if verr != nil && !errors.Is(verr, errBadHash) {
		return "", verr
	}
	if err != nil || !ok || !d.Active {
		s.throttle.fail(now, keys...)
		return "", ErrBadLogin
	}
	id := randomToken()
	if err := s.store.CreateSession(ctx, sessionHash(id), store.Session{UserID: d.ID, CSRF: randomToken(), LastSeen: now.UTC()}); err != nil {
		return "", err
	}
	return id, nil
}

// Session returns the signed-in developer of a session id; ErrNoSession
// when it is unknown, idle too long, or its account is no longer active.
func (s *Service) Session(ctx context.Context, id string) (Signed, error) {
	if id == "" || len(id) > 64 {
		return Signed{}, ErrNoSession
	}
	h := sessionHash(id)
	sess, err := s.store.GetSession(ctx, h)
	if errors.Is(err, store.ErrNotFound) {
		return Signed{}, ErrNoSession
	}
	if err != nil {
		return Signed{}, err
	}
	now := s.now().UTC()
	if now.Sub(sess.LastSeen) > SessionIdle {
		_ = s.store.DeleteSession(ctx, h)
		return Signed{}, ErrNoSession
	}
	d, err := s.store.GetDeveloper(ctx, sess.UserID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !d.Active) {
		_ = s.store.DeleteSession(ctx, h)
		return Signed{}, ErrNoSession
	}
	if err != nil {
		return Signed{}, err
	}
	if now.Sub(sess.LastSeen) > touchEvery {
		if err := s.store.TouchSession(ctx, h, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			return Signed{}, err
		}
	}
	return Signed{Developer: d, CSRF: sess.CSRF, hash: h}, nil
}

// CSRFValid reports whether token is the session's CSRF token.
func (sg Signed) CSRFValid(token string) bool {
	return sg.CSRF != "" && subtle.ConstantTimeCompare([]byte(token), []byte(sg.CSRF)) == 1
}

// Logout drops the session.
func (s *Service) Logout(ctx context.Context, sg Signed) error {
	return s.store.DeleteSession(ctx, sg.hash)
}

// CreateApp stores a new app of the signed-in developer.
func (s *Service) CreateApp(ctx context.Context, sg Signed, name, description string) (store.App, error) {
	problems := textProblems("Name", name, maxName, true)
	problems = append(problems, textProblems("Description", description, maxDescription, false)...)
	if problems != nil {
		return store.App{}, &Invalid{problems}
	}
	return s.store.CreateApp(ctx, store.App{UserID: sg.Developer.ID, Name: name, Description: description, CreatedAt: s.now().UTC()})
}

// MyApps lists the signed-in developer's apps.
func (s *Service) MyApps(ctx context.Context, sg Signed) ([]store.App, error) {
	return s.store.AppsOf(ctx, sg.Developer.ID)
}

// MyApp reads one of the signed-in developer's apps (another's is
// store.ErrNotFound, like an unknown id) for its page: keys not yet seen
// are in the answer's Unseen fields, and cleared in the store first, so
// each is shown once.
func (s *Service) MyApp(ctx context.Context, sg Signed, id uint32) (store.App, error) {
	a, err := s.store.GetApp(ctx, id)
	if err != nil {
		return a, err
	}
	if a.UserID != sg.Developer.ID {
		return store.App{}, store.ErrNotFound
	}
	shown := a
	unseen := false
	for _, c := range a.Credentials {
		unseen = unseen || c.Unseen != ""
	}
	if !unseen {
		return a, nil
	}
	_, err = s.store.UpdateApp(ctx, id, func(a *store.App) error {
		for i := range a.Credentials {
			a.Credentials[i].Unseen = ""
		}
		return nil
	})
	return shown, err
}

// MyAccessRequests lists the signed-in developer's requests.
func (s *Service) MyAccessRequests(ctx context.Context, sg Signed) ([]store.AccessRequest, error) {
	all, err := s.store.ListAccessRequests(ctx, "")
	out := all[:0]
	for _, r := range all {
		if r.UserID == sg.Developer.ID {
			out = append(out, r)
		}
	}
	return out, err
}

// Roll replaces a credential's key: a new key with the same policies is
// recorded (shown once on the next view of the app page), then the old one
// is deleted in management. If that delete fails the old key is no longer
// recorded, and reconciliation deletes it at the next start.
func (s *Service) Roll(ctx context.Context, sg Signed, appID, credID uint32) error {
	a, err := s.MyApp(ctx, sg, appID)
	if err != nil {
		return err
	}
	old, ok := credential(a, credID)
	if !ok {
		return store.ErrNotFound
	}
	if err := s.needKeys(); err != nil {
		return err
	}
	spec, err := s.keySpec(ctx, store.AccessRequest{UserID: a.UserID, AppID: a.ID, ProductID: old.ProductID, PlanID: old.PlanID})
	if err != nil {
		return err
	}
	key, hash, err := s.keys.CreateKey(ctx, spec)
	if err != nil {
		return &ManagementError{"key create", err}
	}
	_, err = s.store.UpdateApp(ctx, appID, func(a *store.App) error {
		for i, c := range a.Credentials {
			if c.ID == credID && c.KeyHash == old.KeyHash {
				a.Credentials[i].KeyHash, a.Credentials[i].KeyTail, a.Credentials[i].Unseen = hash, tail(key), key
				return nil
			}
		}
		return store.ErrNotFound
	})
	if err != nil {
		if derr := s.keys.DeleteKey(context.WithoutCancel(ctx), hash); derr != nil {
			s.log.Warn("key of a failed roll not deleted; reconciliation at the next start deletes it", "key_hash", hash, "error", derr)
		}
		return err
	}
	if err := s.keys.DeleteKey(ctx, old.KeyHash); err != nil {
		return &ManagementError{"key delete", err}
	}
	return nil
}

// ExpireSessions removes the sessions idle longer than SessionIdle, a
// hundred per transaction; the portal runs it every SweepEvery, so that
// sessions nobody presents again do not pile up in the store.
func (s *Service) ExpireSessions(ctx context.Context) error {
	cutoff := s.now().UTC().Add(-SessionIdle)
	for {
		n, err := s.store.ExpireSessions(ctx, cutoff, 100)
		if err != nil || n < 100 {
			return err
		}
	}
}

// SweepEvery is how often the portal removes idle sessions.
const SweepEvery = time.Hour
