// Package consumerstest holds a double of management's keys for the
// consumer service's unit tests: an in-memory key table with policies,
// and a switch that makes every call fail.
package consumerstest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"sync"

	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
)

// Key is one key the double holds.
type Key struct {
	Spec consumers.KeySpec
}

// Keys is an in-memory consumers.Keys.
type Keys struct {
	mu       sync.Mutex
	Policies []string       // the policy ids that exist
	Held     map[string]Key // by hash
	Fail     bool           // every call fails
}

// New returns a double in which the given policies exist.
func New(policies ...string) *Keys { return &Keys{Policies: policies, Held: map[string]Key{}} }

var errDown = errors.New("management unreachable (test double)")

// MissingPolicies implements consumers.Keys.
func (k *Keys) MissingPolicies(_ context.Context, ids []string) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.Fail {
		return nil, errDown
	}
	var missing []string
	for _, id := range ids {
		if !slices.Contains(k.Policies, id) {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// CreateKey implements consumers.Keys.
func (k *Keys) CreateKey(_ context.Context, spec consumers.KeySpec) (string, string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.Fail {
		return "", "", errDown
	}
	b := make([]byte, 16)
	rand.Read(b)
	key := hex.EncodeToString(b)
	h := Hash(key)
	k.Held[h] = Key{Spec: spec}
	return key, h, nil
}

// Hash is the double's key hash.
func Hash(key string) string { s := sha256.Sum256([]byte(key)); return hex.EncodeToString(s[:8]) }

// DeleteKey implements consumers.Keys.
func (k *Keys) DeleteKey(_ context.Context, hash string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.Fail {
		return errDown
	}
	delete(k.Held, hash)
	return nil
}

// PortalKeys implements consumers.Keys.
func (k *Keys) PortalKeys(context.Context) ([]consumers.PortalKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.Fail {
		return nil, errDown
	}
	var out []consumers.PortalKey
	for h, key := range k.Held {
		if id, err := strconv.ParseUint(key.Spec.Meta["portal_app_id"], 10, 32); err == nil {
			out = append(out, consumers.PortalKey{Hash: h, AppID: uint32(id)})
		}
	}
	return out, nil
}

// Works reports whether key exists (what a gateway would accept).
func (k *Keys) Works(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.Held[Hash(key)]
	return ok
}
