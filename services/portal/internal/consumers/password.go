package consumers

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Password hashing: argon2id with OWASP's second recommended setting
// (19 MiB of memory, 2 passes, 1 lane), a 16-byte random salt and a 32-byte
// hash, written as a PHC string
// ($argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>, unpadded base64). One hash
// costs about 40 ms of one core (BenchmarkLogin); at most hashSlots run at
// once, so a flood of logins costs at most hashSlots × 19 MiB.
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
	hashSlots    = 4
)

// MinPasswordLen is the shortest password accepted (CONTRACT §3), in characters.
const MinPasswordLen = 12

// maxPasswordLen bounds what is hashed (bytes); longer is refused.
const maxPasswordLen = 1024

var b64 = base64.RawStdEncoding

// hasher runs at most hashSlots argon2id computations at once.
type hasher struct{ slots chan struct{} }

func newHasher() *hasher { return &hasher{slots: make(chan struct{}, hashSlots)} }

func (h *hasher) run(ctx context.Context, fn func()) error {
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-h.slots }()
	fn()
	return nil
}

// hash returns the PHC string of password with a new salt.
func (h *hasher) hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, saltLen)
	rand.Read(salt)
	var sum []byte
	if err := h.run(ctx, func() { sum = argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen) }); err != nil {
		return "", err
	}
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(sum)), nil
}

var errBadHash = errors.New("stored password hash unreadable")

// verify reports whether password matches the PHC string stored, with the
// parameters stored in it (so they can be raised for new hashes later).
func (h *hasher) verify(ctx context.Context, stored, password string) (bool, error) {
	parts := strings.Split(stored, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 256*1024 || t == 0 || t > 10 || p == 0 {
		return false, errBadHash
	}
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false, errBadHash
	}
	var got []byte
	if err := h.run(ctx, func() { got = argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want))) }); err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
