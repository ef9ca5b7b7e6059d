package store

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// The consumer side of the portal (CONTRACT §3 "Consumers"): plans,
// developers, their apps and the credentials in them, access requests and
// the developers' sign-in sessions. The rules (who may do what, which
// management calls go with a write) live in internal/consumers; these
// methods only keep records, one transaction each.

// Plan is a management policy with rate and quota that products offer.
type Plan struct {
	ID          uint32    `json:"id"`
	Name        string    `json:"name"`
	PolicyID    string    `json:"policy_id"`
	AutoApprove bool      `json:"auto_approve"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Developer is an API consumer with an account on the public site.
type Developer struct {
	ID    uint32 `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	// Active developers may sign in and their keys work; a new account is
	// inactive until an admin activates it (--developer-signup approval).
	Active bool `json:"active"`
	// PasswordHash is the PHC-style argon2id string (internal/consumers).
	PasswordHash string    `json:"password_hash"`
	CreatedAt    time.Time `json:"created_at"`
}

// App is a developer's application; it holds the credentials issued to it.
type App struct {
	ID          uint32          `json:"id"`
	UserID      uint32          `json:"user_id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Credentials []AppCredential `json:"credentials"`
	CreatedAt   time.Time       `json:"created_at"`
}

// AppCredential is a key management issued for one product and plan.
type AppCredential struct {
	ID        uint32 `json:"id"`
	ProductID uint32 `json:"product_id"`
	PlanID    uint32 `json:"plan_id"`
	RequestID uint32 `json:"request_id"`
	KeyHash   string `json:"key_hash"`
	// KeyTail is the key's last four characters, what the developer sees
	// after the first view.
	KeyTail string `json:"key_tail"`
	// Unseen is the key itself until its developer's first view of the app
	// page (CONTRACT: shown once); then it is cleared.
	Unseen    string    `json:"unseen,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// The statuses of an access request.
const (
	RequestPending  = "pending"
	RequestApproved = "approved"
	RequestRejected = "rejected"
)

// AccessRequest is a developer's request for access to a product's plan for an app.
type AccessRequest struct {
	ID        uint32 `json:"id"`
	UserID    uint32 `json:"user_id"`
	AppID     uint32 `json:"app_id"`
	ProductID uint32 `json:"product_id"`
	PlanID    uint32 `json:"plan_id"`
	Status    string `json:"status"`
	// Error names why the last approval failed (the request stays pending).
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Session is a developer's sign-in on the public site, stored by the hash
// of its cookie value.
type Session struct {
	UserID   uint32    `json:"user_id"`
	CSRF     string    `json:"csrf"`
	LastSeen time.Time `json:"last_seen"`
}

var (
	planPrefix      = []byte("plan/")
	developerPrefix = []byte("developer/")
	emailPrefix     = []byte("developeremail/")
	appPrefix       = []byte("app/")
	appsOfPrefix    = []byte("appsof/")
	requestPrefix   = []byte("request/")
	sessionPrefix   = []byte("session/")
)

const (
	planSeq       = "plans"
	developerSeq  = "developers"
	appSeq        = "apps"
	credentialSeq = "credentials"
	requestSeq    = "requests"
)

func planKey(id uint32) []byte         { return idKey(planPrefix, id) }
func developerKey(id uint32) []byte    { return idKey(developerPrefix, id) }
func appKey(id uint32) []byte          { return idKey(appPrefix, id) }
func appsOf(user uint32) []byte        { return idKey(appsOfPrefix, user) }
func appOfKey(user, app uint32) []byte { return idKey(appsOfPrefix, user, app) }
func requestKey(id uint32) []byte      { return idKey(requestPrefix, id) }
func sessionKey(hash []byte) []byte    { return concat(sessionPrefix, string(hash)) }

// emailKey indexes developers by e-mail, compared without case.
func emailKey(email string) []byte { return concat(emailPrefix, strings.ToLower(email)) }

// setObject names a new record in the request's audit entry.
func setObject(ctx context.Context, id uint32) {
	auditctx.SetObject(ctx, strconv.FormatUint(uint64(id), 10))
}

// list decodes every record under prefix, in ascending id order; keep
// filters (nil keeps all).
func list[T any](ctx context.Context, s *Store, prefix []byte, what string, keep func(T) bool) ([]T, error) {
	out := []T{}
	err := each(ctx, s, prefix, what, keep, func(r T) error { out = append(out, r); return nil })
	return out, err
}

// each calls fn with every record under prefix that keep keeps (nil: every
// one), in key order, from one snapshot: a whole list written as it is read.
func each[T any](ctx context.Context, s *Store, prefix []byte, what string, keep func(T) bool, fn func(T) error) error {
	return s.kv.View(ctx, func(tx kv.ReadTx) error {
		return tx.Scan(prefix, nil, func(_, v []byte) error {
			r, err := decode[T](v, what)
			if err != nil || (keep != nil && !keep(r)) {
				return err
			}
			return fn(r)
		})
	})
}

// read reads one record.
func read[T any](ctx context.Context, s *Store, k []byte, what string) (T, error) {
	var out T
	err := s.kv.View(ctx, func(tx kv.ReadTx) (err error) {
		out, err = get[T](tx, k, what)
		return err
	})
	return out, err
}

// change runs update on the record at k in one transaction and stores the
// result unless update fails.
func change[T any](ctx context.Context, s *Store, k []byte, what string, update func(*T) error) (T, error) {
	var out T
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		r, err := get[T](tx, k, what)
		if err != nil {
			return err
		}
		if err := update(&r); err != nil {
			return err
		}
		if err := put(tx, k, r); err != nil {
			return err
		}
		out = r
		return nil
	})
	return out, err
}

