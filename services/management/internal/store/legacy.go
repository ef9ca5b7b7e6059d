package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// A store file written before the kv seam (layout version 1) kept each
// record kind and each index in its own bbolt bucket. The bbolt engine
// moves such buckets under "legacy/<bucket>/" when it opens the file; the
// upgrade below, run by kv.EnsureSchema in one transaction, rewrites the
// records in this layout, rebuilds every index from them and deletes the
// legacy keys. Category counts and the old index buckets are not read: the
// records are the truth.
var (
	legacyPrefix  = []byte("legacy/")
	legacySchema  = []byte("legacy/meta/schema_version")
	legacyAPIs    = []byte("legacy/apis/")
	legacyUsers   = []byte("legacy/users/")
	legacyVersion = "1"
)

// upgrade brings a key space from layout version from to schemaVersion.
func upgrade(w kv.WriteTx, from int) error {
	if from != 0 {
		return fmt.Errorf("no upgrade from layout version %d", from)
	}
	v, err := w.Get(legacySchema)
	if err != nil {
		return err
	}
	if v == nil {
		return nil // a new key space
	}
	if string(v) != legacyVersion {
		return fmt.Errorf("the earlier bbolt layout has version %q; this binary converts only version %s", v, legacyVersion)
	}
	t := &Tx{r: w, w: w}
	var apis []API
	err = w.Scan(legacyAPIs, nil, func(k, v []byte) error {
		a, err := decodeLegacyAPI(string(k[len(legacyAPIs):]), v)
		apis = append(apis, a)
		return err
	})
	if err != nil {
		return err
	}
	for _, a := range apis {
		if err := t.putRecord(a); err != nil {
			return err
		}
	}
	if err := upgradeUsers(t, w); err != nil {
		return err
	}
	return deleteLegacy(w)
}

// upgradeUsers rewrites the users of the earlier layout, with their indexes.
func upgradeUsers(t *Tx, w kv.WriteTx) error {
	var users []User
	err := w.Scan(legacyUsers, nil, func(k, v []byte) error {
		u, err := decodeUser(string(k[len(legacyUsers):]), v)
		users = append(users, u)
		return err
	})
	if err != nil {
		return err
	}
	for _, u := range users {
		if err := t.putUser(u); err != nil {
			return err
		}
		if err := t.put(emailKey(u.Email), []byte(u.ID)); err != nil {
			return err
		}
		if err := t.put(key(userKeyPrefix, string(u.KeyHash)), []byte(u.ID)); err != nil {
			return err
		}
	}
	return nil
}

// deleteLegacy deletes every key of the earlier layout.
func deleteLegacy(w kv.WriteTx) error {
	var old [][]byte
	if err := w.Scan(legacyPrefix, nil, func(k, _ []byte) error { old = append(old, bytes.Clone(k)); return nil }); err != nil {
		return err
	}
	for _, k := range old {
		if err := w.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// decodeLegacyAPI reads a version-1 API record: version byte 1, uvarint
// length of a JSON header, the header, the document bytes.
func decodeLegacyAPI(id string, v []byte) (API, error) {
	if len(v) < 2 || v[0] != 1 {
		return API{}, fmt.Errorf("%w: legacy api %q: unknown record layout", ErrCorrupt, id)
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return API{}, fmt.Errorf("%w: legacy api %q: truncated record", ErrCorrupt, id)
	}
	var h struct {
		Kind       Kind     `json:"k"`
		DBID       string   `json:"db"`
		Name       string   `json:"n"`
		Categories []string `json:"c"`
		StagedFrom string   `json:"sf"`
		BaseID     string   `json:"b"`
	}
	if err := json.Unmarshal(v[1+w:1+w+int(n)], &h); err != nil {
		return API{}, fmt.Errorf("%w: legacy api %q: %v", ErrCorrupt, id, err)
	}
	return API{ID: id, DBID: h.DBID, Kind: h.Kind, Name: h.Name, Categories: h.Categories, StagedFrom: h.StagedFrom,
		BaseID: h.BaseID, Doc: bytes.Clone(v[1+w+int(n):])}, nil
}
