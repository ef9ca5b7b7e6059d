package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	fastjson "github.com/goccy/go-json"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// User is a management user. KeyHash is the SHA-256 of its access key; the
// key itself is never stored. The record's encoding is this struct as JSON:
// the store's own type, not a wire message.
type User struct {
	ID          string            `json:"id"`
	FirstName   string            `json:"first_name"`
	LastName    string            `json:"last_name"`
	Email       string            `json:"email_address"`
	Permissions map[string]string `json:"user_permissions"`
	KeyHash     []byte            `json:"key_hash"`
	CreatedAt   time.Time         `json:"created_at"`
	// Inactive is set on a deactivated user, whose key is refused (401)
	// until it is reactivated; the zero value is an active user.
	Inactive bool `json:"inactive,omitempty"`
}

// ActiveAdmin reports whether u is an admin whose key works.
func (u User) ActiveAdmin() bool { return !u.Inactive && IsAdmin(u.Permissions) }

// IsAdmin reports whether permissions make an admin, as in the Tyk
// Dashboard: none at all, or IsAdmin "admin" (or "true").
func IsAdmin(perms map[string]string) bool {
	if len(perms) == 0 {
		return true
	}
	v := perms["IsAdmin"]
	return v == "admin" || v == "true"
}

func emailKey(email string) []byte {
	return key(userEmailPrefix, strings.ToLower(strings.TrimSpace(email)))
}

func newUserID() string {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 12), uint32(time.Now().Unix()))
	b = b[:12]
	rand.Read(b[4:])
	return hex.EncodeToString(b)
}

// CreateUser stores u under a new id and indexes its key hash and email;
// ErrConflict when the email is taken.
func (s *Store) CreateUser(ctx context.Context, u User) (User, error) {
	var created User
	err := s.Update(ctx, func(tx *Tx) error {
		nu := u
		if err := tx.putNewUser(&nu); err != nil {
			return err
		}
		auditctx.SetObject(ctx, nu.ID) // the request's audit entry names the new user
		created = nu
		return nil
	})
	return created, err
}

func (t *Tx) putNewUser(u *User) error {
	if v, err := t.r.Get(emailKey(u.Email)); err != nil || v != nil {
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: email %q", ErrConflict, u.Email)
	}
	for {
		u.ID = newUserID()
		v, err := t.r.Get(key(userPrefix, u.ID))
		if err != nil {
			return err
		}
		if v == nil {
			break
		}
	}
	if u.CreatedAt.IsZero() {
		u.CreatedAt = time.Now().UTC().Truncate(time.Second)
	}
	if u.Permissions == nil {
		u.Permissions = map[string]string{}
	}
	if err := t.putUser(*u); err != nil {
		return err
	}
	if err := t.put(emailKey(u.Email), []byte(u.ID)); err != nil {
		return err
	}
	return t.put(key(userKeyPrefix, string(u.KeyHash)), []byte(u.ID))
}

func (t *Tx) putUser(u User) error {
	v, err := json.Marshal(u)
	if err != nil {
		return err
	}
	return t.put(key(userPrefix, u.ID), v)
}

func decodeUser(id string, v []byte) (User, error) {
	var u User
	// goccy/go-json: every request decodes its caller (users are written
	// with encoding/json); it takes about a third of encoding/json's time.
	if err := fastjson.Unmarshal(v, &u); err != nil {
		return User{}, fmt.Errorf("%w: user %q: %v", ErrCorrupt, id, err)
	}
	return u, nil
}

func (t *Tx) user(id string) (User, error) {
	v, err := t.r.Get(key(userPrefix, id))
	if err != nil {
		return User{}, err
	}
	if v == nil {
		return User{}, ErrNotFound
	}
	return decodeUser(id, v)
}

// User reads one user.
func (s *Store) User(ctx context.Context, id string) (User, error) {
	var u User
	err := s.View(ctx, func(tx *Tx) (err error) {
		u, err = tx.user(id)
		return err
	})
	return u, err
}

