package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/services/management/internal/category"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// Kind tells classic definitions from Tyk OAS documents.
type Kind uint8

const (
	// Classic is a Tyk classic API definition.
	Classic Kind = 1
	// OAS is a Tyk OAS document.
	OAS Kind = 2
)

// API is one stored API definition.
type API struct {
	ID   string // api_id (classic) or x-tyk-api-gateway.info.id (OAS)
	DBID string // 24-hex db id: classic "id", OAS x-tyk-api-gateway.info.dbId
	Kind Kind
	// Name is the classic "name" or OAS x-tyk-api-gateway.info.name; PutAPI reads it from Doc.
	Name string
	// Categories: of an OAS API as set (PutAPI normalises them); of a classic
	// API the #word tokens of its name (PutAPI derives them).
	Categories []string
	// StagedFrom is, for a staged copy, the api_id of the classic API it was made from.
	StagedFrom string
	// BaseID is, for a child version, the ID of its base API.
	BaseID string
	// Doc is the definition, exact JSON bytes.
	Doc []byte
}

// meta is the part of the record that is not the document.
type meta struct {
	Kind       Kind     `json:"k"`
	DBID       string   `json:"db"`
	Name       string   `json:"n"`
	Categories []string `json:"c,omitempty"`
	StagedFrom string   `json:"sf,omitempty"`
	BaseID     string   `json:"b,omitempty"`
}

const recordVersion = 1

// encodeAPI lays a record out as: version byte, uvarint length of the meta
// JSON, meta JSON, document bytes.
func encodeAPI(a API) ([]byte, error) {
	m, err := json.Marshal(meta{Kind: a.Kind, DBID: a.DBID, Name: a.Name, Categories: a.Categories, StagedFrom: a.StagedFrom, BaseID: a.BaseID})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(m)+len(a.Doc))
	out = append(out, recordVersion)
	out = binary.AppendUvarint(out, uint64(len(m)))
	out = append(out, m...)
	return append(out, a.Doc...), nil
}

// decodeAPI reads a record; the result shares no memory with v.
func decodeAPI(id string, v []byte) (API, error) {
	m, doc, err := splitRecord(v)
	if err != nil {
		return API{}, err
	}
	var md meta
	if err := json.Unmarshal(m, &md); err != nil {
		return API{}, fmt.Errorf("%w: api %q: %v", ErrCorrupt, id, err)
	}
	return API{ID: id, DBID: md.DBID, Kind: md.Kind, Name: md.Name, Categories: md.Categories,
		StagedFrom: md.StagedFrom, BaseID: md.BaseID, Doc: bytes.Clone(doc)}, nil
}

func splitRecord(v []byte) (m, doc []byte, err error) {
	if len(v) < 2 || v[0] != recordVersion {
		return nil, nil, fmt.Errorf("%w: unknown record layout", ErrCorrupt)
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return nil, nil, fmt.Errorf("%w: truncated record", ErrCorrupt)
	}
	return v[1+w : 1+w+int(n)], v[1+w+int(n):], nil
}

// kindOf reads only a record's kind.
func kindOf(v []byte) Kind {
	m, _, err := splitRecord(v)
	if err != nil {
		return 0
	}
	var k struct {
		Kind Kind `json:"k"`
	}
	json.Unmarshal(m, &k)
	return k.Kind
}

var dbIDPattern = regexp.MustCompile(`^[0-9a-f]{24}$`)

// API reads one API; ErrNotFound when there is none.
func (t *Tx) API(id string) (API, error) {
	v := t.tx.Bucket(apisBucket).Get([]byte(id))
	if v == nil {
		return API{}, ErrNotFound
	}
	return decodeAPI(id, v)
}

// Exists reports whether an API (of either kind) has this ID.
func (t *Tx) Exists(id string) bool {
	return id != "" && t.tx.Bucket(apisBucket).Get([]byte(id)) != nil
}