// CreatePlan stores p under a new id.
func (s *Store) CreatePlan(ctx context.Context, p Plan) (Plan, error) {
	var out Plan
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		id, err := kv.NextID32(tx, planSeq)
		if err != nil {
			return err
		}
		setObject(ctx, id)
		rec := p
		rec.ID = id
		if err := put(tx, planKey(id), rec); err != nil {
			return err
		}
		out = rec
		return nil
	})
	return out, err
}

// GetPlan reads one plan.
func (s *Store) GetPlan(ctx context.Context, id uint32) (Plan, error) {
	return read[Plan](ctx, s, planKey(id), "plan")
}

// ListPlans returns every plan in ascending id order.
func (s *Store) ListPlans(ctx context.Context) ([]Plan, error) {
	return list[Plan](ctx, s, planPrefix, "plan", nil)
}

// EachPlan calls fn with every plan, in id order, from one snapshot.
func (s *Store) EachPlan(ctx context.Context, fn func(Plan) error) error {
	return each(ctx, s, planPrefix, "plan", nil, fn)
}

// UpdatePlan changes a plan; the ID cannot change.
func (s *Store) UpdatePlan(ctx context.Context, id uint32, update func(*Plan) error) (Plan, error) {
	return change(ctx, s, planKey(id), "plan", func(p *Plan) error {
		err := update(p)
		p.ID = id
		return err
	})
}

// DeletePlan removes a plan and its id from every product's PlanIDs.
func (s *Store) DeletePlan(ctx context.Context, id uint32) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		if err := mustExist(tx, planKey(id)); err != nil {
			return err
		}
		if err := tx.Scan(productPrefix, nil, func(k, v []byte) error {
			p, err := decode[Product](v, "product")
			if err != nil || !removeID(&p.PlanIDs, id) {
				return err
			}
			return put(tx, bytes.Clone(k), p)
		}); err != nil {
			return err
		}
		return tx.Delete(planKey(id))
	})
}

// MissingPlans returns the ids among ids that name no plan.
func (s *Store) MissingPlans(ctx context.Context, ids []uint32) ([]uint32, error) {
	var missing []uint32
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		missing = nil
		for _, id := range ids {
			ok, err := exists(tx, planKey(id))
			if err != nil {
				return err
			}
			if !ok {
				missing = append(missing, id)
			}
		}
		return nil
	})
	return missing, err
}

