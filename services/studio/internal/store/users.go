package store

import (
	"bytes"
	"context"
	"slices"
	"strconv"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// User is a studio user. KeyHash is the SHA-256 of its API key; the key
// itself is never stored.
type User struct {
	ID      uint32 `json:"-"`
	Email   string `json:"email"`
	Name    string `json:"name"`
	IsAdmin bool   `json:"is_admin"`
	KeyHash []byte `json:"key_hash"`
}

// CreateUser stores u under a new id with its key-hash and admin indexes,
// in one transaction; ErrAlreadyExists when another user has its key hash.
func (s *Store) CreateUser(ctx context.Context, u User) (User, error) {
	var id uint32
	err := s.kv.Update(ctx, func(tx kv.WriteTx) (err error) {
		if id, err = putNewUser(tx, u); err == nil {
			auditctx.SetObject(ctx, strconv.FormatUint(uint64(id), 10)) // the request's audit entry names the new user
		}
		return err
	})
	u.ID = id
	return u, err
}

// putNewUser writes u and its indexes under a new id.
func putNewUser(tx kv.WriteTx, u User) (uint32, error) {
	taken, err := tx.Get(userKeyKey(u.KeyHash))
	if err != nil {
		return 0, err
	}
	if taken != nil {
		return 0, ErrAlreadyExists
	}
	id, err := kv.NextID32(tx, userSeq)
	if err != nil {
		return 0, err
	}
	if err := putJSON(tx, userKey(id), u); err != nil {
		return 0, err
	}
	if err := tx.Put(userKeyKey(u.KeyHash), idKey(nil, id)); err != nil {
		return 0, err
	}
	if u.IsAdmin {
		if err := tx.Put(adminKey(id), []byte("1")); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// ListUsers returns every user in id order.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	var out []User
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		out = nil
		return tx.Scan(userPrefix, nil, func(k, v []byte) error {
			var u User
			if err := decode(v, &u, "user"); err != nil {
				return err
			}
			u.ID = idOf(k, userPrefix)
			out = append(out, u)
			return nil
		})
	})
	return out, err
}

// DeleteUser removes a user and its index entries in one transaction: its
// key fails at once, on every replica.
func (s *Store) DeleteUser(ctx context.Context, id uint32) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		var u User
		if err := getJSON(tx, userKey(id), &u, "user"); err != nil {
			return err
		}
		for _, k := range [][]byte{userKeyKey(u.KeyHash), adminKey(id), userKey(id)} {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// UserByKeyHash finds the user whose API key hashes to hash.
func (s *Store) UserByKeyHash(ctx context.Context, hash []byte) (User, error) {
	var u User
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		raw, err := tx.Get(userKeyKey(hash))
		if err != nil {
			return err
		}
		if raw == nil {
			return ErrNotFound
		}
		id := idOf(raw, nil)
		if err := getJSON(tx, userKey(id), &u, "user"); err != nil {
			return err
		}
		u.ID = id
		return nil
	})
	return u, err
}

// EnsureAdmin stores an admin user with this key hash unless a user with
// that key exists or, with onlyFirst, unless any admin exists; one
// transaction, so replicas starting together create one (credential.AdminStore).
func (s *Store) EnsureAdmin(ctx context.Context, hash []byte, onlyFirst bool) (created bool, err error) {
	err = s.kv.Update(ctx, func(tx kv.WriteTx) error {
		created = false
		if raw, err := tx.Get(userKeyKey(hash)); err != nil || raw != nil {
			return err
		}
		if onlyFirst {
			has, err := hasAdmin(tx)
			if err != nil || has {
				return err
			}
		}
		if _, err := putNewUser(tx, User{Email: "bootstrap-admin@gatehouse.invalid", Name: "Bootstrap admin", IsAdmin: true, KeyHash: slices.Clone(hash)}); err != nil {
			return err
		}
		created = true
		return nil
	})
	return created && err == nil, err
}

// RetireBootstrap makes hash the bootstrap credential the store remembers
// and, when it remembered another one, deletes the user still holding that
// one (a new --bootstrap-token retires the previous). It returns the
// retired user's id, or "".
func (s *Store) RetireBootstrap(ctx context.Context, hash []byte) (retired string, err error) {
	err = s.kv.Update(ctx, func(tx kv.WriteTx) error {
		retired = ""
		prev, err := tx.Get(bootstrapKey)
		if err != nil || bytes.Equal(prev, hash) {
			return err
		}
		var raw []byte
		if prev != nil {
			if raw, err = tx.Get(userKeyKey(prev)); err != nil {
				return err
			}
		}
		id := ""
		if raw != nil {
			n := idOf(raw, nil)
			for _, k := range [][]byte{userKeyKey(prev), adminKey(n), userKey(n)} {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			id = strconv.FormatUint(uint64(n), 10)
		}
		if err := tx.Put(bootstrapKey, bytes.Clone(hash)); err != nil {
			return err
		}
		retired = id
		return nil
	})
	return retired, err
}

// HasAdmin reports whether any user is an admin.
func (s *Store) HasAdmin(ctx context.Context) (bool, error) {
	var has bool
	err := s.kv.View(ctx, func(tx kv.ReadTx) (err error) { has, err = hasAdmin(tx); return err })
	return has, err
}

func hasAdmin(tx kv.ReadTx) (bool, error) {
	found := false
	err := tx.Scan(adminPrefix, nil, func(_, _ []byte) error { found = true; return kv.ErrStop })
	return found, err
}