// APIIDByDBID finds the API holding a db id.
func (t *Tx) APIIDByDBID(dbID string) (string, bool) {
	v := t.tx.Bucket(dbIDBucket).Get([]byte(dbID))
	return string(v), v != nil
}

// PutAPI stores a, creating it or replacing the API with the same ID, and
// keeps every index right. For a classic API, Name and Categories come from
// the document's "name"; for an OAS API, Name comes from info.name, the
// categories given are normalised, and x-tyk-api-gateway.info.dbId is
// written into the document (a.DBID). The db id must be 24 hex and not held
// by another API (ErrAlreadyExists). Replacing an API may change its kind
// (as a direct migration does).
func (t *Tx) PutAPI(a API) error {
	if a.ID == "" || !dbIDPattern.MatchString(a.DBID) || (a.Kind != Classic && a.Kind != OAS) {
		return fmt.Errorf("%w: api %q needs an ID, a 24-hex db id and a kind", ErrInvalid, a.ID)
	}
	if holder, ok := t.APIIDByDBID(a.DBID); ok && holder != a.ID {
		return fmt.Errorf("%w: db id %s is held by api %q", ErrAlreadyExists, a.DBID, holder)
	}
	switch a.Kind {
	case Classic:
		raw, _, err := rawjson.Lookup(a.Doc, "name")
		if err != nil {
			return fmt.Errorf("%w: api %q: %v", ErrInvalid, a.ID, err)
		}
		a.Name, _ = rawjson.String(raw)
		a.Categories = category.FromName(a.Name)
	case OAS:
		doc, err := oasdoc.SetDBID(a.Doc, a.DBID)
		if err != nil {
			return fmt.Errorf("%w: api %q: %v", ErrInvalid, a.ID, err)
		}
		a.Doc = doc
		a.Name = oasdoc.Name(doc)
		a.Categories = category.Normalize(a.Categories)
	}
	return t.put(a)
}

// PutConverted stores an OAS API whose document the converter wrote: the
// document already holds a.DBID as x-tyk-api-gateway.info.dbId, and a.Name
// and a.Categories are the converter's, so nothing is read back from the
// document. Otherwise it is PutAPI.
func (t *Tx) PutConverted(a API) error {
	if a.ID == "" || !dbIDPattern.MatchString(a.DBID) || a.Kind != OAS {
		return fmt.Errorf("%w: converted api %q needs an ID, a 24-hex db id and kind OAS", ErrInvalid, a.ID)
	}
	if holder, ok := t.APIIDByDBID(a.DBID); ok && holder != a.ID {
		return fmt.Errorf("%w: db id %s is held by api %q", ErrAlreadyExists, a.DBID, holder)
	}
	a.Categories = category.Normalize(a.Categories)
	return t.put(a)
}

// put replaces the record and its index entries.
func (t *Tx) put(a API) error {
	if err := t.unindex(a.ID); err != nil {
		return err
	}
	v, err := encodeAPI(a)
	if err != nil {
		return err
	}
	if err := t.tx.Bucket(apisBucket).Put([]byte(a.ID), v); err != nil {
		return err
	}
	return t.index(a)
}

// DeleteAPI removes one API and its index entries (not its child versions:
// see DeleteAPIWithVersions). ErrNotFound when there is none.
func (t *Tx) DeleteAPI(id string) error {
	if !t.Exists(id) {
		return ErrNotFound
	}
	if err := t.unindex(id); err != nil {
		return err
	}
	return t.tx.Bucket(apisBucket).Delete([]byte(id))
}

// DeleteAPIWithVersions removes an API and, recursively, every API whose
// BaseID names it; it returns the IDs removed, the API's own first.
func (t *Tx) DeleteAPIWithVersions(id string) ([]string, error) {
	children := t.Children(id)
	if err := t.DeleteAPI(id); err != nil {
		return nil, err
	}
	removed := []string{id}
	for _, c := range children {
		more, err := t.DeleteAPIWithVersions(c)
		if err != nil {
			return nil, err
		}
		removed = append(removed, more...)
	}
	return removed, nil
}