// ListUsers returns up to limit users (limit < 0: all) after skipping
// offset, in id order, and the number of users, from one snapshot.
func (s *Store) ListUsers(ctx context.Context, offset, limit int) ([]User, int, error) {
	var out []User
	var total int
	err := s.View(ctx, func(tx *Tx) (err error) {
		if total, err = tx.r.Count(userPrefix); err != nil {
			return err
		}
		i := 0
		return tx.r.Scan(userPrefix, nil, func(k, v []byte) error {
			if limit >= 0 && len(out) >= limit {
				return kv.ErrStop
			}
			if i++; i <= offset {
				return nil
			}
			u, err := decodeUser(string(k[len(userPrefix):]), v)
			out = append(out, u)
			return err
		})
	})
	return out, total, err
}

// UpdateUser runs update on the stored user in one transaction and stores
// the result, keeping the email and key indexes right (ErrConflict when the
// new email is another user's). update may run more than once, each time on
// a fresh copy of the stored user.
func (s *Store) UpdateUser(ctx context.Context, id string, update func(*User) error) (User, error) {
	var updated User
	err := s.Update(ctx, func(tx *Tx) error {
		old, err := tx.user(id)
		if err != nil {
			return err
		}
		u, _ := decodeUser(id, mustJSON(old)) // a deep copy: update may change the map
		if err := update(&u); err != nil {
			return err
		}
		u.ID = id
		if oldKey, newKey := emailKey(old.Email), emailKey(u.Email); !bytes.Equal(oldKey, newKey) {
			v, err := tx.r.Get(newKey)
			if err != nil {
				return err
			}
			if v != nil {
				return fmt.Errorf("%w: email %q", ErrConflict, u.Email)
			}
			if err := tx.del(oldKey); err != nil {
				return err
			}
			if err := tx.put(newKey, []byte(id)); err != nil {
				return err
			}
		}
		if !bytes.Equal(old.KeyHash, u.KeyHash) {
			if err := tx.delKey(userKeyPrefix, string(old.KeyHash)); err != nil {
				return err
			}
			if err := tx.put(key(userKeyPrefix, string(u.KeyHash)), []byte(id)); err != nil {
				return err
			}
		}
		if old.ActiveAdmin() && !u.ActiveAdmin() {
			if err := tx.keepAnAdmin(id); err != nil {
				return err
			}
		}
		if err := tx.putUser(u); err != nil {
			return err
		}
		updated = u
		return nil
	})
	return updated, err
}

// keepAnAdmin refuses (ErrLastAdmin) a change that leaves no active admin
// but the user id, which is about to be deleted, demoted or deactivated.
func (t *Tx) keepAnAdmin(id string) error {
	other := false
	err := t.r.Scan(userPrefix, nil, func(k, v []byte) error {
		if string(k[len(userPrefix):]) == id {
			return nil
		}
		u, err := decodeUser(string(k[len(userPrefix):]), v)
		if err != nil {
			return err
		}
		if u.ActiveAdmin() {
			other = true
			return kv.ErrStop
		}
		return nil
	})
	if err == nil && !other {
		err = ErrLastAdmin
	}
	return err
}

func mustJSON(u User) []byte {
	b, _ := json.Marshal(u)
	return b
}

// DeleteUser removes a user with its key and email in one transaction,
// if check (when not nil) accepts the stored user.
func (s *Store) DeleteUser(ctx context.Context, id string, check func(User) error) error {
	return s.Update(ctx, func(tx *Tx) error {
		u, err := tx.user(id)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(u); err != nil {
				return err
			}
		}
		if u.ActiveAdmin() {
			if err := tx.keepAnAdmin(id); err != nil {
				return err
			}
		}
		if err := tx.delKey(userKeyPrefix, string(u.KeyHash)); err != nil {
			return err
		}
		if err := tx.del(emailKey(u.Email)); err != nil {
			return err
		}
		return tx.delKey(userPrefix, id)
	})
}