func removeID(list *[]uint32, id uint32) bool {
	for i, x := range *list {
		if x == id {
			*list = append((*list)[:i:i], (*list)[i+1:]...)
			return true
		}
	}
	return false
}

// CreateDeveloper stores d under a new id; ErrAlreadyExists when a
// developer has that e-mail (compared without case).
func (s *Store) CreateDeveloper(ctx context.Context, d Developer) (Developer, error) {
	var out Developer
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		taken, err := exists(tx, emailKey(d.Email))
		if err != nil {
			return err
		}
		if taken {
			return ErrAlreadyExists
		}
		id, err := kv.NextID32(tx, developerSeq)
		if err != nil {
			return err
		}
		setObject(ctx, id)
		rec := d
		rec.ID = id
		if err := tx.Put(emailKey(d.Email), idKey(nil, id)); err != nil {
			return err
		}
		if err := put(tx, developerKey(id), rec); err != nil {
			return err
		}
		out = rec
		return nil
	})
	return out, err
}

// GetDeveloper reads one developer.
func (s *Store) GetDeveloper(ctx context.Context, id uint32) (Developer, error) {
	return read[Developer](ctx, s, developerKey(id), "developer")
}

// DeveloperByEmail finds a developer by e-mail (without case).
func (s *Store) DeveloperByEmail(ctx context.Context, email string) (Developer, error) {
	var out Developer
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		raw, err := tx.Get(emailKey(email))
		if err != nil {
			return err
		}
		if len(raw) != 4 {
			return ErrNotFound
		}
		out, err = get[Developer](tx, developerKey(lastID(raw)), "developer")
		return err
	})
	return out, err
}

// ListDevelopers returns every developer in ascending id order.
func (s *Store) ListDevelopers(ctx context.Context) ([]Developer, error) {
	return list[Developer](ctx, s, developerPrefix, "developer", nil)
}

// EachDeveloper calls fn with every developer, in id order, from one snapshot.
func (s *Store) EachDeveloper(ctx context.Context, fn func(Developer) error) error {
	return each(ctx, s, developerPrefix, "developer", nil, fn)
}

// UpdateDeveloper changes a developer; the ID and e-mail cannot change.
// A developer made inactive loses every session in the same transaction.
func (s *Store) UpdateDeveloper(ctx context.Context, id uint32, update func(*Developer) error) (Developer, error) {
	var out Developer
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		d, err := get[Developer](tx, developerKey(id), "developer")
		if err != nil {
			return err
		}
		email := d.Email
		if err := update(&d); err != nil {
			return err
		}
		d.ID, d.Email = id, email
		if !d.Active {
			if err := dropSessions(tx, id); err != nil {
				return err
			}
		}
		if err := put(tx, developerKey(id), d); err != nil {
			return err
		}
		out = d
		return nil
	})
	return out, err
}

// DeleteDeveloper removes a developer, their apps, access requests and
// sessions in one transaction. The caller revokes their keys first.
func (s *Store) DeleteDeveloper(ctx context.Context, id uint32) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		d, err := get[Developer](tx, developerKey(id), "developer")
		if err != nil {
			return err
		}
		if err := tx.Scan(appsOf(id), nil, func(k, _ []byte) error {
			app := lastID(k)
			if err := tx.Delete(appKey(app)); err != nil {
				return err
			}
			return tx.Delete(bytes.Clone(k))
		}); err != nil {
			return err
		}
		if err := tx.Scan(requestPrefix, nil, func(k, v []byte) error {
			r, err := decode[AccessRequest](v, "access request")
			if err != nil || r.UserID != id {
				return err
			}
			return tx.Delete(bytes.Clone(k))
		}); err != nil {
			return err
		}
		if err := dropSessions(tx, id); err != nil {
			return err
		}
		if err := tx.Delete(emailKey(d.Email)); err != nil {
			return err
		}
		return tx.Delete(developerKey(id))
	})
}

