package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// User is a management user. KeyHash is the SHA-256 of its access key; the
// key itself is never stored.
type User struct {
	ID          string            `json:"id"`
	FirstName   string            `json:"first_name"`
	LastName    string            `json:"last_name"`
	Email       string            `json:"email_address"`
	Permissions map[string]string `json:"user_permissions"`
	KeyHash     []byte            `json:"key_hash"`
	CreatedAt   time.Time         `json:"created_at"`
}

// IsAdmin reports whether permissions make an admin, as in the Tyk
// Dashboard: none at all, or IsAdmin "admin" (or "true").
func IsAdmin(perms map[string]string) bool {
	if len(perms) == 0 {
		return true
	}
	v := perms["IsAdmin"]
	return v == "admin" || v == "true"
}

func emailKey(email string) []byte { return []byte(strings.ToLower(strings.TrimSpace(email))) }

func newUserID() string {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 12), uint32(time.Now().Unix()))
	b = b[:12]
	rand.Read(b[4:])
	return hex.EncodeToString(b)
}

// CreateUser stores u under a new id and indexes its key hash and email;
// ErrConflict when the email is taken.
func (s *Store) CreateUser(_ context.Context, u User) (User, error) {
	err := s.db.Update(func(tx *bolt.Tx) error { return putNewUser(tx, &u) })
	return u, err
}

func putNewUser(tx *bolt.Tx, u *User) error {
	emails := tx.Bucket(userEmailBucket)
	if emails.Get(emailKey(u.Email)) != nil {
		return fmt.Errorf("%w: email %q", ErrConflict, u.Email)
	}
	users := tx.Bucket(usersBucket)
	u.ID = newUserID()
	for users.Get([]byte(u.ID)) != nil {
		u.ID = newUserID()
	}
	if u.CreatedAt.IsZero() {
		u.CreatedAt = time.Now().UTC().Truncate(time.Second)
	}
	if u.Permissions == nil {
		u.Permissions = map[string]string{}
	}
	if err := putUser(tx, *u); err != nil {
		return err
	}
	if err := emails.Put(emailKey(u.Email), []byte(u.ID)); err != nil {
		return err
	}
	return tx.Bucket(userKeyBucket).Put(u.KeyHash, []byte(u.ID))
}

func putUser(tx *bolt.Tx, u User) error {
	v, err := json.Marshal(u)
	if err != nil {
		return err
	}
	return tx.Bucket(usersBucket).Put([]byte(u.ID), v)
}

func getUser(tx *bolt.Tx, id string) (User, error) {
	v := tx.Bucket(usersBucket).Get([]byte(id))
	if v == nil {
		return User{}, ErrNotFound
	}
	var u User
	if err := json.Unmarshal(v, &u); err != nil {
		return User{}, fmt.Errorf("%w: user %q: %v", ErrCorrupt, id, err)
	}
	return u, nil
}

// User reads one user.
func (s *Store) User(_ context.Context, id string) (User, error) {
	var u User
	err := s.db.View(func(tx *bolt.Tx) (err error) {
		u, err = getUser(tx, id)
		return err
	})
	return u, err
}

// ListUsers returns up to limit users (limit < 0: all) after skipping
// offset, in id order, and the number of users.
func (s *Store) ListUsers(_ context.Context, offset, limit int) ([]User, int, error) {
	var out []User
	var total int
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(usersBucket)
		total = b.Stats().KeyN
		c := b.Cursor()
		i := 0
		for k, _ := c.First(); k != nil && (limit < 0 || len(out) < limit); k, _ = c.Next() {
			if i++; i <= offset {
				continue
			}
			u, err := getUser(tx, string(k))
			if err != nil {
				return err
			}
			out = append(out, u)
		}
		return nil
	})
	return out, total, err
}

// UpdateUser runs update on the stored user in one transaction and stores
// the result, keeping the email and key indexes right (ErrConflict when the
// new email is another user's).
func (s *Store) UpdateUser(_ context.Context, id string, update func(*User) error) (User, error) {
	var u User
	err := s.db.Update(func(tx *bolt.Tx) error {
		old, err := getUser(tx, id)
		if err != nil {
			return err
		}
		u = old
		if err := update(&u); err != nil {
			return err
		}
		u.ID = id
		emails := tx.Bucket(userEmailBucket)
		if !bytes.Equal(emailKey(old.Email), emailKey(u.Email)) {
			if emails.Get(emailKey(u.Email)) != nil {
				return fmt.Errorf("%w: email %q", ErrConflict, u.Email)
			}
			if err := emails.Delete(emailKey(old.Email)); err != nil {
				return err
			}
			if err := emails.Put(emailKey(u.Email), []byte(id)); err != nil {
				return err
			}
		}
		if !bytes.Equal(old.KeyHash, u.KeyHash) {
			keys := tx.Bucket(userKeyBucket)
			if err := keys.Delete(old.KeyHash); err != nil {
				return err
			}
			if err := keys.Put(u.KeyHash, []byte(id)); err != nil {
				return err
			}
		}
		return putUser(tx, u)
	})
	return u, err
}

// DeleteUser removes a user with its key and email in one transaction.
func (s *Store) DeleteUser(_ context.Context, id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		u, err := getUser(tx, id)
		if err != nil {
			return err
		}
		if err := tx.Bucket(userKeyBucket).Delete(u.KeyHash); err != nil {
			return err
		}
		if err := tx.Bucket(userEmailBucket).Delete(emailKey(u.Email)); err != nil {
			return err
		}
		return tx.Bucket(usersBucket).Delete([]byte(id))
	})
}

// UserByKeyHash finds the user whose access key hashes to hash.
func (s *Store) UserByKeyHash(_ context.Context, hash []byte) (User, error) {
	var u User
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(userKeyBucket).Get(hash)
		if id == nil {
			return ErrNotFound
		}
		var err error
		u, err = getUser(tx, string(id))
		return err
	})
	return u, err
}

// HasAdmin reports whether any user is an admin (credential.AdminStore).
func (s *Store) HasAdmin(_ context.Context) (bool, error) {
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(usersBucket).ForEach(func(k, _ []byte) error {
			u, err := getUser(tx, string(k))
			if err != nil {
				return err
			}
			found = found || IsAdmin(u.Permissions)
			return nil
		})
	})
	return found, err
}

// EnsureAdmin creates a bootstrap admin user with this key hash unless a
// user holds that key (credential.AdminStore).
func (s *Store) EnsureAdmin(_ context.Context, hash []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(userKeyBucket).Get(hash) != nil {
			return nil
		}
		email := "bootstrap-admin+" + hex.EncodeToString(hash[:6]) + "@gatehouse.invalid"
		return putNewUser(tx, &User{FirstName: "Bootstrap", LastName: "Admin", Email: email,
			Permissions: map[string]string{"IsAdmin": "admin"}, KeyHash: hash})
	})
}