// UserByKeyHash finds the user whose access key hashes to hash. Every
// request looks its caller up: while the engine has committed nothing since
// a key's last lookup (kv.Committed: bbolt), the answer is that lookup's,
// without a transaction (callerMemo).
func (s *Store) UserByKeyHash(ctx context.Context, hash []byte) (User, error) {
	if rev, ok := kv.CommittedOf(s.e); ok {
		if u, hit := s.callers.get(hash, rev); hit {
			return u, nil
		}
	}
	var u User
	err := s.View(ctx, func(tx *Tx) error {
		id, err := tx.r.Get(key(userKeyPrefix, string(hash)))
		if err != nil {
			return err
		}
		if id == nil {
			return ErrNotFound
		}
		raw, err := tx.r.Get(key(userPrefix, string(id)))
		switch {
		case err != nil:
			return err
		case raw == nil:
			return ErrNotFound
		}
		u, err = s.users.decode(string(id), raw)
		if rev, ok := kv.RevisionOf(tx.r); ok && err == nil {
			s.callers.set(hash, rev, u)
		}
		return err
	})
	return u, err
}

// HasAdmin reports whether any user is an active admin.
func (s *Store) HasAdmin(ctx context.Context) (bool, error) {
	found := false
	err := s.View(ctx, func(tx *Tx) (err error) { found, err = tx.hasAdmin(); return err })
	return found, err
}

func (t *Tx) hasAdmin() (bool, error) {
	found := false
	err := t.r.Scan(userPrefix, nil, func(k, v []byte) error {
		u, err := decodeUser(string(k[len(userPrefix):]), v)
		if err != nil {
			return err
		}
		if u.ActiveAdmin() {
			found = true
			return kv.ErrStop
		}
		return nil
	})
	return found, err
}

// EnsureAdmin makes the credential with this key hash an active admin:
// a user holding that key is promoted and reactivated if it is not one;
// otherwise a bootstrap user is created — unless, with onlyFirst, any
// active admin exists. One transaction, so replicas starting together
// create one (credential.AdminStore). The new user's e-mail is
// bootstrap-admin@gatehouse.invalid, or, when a user holds that, one with
// a random tag: never derived from the secret.
func (s *Store) EnsureAdmin(ctx context.Context, hash []byte, onlyFirst bool) (created bool, err error) {
	err = s.Update(ctx, func(tx *Tx) error {
		created = false
		v, err := tx.r.Get(key(userKeyPrefix, string(hash)))
		if err != nil {
			return err
		}
		if v != nil {
			return tx.restoreAdmin(string(v))
		}
		if onlyFirst {
			if has, err := tx.hasAdmin(); err != nil || has {
				return err
			}
		}
		email, err := tx.freeEmail("bootstrap-admin")
		if err != nil {
			return err
		}
		if err := tx.putNewUser(&User{FirstName: "Bootstrap", LastName: "Admin", Email: email,
			Permissions: map[string]string{"IsAdmin": "admin"}, KeyHash: hash}); err != nil {
			return err
		}
		created = true
		return nil
	})
	return created && err == nil, err
}

// RetireBootstrap makes hash the bootstrap credential the store remembers
// and, when it remembered another one, deletes the user still holding that
// one (a new --bootstrap-token retires the previous; one re-keyed since
// holds another key and is kept). It returns the retired user's id, or "".
func (s *Store) RetireBootstrap(ctx context.Context, hash []byte) (retired string, err error) {
	err = s.Update(ctx, func(tx *Tx) error {
		retired = ""
		prev, err := tx.r.Get(bootstrapKey)
		if err != nil || bytes.Equal(prev, hash) {
			return err
		}
		var id []byte
		if prev != nil {
			if id, err = tx.r.Get(key(userKeyPrefix, string(prev))); err != nil {
				return err
			}
		}
		if id != nil {
			if err := tx.deleteUserRecords(string(id)); err != nil {
				return err
			}
		}
		if err := tx.put(bootstrapKey, bytes.Clone(hash)); err != nil {
			return err
		}
		retired = string(id)
		return nil
	})
	return retired, err
}

// ErrAdminKey: a service user's key is an admin's key.
var ErrAdminKey = errors.New("the key is an admin's: a service needs a key of its own")