// CreateApp stores a new app of a developer, who must exist.
func (s *Store) CreateApp(ctx context.Context, a App) (App, error) {
	var out App
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		if err := mustExist(tx, developerKey(a.UserID)); err != nil {
			return err
		}
		id, err := kv.NextID32(tx, appSeq)
		if err != nil {
			return err
		}
		setObject(ctx, id)
		rec := a
		rec.ID = id
		if rec.Credentials == nil {
			rec.Credentials = []AppCredential{}
		}
		if err := tx.Put(appOfKey(a.UserID, id), []byte{1}); err != nil {
			return err
		}
		if err := put(tx, appKey(id), rec); err != nil {
			return err
		}
		out = rec
		return nil
	})
	return out, err
}

// GetApp reads one app.
func (s *Store) GetApp(ctx context.Context, id uint32) (App, error) {
	return read[App](ctx, s, appKey(id), "app")
}

// ListApps returns every app in ascending id order.
func (s *Store) ListApps(ctx context.Context) ([]App, error) {
	return list[App](ctx, s, appPrefix, "app", nil)
}

// EachApp calls fn with every app, in id order, from one snapshot.
func (s *Store) EachApp(ctx context.Context, fn func(App) error) error {
	return each(ctx, s, appPrefix, "app", nil, fn)
}

// AppsOf returns a developer's apps in ascending id order.
func (s *Store) AppsOf(ctx context.Context, user uint32) ([]App, error) {
	var out []App
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		out = []App{}
		return tx.Scan(appsOf(user), nil, func(k, _ []byte) error {
			a, err := get[App](tx, appKey(lastID(k)), "app")
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			out = append(out, a)
			return err
		})
	})
	return out, err
}

// UpdateApp changes an app (its credentials too); the ID and owner cannot change.
func (s *Store) UpdateApp(ctx context.Context, id uint32, update func(*App) error) (App, error) {
	return change(ctx, s, appKey(id), "app", func(a *App) error {
		user := a.UserID
		err := update(a)
		a.ID, a.UserID = id, user
		return err
	})
}

// DeleteApp removes an app and its access requests. The caller revokes its keys first.
func (s *Store) DeleteApp(ctx context.Context, id uint32) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		a, err := get[App](tx, appKey(id), "app")
		if err != nil {
			return err
		}
		if err := tx.Scan(requestPrefix, nil, func(k, v []byte) error {
			r, err := decode[AccessRequest](v, "access request")
			if err != nil || r.AppID != id {
				return err
			}
			return tx.Delete(bytes.Clone(k))
		}); err != nil {
			return err
		}
		if err := tx.Delete(appOfKey(a.UserID, id)); err != nil {
			return err
		}
		return tx.Delete(appKey(id))
	})
}

// CreateAccessRequest files r under a new id; its app must exist and
// belong to r.UserID, and its product must exist.
func (s *Store) CreateAccessRequest(ctx context.Context, r AccessRequest) (AccessRequest, error) {
	var out AccessRequest
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		a, err := get[App](tx, appKey(r.AppID), "app")
		if err != nil {
			return err
		}
		if a.UserID != r.UserID {
			return ErrNotFound
		}
		if err := mustExist(tx, productKey(r.ProductID)); err != nil {
			return err
		}
		id, err := kv.NextID32(tx, requestSeq)
		if err != nil {
			return err
		}
		setObject(ctx, id)
		rec := r
		rec.ID = id
		if err := put(tx, requestKey(id), rec); err != nil {
			return err
		}
		out = rec
		return nil
	})
	return out, err
}

// GetAccessRequest reads one access request.
func (s *Store) GetAccessRequest(ctx context.Context, id uint32) (AccessRequest, error) {
	return read[AccessRequest](ctx, s, requestKey(id), "access request")
}

// ListAccessRequests returns the access requests with that status (every
// one when status is empty), in ascending id order.
func (s *Store) ListAccessRequests(ctx context.Context, status string) ([]AccessRequest, error) {
	return list(ctx, s, requestPrefix, "access request", func(r AccessRequest) bool { return status == "" || r.Status == status })
}

