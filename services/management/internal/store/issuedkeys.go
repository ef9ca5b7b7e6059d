package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// IssuedKey is management's record of a key it issued through the gateways'
// API (CONTRACT §2 "Keys"): the key's hash (the gateways' name for it),
// never the key itself.
type IssuedKey struct {
	Hash     string    `json:"-"`
	Alias    string    `json:"alias,omitempty"`
	APIs     []string  `json:"apis,omitempty"`     // API IDs of its access_rights
	Policies []string  `json:"policies,omitempty"` // its apply_policies, as given
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
}

// issuedKeyVersion is the first byte of every issued key record.
const issuedKeyVersion = 1

func encodeIssuedKey(k IssuedKey) ([]byte, error) {
	b, err := json.Marshal(k)
	if err != nil {
		return nil, err
	}
	return append([]byte{issuedKeyVersion}, b...), nil
}

func decodeIssuedKey(hash string, v []byte) (IssuedKey, error) {
	var k IssuedKey
	if len(v) < 2 || v[0] != issuedKeyVersion || json.Unmarshal(v[1:], &k) != nil {
		return IssuedKey{}, fmt.Errorf("%w: issued key %q", ErrCorrupt, hash)
	}
	k.Hash = hash
	return k, nil
}

// IssuedKey reads the record of the key with that hash; ErrNotFound when
// management issued none.
func (t *Tx) IssuedKey(hash string) (IssuedKey, error) {
	if hash == "" {
		return IssuedKey{}, ErrNotFound
	}
	v, err := t.r.Get(key(issuedKeyPrefix, hash))
	switch {
	case err != nil:
		return IssuedKey{}, err
	case v == nil:
		return IssuedKey{}, ErrNotFound
	}
	return decodeIssuedKey(hash, v)
}

// PutIssuedKey creates or replaces the record of k.Hash and its API and
// policy index entries.
func (t *Tx) PutIssuedKey(k IssuedKey) error {
	if k.Hash == "" {
		return fmt.Errorf("%w: an issued key needs its hash", ErrInvalid)
	}
	if err := t.DeleteIssuedKey(k.Hash); err != nil {
		return err
	}
	v, err := encodeIssuedKey(k)
	if err != nil {
		return err
	}
	if err := t.put(key(issuedKeyPrefix, k.Hash), v); err != nil {
		return err
	}
	for _, api := range k.APIs {
		if err := t.put(pairKey(keyAPIPrefix, api, k.Hash), nil); err != nil {
			return err
		}
	}
	for _, p := range k.Policies {
		if err := t.put(pairKey(keyPolicyPrefix, p, k.Hash), nil); err != nil {
			return err
		}
	}
	return nil
}

// DeleteIssuedKey removes the record of hash and its index entries (no
// error when there is none).
func (t *Tx) DeleteIssuedKey(hash string) error {
	old, err := t.IssuedKey(hash)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, api := range old.APIs {
		if err := t.delPair(keyAPIPrefix, api, hash); err != nil {
			return err
		}
	}
	for _, p := range old.Policies {
		if err := t.delPair(keyPolicyPrefix, p, hash); err != nil {
			return err
		}
	}
	return t.delKey(issuedKeyPrefix, hash)
}

// KeysUsingAPI counts the issued keys whose access_rights name the API.
func (t *Tx) KeysUsingAPI(apiID string) (int, error) {
	return t.r.Count(pairKey(keyAPIPrefix, apiID, ""))
}