// Children lists the IDs of the APIs whose BaseID is id, in ID order.
func (t *Tx) Children(id string) []string {
	var out []string
	prefix := lenPrefixed(id, "")
	c := t.tx.Bucket(childBucket).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		out = append(out, string(k[len(prefix):]))
	}
	return out
}

// StagedCopy returns the ID of the staged copy made from a classic API.
func (t *Tx) StagedCopy(classicID string) (string, bool) {
	v := t.tx.Bucket(stagedBucket).Get([]byte(classicID))
	return string(v), v != nil
}

// StagedClassicIDs lists, in ascending order, the classic API IDs that have a staged copy.
func (t *Tx) StagedClassicIDs() []string {
	var out []string
	t.tx.Bucket(stagedBucket).ForEach(func(k, _ []byte) error {
		out = append(out, string(k))
		return nil
	})
	return out
}

// IDs lists the IDs of every API of a kind (0: every kind) in ascending order.
func (t *Tx) IDs(kind Kind) []string {
	var out []string
	t.tx.Bucket(apisBucket).ForEach(func(k, v []byte) error {
		if kind == 0 || kindOf(v) == kind {
			out = append(out, string(k))
		}
		return nil
	})
	return out
}

// index adds a's entries to the indexes.
func (t *Tx) index(a API) error {
	id := []byte(a.ID)
	if err := t.tx.Bucket(dbIDBucket).Put([]byte(a.DBID), id); err != nil {
		return err
	}
	for _, c := range a.Categories {
		if err := t.tx.Bucket(catIndexBucket).Put(lenPrefixed(c, a.ID), nil); err != nil {
			return err
		}
		if err := addCount(t.tx.Bucket(catCountBucket), c, 1); err != nil {
			return err
		}
	}
	if a.StagedFrom != "" {
		if err := t.tx.Bucket(stagedBucket).Put([]byte(a.StagedFrom), id); err != nil {
			return err
		}
	}
	if a.BaseID != "" {
		if err := t.tx.Bucket(childBucket).Put(lenPrefixed(a.BaseID, a.ID), nil); err != nil {
			return err
		}
	}
	return nil
}

// unindex removes the index entries of the API stored under id, if any.
func (t *Tx) unindex(id string) error {
	v := t.tx.Bucket(apisBucket).Get([]byte(id))
	if v == nil {
		return nil
	}
	old, err := decodeAPI(id, v)
	if err != nil {
		return err
	}
	if err := t.tx.Bucket(dbIDBucket).Delete([]byte(old.DBID)); err != nil {
		return err
	}
	for _, c := range old.Categories {
		if err := t.tx.Bucket(catIndexBucket).Delete(lenPrefixed(c, id)); err != nil {
			return err
		}
		if err := addCount(t.tx.Bucket(catCountBucket), c, -1); err != nil {
			return err
		}
	}
	if old.StagedFrom != "" {
		b := t.tx.Bucket(stagedBucket)
		if string(b.Get([]byte(old.StagedFrom))) == id {
			if err := b.Delete([]byte(old.StagedFrom)); err != nil {
				return err
			}
		}
	}
	if old.BaseID != "" {
		if err := t.tx.Bucket(childBucket).Delete(lenPrefixed(old.BaseID, id)); err != nil {
			return err
		}
	}
	return nil
}

// lenPrefixed builds an index key: 2-byte length of a, a, b. The prefix
// keeps "ab"+"c" apart from "a"+"bc".
func lenPrefixed(a, b string) []byte {
	k := make([]byte, 0, 2+len(a)+len(b))
	k = binary.BigEndian.AppendUint16(k, uint16(len(a)))
	k = append(k, a...)
	return append(k, b...)
}

func addCount(b *bolt.Bucket, name string, delta int64) error {
	var n uint64
	if v := b.Get([]byte(name)); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	n = uint64(int64(n) + delta)
	if int64(n) <= 0 {
		return b.Delete([]byte(name))
	}
	return b.Put([]byte(name), binary.BigEndian.AppendUint64(nil, n))
}