// EnsureServiceUser makes the credential with this key hash the user of
// service name (the portal, calling management over gRPC): active, with
// exactly perms, e-mail <name>-service@gatehouse.invalid (or one with a
// random tag when that is taken) on creation; and it retires the user
// holding the key remembered for name before, when it was another (a new
// key retires the old one, as a new --bootstrap-token does). A key an admin
// holds is refused (ErrAdminKey): it is never demoted. One transaction. It
// returns the retired user's id, or "".
func (s *Store) EnsureServiceUser(ctx context.Context, name string, hash []byte, perms map[string]string) (retired string, err error) {
	err = s.Update(ctx, func(tx *Tx) error {
		retired = ""
		remembered := key(serviceKey, name)
		prev, err := tx.r.Get(remembered)
		if err != nil {
			return err
		}
		if prev != nil && !bytes.Equal(prev, hash) {
			id, err := tx.r.Get(key(userKeyPrefix, string(prev)))
			if err != nil {
				return err
			}
			if id != nil {
				if err := tx.deleteUserRecords(string(id)); err != nil {
					return err
				}
				retired = string(id)
			}
		}
		id, err := tx.r.Get(key(userKeyPrefix, string(hash)))
		if err != nil {
			return err
		}
		if id != nil {
			u, err := tx.user(string(id))
			if err != nil {
				return err
			}
			if IsAdmin(u.Permissions) {
				return ErrAdminKey
			}
			if u.Inactive || !maps.Equal(u.Permissions, perms) {
				u.Inactive, u.Permissions = false, maps.Clone(perms)
				if err := tx.putUser(u); err != nil {
					return err
				}
			}
		} else {
			email, err := tx.freeEmail(name + "-service")
			if err != nil {
				return err
			}
			if err := tx.putNewUser(&User{FirstName: name, LastName: "service", Email: email,
				Permissions: maps.Clone(perms), KeyHash: hash}); err != nil {
				return err
			}
		}
		return tx.put(remembered, bytes.Clone(hash))
	})
	return retired, err
}

// deleteUserRecords deletes user id's record and its key and e-mail index
// entries (a retired bootstrap or service credential).
func (t *Tx) deleteUserRecords(id string) error {
	u, err := t.user(id)
	if err != nil {
		return err
	}
	for _, k := range [][]byte{key(userKeyPrefix, string(u.KeyHash)), emailKey(u.Email), key(userPrefix, u.ID)} {
		if err := t.del(k); err != nil {
			return err
		}
	}
	return nil
}

// restoreAdmin makes user id an active admin, keeping its other fields.
func (t *Tx) restoreAdmin(id string) error {
	u, err := t.user(id)
	if err != nil || u.ActiveAdmin() {
		return err
	}
	u.Inactive = false
	u.Permissions = map[string]string{"IsAdmin": "admin"}
	return t.putUser(u)
}

// freeEmail is the first unused of <local>@gatehouse.invalid and
// <local>+<random>@gatehouse.invalid.
func (t *Tx) freeEmail(local string) (string, error) {
	email := local + "@gatehouse.invalid"
	for {
		v, err := t.r.Get(emailKey(email))
		if err != nil || v == nil {
			return email, err
		}
		tag := make([]byte, 4)
		rand.Read(tag)
		email = local + "+" + hex.EncodeToString(tag) + "@gatehouse.invalid"
	}
}

// checkUsers verifies the user indexes against the records and counts the
// entries they should hold, for tests.
func checkUsers(t *Tx, want map[string]int) error {
	return t.r.Scan(userPrefix, nil, func(k, v []byte) error {
		u, err := decodeUser(string(k[len(userPrefix):]), v)
		if err != nil {
			return err
		}
		for _, idx := range [][]byte{key(userKeyPrefix, string(u.KeyHash)), emailKey(u.Email)} {
			if got, err := t.r.Get(idx); err != nil || string(got) != u.ID {
				return fmt.Errorf("user index %q → %q, want %q (%v)", idx, got, u.ID, err)
			}
		}
		want[string(userKeyPrefix)]++
		want[string(userEmailPrefix)]++
		return nil
	})
}