// KeysUsingPolicy counts the issued keys that apply the policy under any
// of its names (its `id` and `_id`).
func (t *Tx) KeysUsingPolicy(names ...string) (int, error) {
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" {
			continue
		}
		err := t.r.Scan(pairKey(keyPolicyPrefix, n, ""), nil, func(k, _ []byte) error {
			_, hash, err := splitPair(keyPolicyPrefix, k)
			seen[hash] = true
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return len(seen), nil
}

// EachKeyHashByAPI calls fn, in hash order and once each, with the hash of
// every issued key that reaches apiID directly or through one of policies
// (ids and db ids): a merge of the index ranges read a chunk at a time, so
// it holds a chunk per range, not the keys; fn returning kv.ErrStop ends
// it.
func (t *Tx) EachKeyHashByAPI(apiID string, policies []string, fn func(hash string) error) error {
	ranges := []*hashRange{{t: t, prefix: pairKey(keyAPIPrefix, apiID, "")}}
	for _, p := range policies {
		ranges = append(ranges, &hashRange{t: t, prefix: pairKey(keyPolicyPrefix, p, "")})
	}
	last := ""
	for {
		var low *hashRange
		for _, r := range ranges {
			if ok, err := r.ready(); err != nil {
				return err
			} else if ok && (low == nil || r.head() < low.head()) {
				low = r
			}
		}
		if low == nil {
			return nil
		}
		h := low.head()
		low.buf = low.buf[1:]
		if h == last {
			continue
		}
		last = h
		if err := fn(h); err != nil {
			if errors.Is(err, kv.ErrStop) {
				return nil
			}
			return err
		}
	}
}

// hashRange reads the key hashes of one index range, hashChunk at a time.
type hashRange struct {
	t      *Tx
	prefix []byte
	buf    []string
	from   []byte // where the next chunk starts (nil: the range's start)
	done   bool   // no chunk after buf
}

const hashChunk = 128

func (r *hashRange) head() string { return r.buf[0] }

// ready reports whether the range has a head, reading its next chunk when
// buf is empty.
func (r *hashRange) ready() (bool, error) {
	if len(r.buf) > 0 || r.done {
		return len(r.buf) > 0, nil
	}
	// The function keeps what it reads in r (no variable of its own to
	// escape: a check per API delete, on the store's committer). buf is
	// made at the first key: most ranges are empty.
	from := r.from
	r.buf, r.from = nil, nil
	err := r.t.r.Scan(r.prefix, from, func(k, _ []byte) error {
		if len(r.buf) == hashChunk {
			r.from = bytes.Clone(k)
			return kv.ErrStop
		}
		if r.buf == nil {
			r.buf = make([]string, 0, hashChunk)
		}
		r.buf = append(r.buf, string(k[len(r.prefix):]))
		return nil
	})
	r.done = r.from == nil
	return len(r.buf) > 0, err
}

// EachIssuedKeyHash calls fn with every issued key's hash in order; fn
// returning kv.ErrStop ends it.
func (t *Tx) EachIssuedKeyHash(fn func(hash string) error) error {
	return t.r.Scan(issuedKeyPrefix, nil, func(k, _ []byte) error {
		return fn(string(k[len(issuedKeyPrefix):]))
	})
}

// EachIssuedKey calls fn for every issued key in hash order; fn returning
// kv.ErrStop ends the scan.
func (t *Tx) EachIssuedKey(fn func(IssuedKey) error) error {
	return t.r.Scan(issuedKeyPrefix, nil, func(k, v []byte) error {
		rec, err := decodeIssuedKey(string(k[len(issuedKeyPrefix):]), v)
		if err != nil {
			return err
		}
		return fn(rec)
	})
}

// IssuedKeys returns limit records after skipping offset (limit < 0: all),
// in hash order, and how many there are; only the page's records are
// decoded.
func (s *Store) IssuedKeys(ctx context.Context, offset, limit int) ([]IssuedKey, int, error) {
	var out []IssuedKey
	var total int
	err := s.View(ctx, func(tx *Tx) error {
		var page []IssuedKey
		n, err := tx.r.Count(issuedKeyPrefix)
		if err != nil || offset >= n {
			out, total = nil, n
			return err
		}
		i := 0
		err = tx.r.Scan(issuedKeyPrefix, nil, func(k, v []byte) error {
			if limit >= 0 && len(page) >= limit {
				return kv.ErrStop
			}
			if i++; i <= offset {
				return nil
			}
			rec, err := decodeIssuedKey(string(k[len(issuedKeyPrefix):]), v)
			page = append(page, rec)
			return err
		})
		out, total = page, n
		return err
	})
	return out, total, err
}

// IssuedKeyHashes returns limit hashes after skipping offset (limit < 0:
// all), in hash order, and how many keys there are, reading keys only.
func (s *Store) IssuedKeyHashes(ctx context.Context, offset, limit int) ([]string, int, error) {
	var out []string
	var total int
	err := s.View(ctx, func(tx *Tx) error {
		var page []string
		n, err := tx.r.Count(issuedKeyPrefix)
		if err != nil {
			return err
		}
		if offset >= n {
			out, total = nil, n
			return nil
		}
		i := 0
		err = tx.r.Scan(issuedKeyPrefix, nil, func(k, _ []byte) error {
			if limit >= 0 && len(page) >= limit {
				return kv.ErrStop
			}
			if i++; i > offset {
				page = append(page, string(k[len(issuedKeyPrefix):]))
			}
			return nil
		})
		out, total = page, n
		return err
	})
	return out, total, err
}

// checkIssuedKeys verifies the key indexes against the records, for tests.
func checkIssuedKeys(t *Tx) error {
	apis, pols := 0, 0
	err := t.EachIssuedKey(func(k IssuedKey) error {
		for _, a := range k.APIs {
			if n, err := t.r.Count(pairKey(keyAPIPrefix, a, k.Hash)); err != nil || n == 0 {
				return fmt.Errorf("issued key %s: no keyapi entry for %q (%v)", k.Hash, a, err)
			}
		}
		for _, p := range k.Policies {
			if n, err := t.r.Count(pairKey(keyPolicyPrefix, p, k.Hash)); err != nil || n == 0 {
				return fmt.Errorf("issued key %s: no keypolicy entry for %q (%v)", k.Hash, p, err)
			}
		}
		apis += len(k.APIs)
		pols += len(k.Policies)
		return nil
	})
	if err != nil {
		return err
	}
	if n, err := t.r.Count(keyAPIPrefix); err != nil || n != apis {
		return fmt.Errorf("keyapi index holds %d entries, want %d (%v)", n, apis, err)
	}
	if n, err := t.r.Count(keyPolicyPrefix); err != nil || n != pols {
		return fmt.Errorf("keypolicy index holds %d entries, want %d (%v)", n, pols, err)
	}
	return nil
}
