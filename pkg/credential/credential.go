// Package credential makes and checks API secrets: random secrets of 256
// bits, stored only as SHA-256 hashes, compared in constant time, and the
// bootstrap admin credential every service ensures at start (CONTRACT §0).
package credential

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"log/slog"
)

// NewSecret returns 32 random bytes, base64url-encoded without padding (43 characters).
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Hash returns the value a store keeps for secret. Secrets handed out are
// random 256-bit strings, so a plain SHA-256 is enough and lets a store look
// a caller up by hash.
func Hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Equal compares two hashes in constant time.
func Equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }

// AdminStore is what Bootstrap needs of a service's store.
type AdminStore interface {
	// EnsureAdmin makes the credential with this secret hash an active
	// admin: one holding that hash is restored to admin (and reactivated)
	// where the service's model lets it lose either; a missing one is
	// stored unless, when onlyFirst is set, any active admin credential
	// exists — check and write in one transaction, so that replicas
	// starting together create one. It reports whether it stored one.
	EnsureAdmin(ctx context.Context, hash []byte, onlyFirst bool) (created bool, err error)
	// RetireBootstrap remembers hash as the bootstrap token's and, when
	// another was remembered, deletes the credential still holding that
	// one, in one transaction. It returns what it retired (the user's id),
	// or "" when nothing was.
	RetireBootstrap(ctx context.Context, hash []byte) (retired string, err error)
}

// MinTokenLen is the shortest bootstrap token Bootstrap takes without a
// warning: 16 bytes. Keys are stored as SHA-256 hashes, which cost an
// attacker who holds the store nothing to test guesses against; a short
// or human-chosen token can be found that way, a 256-bit random one cannot.
const MinTokenLen = 16

// Bootstrap makes sure an admin credential exists. With a token, the
// credential whose secret is exactly token is an active admin after it
// returns, at every start (created if missing, restored if demoted or
// deactivated; idempotent across restarts and replicas); a token shorter
// than MinTokenLen is logged as a warning (never the token itself).
// Without one, a store holding no admin gets a random secret, logged only
// by the process whose transaction created it.
//
// A token other than the last start's retires the previous bootstrap
// credential (rotation: the old token is refused from then on); retired,
// when set, is called with what was retired, for the audit log.
func Bootstrap(ctx context.Context, s AdminStore, token string, log *slog.Logger, retired func(ctx context.Context, id string)) error {
	if token != "" {
		if len(token) < MinTokenLen {
			log.Warn("the bootstrap token is short: keys are stored as SHA-256 hashes, so a short token can be guessed offline from a copy of the store; use at least 16 random bytes",
				"token_bytes", len(token), "min_bytes", MinTokenLen)
		}
		if _, err := s.EnsureAdmin(ctx, Hash(token), false); err != nil {
			return err
		}
		old, err := s.RetireBootstrap(ctx, Hash(token))
		if err != nil || old == "" {
			return err
		}
		log.Warn("a new bootstrap token: the previous bootstrap credential was retired", "retired", old)
		if retired != nil {
			retired(ctx, old)
		}
		return nil
	}
	secret := NewSecret()
	created, err := s.EnsureAdmin(ctx, Hash(secret), true)
	if err != nil || !created {
		return err
	}
	log.Warn("created the bootstrap admin credential; it is shown only now", "admin_secret", secret)
	return nil
}

// Found turns a lookup's error into whether the key was found: notFound
// (matched with errors.Is) is false without an error.
func Found(err, notFound error) (bool, error) {
	if errors.Is(err, notFound) {
		return false, nil
	}
	return err == nil, err
}