// CategoryCount is one category in use.
type CategoryCount struct {
	Name  string
	Count int
}

// Categories lists every category in use, sorted by name (byte order).
func (t *Tx) Categories() []CategoryCount {
	var out []CategoryCount
	t.tx.Bucket(catCountBucket).ForEach(func(k, v []byte) error {
		if len(v) == 8 {
			out = append(out, CategoryCount{Name: string(k), Count: int(binary.BigEndian.Uint64(v))})
		}
		return nil
	})
	return out
}

// List returns the APIs in any of categories (every API when none is
// given), in ID order: limit of them after skipping offset (limit < 0: all),
// and how many there are.
func (t *Tx) List(categories []string, offset, limit int) ([]API, int, error) {
	apis := t.tx.Bucket(apisBucket)
	var out []API
	take := func(id []byte, v []byte) error {
		if v == nil {
			return nil
		}
		a, err := decodeAPI(string(id), v)
		if err != nil {
			return err
		}
		out = append(out, a)
		return nil
	}
	if len(categories) == 0 {
		total := apis.Stats().KeyN
		c := apis.Cursor()
		i := 0
		for k, v := c.First(); k != nil && (limit < 0 || len(out) < limit); k, v = c.Next() {
			if i++; i <= offset {
				continue
			}
			if err := take(k, v); err != nil {
				return nil, 0, err
			}
		}
		return out, total, nil
	}
	seen := map[string]bool{}
	var ids []string
	c := t.tx.Bucket(catIndexBucket).Cursor()
	for _, cat := range categories {
		prefix := lenPrefixed(cat, "")
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if id := string(k[len(prefix):]); !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	total := len(ids)
	ids = ids[min(offset, len(ids)):]
	if limit >= 0 {
		ids = ids[:min(limit, len(ids))]
	}
	for _, id := range ids {
		if err := take([]byte(id), apis.Get([]byte(id))); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// checkIndexes verifies that every index entry matches the records, for tests.
func checkIndexes(tx *bolt.Tx) error {
	t := &Tx{tx: tx}
	counts := map[string]int{}
	dbIDs, cats, staged, children := 0, 0, 0, 0
	err := tx.Bucket(apisBucket).ForEach(func(k, v []byte) error {
		a, err := decodeAPI(string(k), v)
		if err != nil {
			return err
		}
		if id, ok := t.APIIDByDBID(a.DBID); !ok || id != a.ID {
			return fmt.Errorf("db id index: %s → %q, want %q", a.DBID, id, a.ID)
		}
		dbIDs++
		for _, c := range a.Categories {
			if tx.Bucket(catIndexBucket).Get(lenPrefixed(c, a.ID)) == nil {
				return fmt.Errorf("category index misses %q → %s", c, a.ID)
			}
			counts[c]++
			cats++
		}
		if a.StagedFrom != "" {
			if id, _ := t.StagedCopy(a.StagedFrom); id != a.ID {
				return fmt.Errorf("staged index: %s → %q, want %q", a.StagedFrom, id, a.ID)
			}
			staged++
		}
		if a.BaseID != "" {
			if tx.Bucket(childBucket).Get(lenPrefixed(a.BaseID, a.ID)) == nil {
				return fmt.Errorf("child index misses %s → %s", a.BaseID, a.ID)
			}
			children++
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, want := range []struct {
		b []byte
		n int
	}{{dbIDBucket, dbIDs}, {catIndexBucket, cats}, {stagedBucket, staged}, {childBucket, children}, {catCountBucket, len(counts)}} {
		if got := tx.Bucket(want.b).Stats().KeyN; got != want.n {
			return fmt.Errorf("index %s holds %d entries, want %d", want.b, got, want.n)
		}
	}
	for _, c := range t.Categories() {
		if counts[c.Name] != c.Count {
			return fmt.Errorf("category %q counted %d, want %d", c.Name, c.Count, counts[c.Name])
		}
	}
	return nil
}