// EachAccessRequest calls fn with every access request with a status (""
// for all), in id order, from one snapshot.
func (s *Store) EachAccessRequest(ctx context.Context, status string, fn func(AccessRequest) error) error {
	return each(ctx, s, requestPrefix, "access request", func(r AccessRequest) bool { return status == "" || r.Status == status }, fn)
}

// UpdateAccessRequest changes an access request (status, error).
func (s *Store) UpdateAccessRequest(ctx context.Context, id uint32, update func(*AccessRequest) error) (AccessRequest, error) {
	return change(ctx, s, requestKey(id), "access request", func(r *AccessRequest) error {
		err := update(r)
		r.ID = id
		return err
	})
}

// ErrNotPending means the access request was decided meanwhile.
var ErrNotPending = errors.New("access request not pending")

// Grant records an approval in one transaction: the request (which must
// still be pending) becomes approved and its app gets c, with a new
// credential id. ErrNotFound when the request or app is gone, ErrNotPending
// when it was decided meanwhile: then the caller deletes the key it made.
func (s *Store) Grant(ctx context.Context, request uint32, c AppCredential, now time.Time) (AccessRequest, AppCredential, error) {
	var outR AccessRequest
	var outC AppCredential
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		r, err := get[AccessRequest](tx, requestKey(request), "access request")
		if err != nil {
			return err
		}
		if r.Status != RequestPending {
			return ErrNotPending
		}
		a, err := get[App](tx, appKey(r.AppID), "app")
		if err != nil {
			return err
		}
		id, err := kv.NextID32(tx, credentialSeq)
		if err != nil {
			return err
		}
		cred := c
		cred.ID, cred.RequestID, cred.ProductID, cred.PlanID = id, r.ID, r.ProductID, r.PlanID
		a.Credentials = append(a.Credentials, cred)
		r.Status, r.Error, r.UpdatedAt = RequestApproved, "", now
		if err := put(tx, appKey(a.ID), a); err != nil {
			return err
		}
		if err := put(tx, requestKey(r.ID), r); err != nil {
			return err
		}
		outR, outC = r, cred
		return nil
	})
	return outR, outC, err
}

// CreateSession stores a session by the hash of its cookie value.
func (s *Store) CreateSession(ctx context.Context, hash []byte, sess Session) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error { return put(tx, sessionKey(hash), sess) })
}

// GetSession reads a session by the hash of its cookie value.
func (s *Store) GetSession(ctx context.Context, hash []byte) (Session, error) {
	return read[Session](ctx, s, sessionKey(hash), "session")
}

// TouchSession moves a session's LastSeen to now.
func (s *Store) TouchSession(ctx context.Context, hash []byte, now time.Time) error {
	_, err := change(ctx, s, sessionKey(hash), "session", func(sess *Session) error { sess.LastSeen = now; return nil })
	return err
}

// DeleteSession removes a session; an absent one is no error.
func (s *Store) DeleteSession(ctx context.Context, hash []byte) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error { return tx.Delete(sessionKey(hash)) })
}

// ExpireSessions removes up to max sessions last seen before cutoff in
// one transaction (max keeps it within etcd's writes per transaction) and
// returns how many it removed.
func (s *Store) ExpireSessions(ctx context.Context, cutoff time.Time, max int) (int, error) {
	var removed int
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		n := 0
		err := tx.Scan(sessionPrefix, nil, func(k, v []byte) error {
			sess, err := decode[Session](v, "session")
			if err != nil || !sess.LastSeen.Before(cutoff) {
				return err
			}
			if n == max {
				return kv.ErrStop
			}
			n++
			return tx.Delete(bytes.Clone(k))
		})
		removed = n
		return err
	})
	return removed, err
}

// dropSessions removes every session of a developer.
func dropSessions(tx kv.WriteTx, user uint32) error {
	return tx.Scan(sessionPrefix, nil, func(k, v []byte) error {
		sess, err := decode[Session](v, "session")
		if err != nil || sess.UserID != user {
			return err
		}
		return tx.Delete(bytes.Clone(k))
	})
}
