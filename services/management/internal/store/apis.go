package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/gatehouse/gatehouse/pkg/kv"
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
	// Name is the classic "name" or OAS x-tyk-api-gateway.info.name, as the
	// writer read it from Doc.
	Name string
	// Categories: of an OAS API as set; of a classic API the #word tokens of
	// its name (category.FromName). Normalised (category.Normalize) by the
	// writer: the category index keeps them as they are.
	Categories []string
	// StagedFrom is, for a staged copy, the api_id of the classic API it was made from.
	StagedFrom string
	// BaseID is, for a child version, the ID of its base API.
	BaseID string
	// Doc is the definition, exact JSON bytes.
	Doc []byte
	// Revision tells one write of the record from another: PutAPI gives a
	// new record a random revision and a replaced one the stored revision
	// plus one, so a reader that kept the revision it read knows the record
	// is unchanged while the revision is (a record deleted and created again
	// does not come back to an earlier one, but for a chance in 2^63).
	// Records written before revisions read as revision 0.
	Revision uint64
	// Derived is, for an OAS API, the classic definition gateways load
	// (/system/apis), made from Doc by the record's maker before the write
	// (package apirecord; the store stores it as given). Only EachAPI reads
	// it (a view, like Doc); API and List leave it out.
	Derived []byte
	// DerivedBy names the build that made Derived (another build's
	// converter may derive differently); empty when the record keeps none.
	DerivedBy string
}

// recordVersion is the first byte of every API record written;
// noDerivedVersion (before Derived) and noRevisionVersion (before
// revisions) are earlier layouts, still read.
const (
	recordVersion     = 4
	noDerivedVersion  = 3
	noRevisionVersion = 2
)

// knownLayout reports whether a record's first byte names a layout read here.
func knownLayout(v []byte) bool {
	return len(v) >= 2 && (v[0] == recordVersion || v[0] == noDerivedVersion || v[0] == noRevisionVersion)
}

// encodeAPI lays a record out as: version byte, kind byte, the uvarint
// revision, the uvarint length-prefixed db id, name, staged-from and base
// ID, the number of categories and each length-prefixed, the
// length-prefixed tag of the derivation and derived definition, then the
// document bytes.
func encodeAPI(a API) []byte {
	n := 2 + len(a.DBID) + len(a.Name) + len(a.StagedFrom) + len(a.BaseID) + len(a.DerivedBy) + len(a.Derived) + len(a.Doc) + 7*binary.MaxVarintLen32 + binary.MaxVarintLen64
	for _, c := range a.Categories {
		n += len(c) + binary.MaxVarintLen32
	}
	out := append(make([]byte, 0, n), recordVersion, byte(a.Kind))
	out = binary.AppendUvarint(out, a.Revision)
	for _, s := range []string{a.DBID, a.Name, a.StagedFrom, a.BaseID} {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	out = binary.AppendUvarint(out, uint64(len(a.Categories)))
	for _, c := range a.Categories {
		out = binary.AppendUvarint(out, uint64(len(c)))
		out = append(out, c...)
	}
	out = binary.AppendUvarint(out, uint64(len(a.DerivedBy)))
	out = append(out, a.DerivedBy...)
	out = binary.AppendUvarint(out, uint64(len(a.Derived)))
	out = append(out, a.Derived...)
	return append(out, a.Doc...)
}

// decodeAPI reads a record, without its derived definition; the result
// shares no memory with v.
func decodeAPI(id string, v []byte) (API, error) {
	a, doc, err := decodeHeader(id, v)
	a.Doc, a.Derived, a.DerivedBy = bytes.Clone(doc), nil, ""
	return a, err
}

// decodeHeader reads a record without copying its document, which it
// returns as a slice of v (and a.Derived, a slice of v too).
func decodeHeader(id string, v []byte) (API, []byte, error) {
	bad := func(what string) (API, []byte, error) {
		return API{}, nil, fmt.Errorf("%w: api %q: %s", ErrCorrupt, id, what)
	}
	if !knownLayout(v) {
		return bad("unknown record layout")
	}
	a := API{ID: id, Kind: Kind(v[1])}
	rest := v[2:]
	if v[0] != noRevisionVersion {
		rev, w := binary.Uvarint(rest)
		if w <= 0 {
			return bad("truncated record")
		}
		a.Revision, rest = rev, rest[w:]
	}
	// the header's strings are cut from one string of its bytes: one
	// allocation a record, not one a field and category
	end := headerStringsEnd(rest, v[0] == recordVersion)
	if end < 0 {
		return bad("truncated record")
	}
	text, base := string(rest[:end]), len(rest)
	next := func() (string, bool) {
		n, w := binary.Uvarint(rest)
		if w <= 0 || uint64(len(rest)-w) < n {
			return "", false
		}
		off := base - len(rest) + w
		s := text[off : off+int(n)]
		rest = rest[w+int(n):]
		return s, true
	}
	for _, f := range []*string{&a.DBID, &a.Name, &a.StagedFrom, &a.BaseID} {
		s, ok := next()
		if !ok {
			return bad("truncated record")
		}
		*f = s
	}
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)) {
		return bad("truncated record")
	}
	rest = rest[w:]
	a.Categories = make([]string, 0, n)
	for range n {
		c, ok := next()
		if !ok {
			return bad("truncated record")
		}
		a.Categories = append(a.Categories, c)
	}
	if v[0] == recordVersion {
		by, ok := next()
		n, w := binary.Uvarint(rest)
		if !ok || w <= 0 || uint64(len(rest)-w) < n {
			return bad("truncated record")
		}
		a.DerivedBy, a.Derived, rest = by, rest[w:w+int(n):w+int(n)], rest[w+int(n):]
	}
	return a, rest, nil
}

// headerStringsEnd is where a record's header strings (db id, name, staged
// from, base id, categories, and derived by when derivedBy) end in rest, the
// record after its revision: -1 when rest is truncated. decodeHeader reads
// them the same way.
func headerStringsEnd(rest []byte, derivedBy bool) int {
	p := 0
	skip := func() bool {
		n, w := binary.Uvarint(rest[p:])
		if w <= 0 || uint64(len(rest)-p-w) < n {
			return false
		}
		p += w + int(n)
		return true
	}
	for range 4 {
		if !skip() {
			return -1
		}
	}
	n, w := binary.Uvarint(rest[p:])
	if w <= 0 || n > uint64(len(rest)-p) {
		return -1
	}
	p += w
	for range n {
		if !skip() {
			return -1
		}
	}
	if derivedBy && !skip() {
		return -1
	}
	return p
}

// Compared is how a stored API compares with a classic API read earlier.
type Compared int

// The answers of CompareClassic.
const (
	Same       Compared = iota // still classic, same db id and revision
	Missing                    // no API has the ID any more
	NotClassic                 // the ID holds a Tyk OAS API now
	Changed                    // still classic, but its db id or revision changed
)

// AnyRevision asks CompareClassic about the kind and db id alone.
const AnyRevision = ^uint64(0)

// CompareClassic tells whether the API stored under id is still the classic
// API with this db id and this revision (any revision: AnyRevision),
// reading only the record's header.
func (t *Tx) CompareClassic(id, dbID string, revision uint64) (Compared, error) {
	v, err := t.r.Get(key(apiPrefix, id))
	if err != nil || v == nil {
		return Missing, err
	}
	a, _, err := decodeHeader(id, v)
	switch {
	case err != nil:
		return 0, err
	case a.Kind != Classic:
		return NotClassic, nil
	case a.DBID != dbID || revision != AnyRevision && a.Revision != revision:
		return Changed, nil
	}
	return Same, nil
}

// kindOf reads only a record's kind.
func kindOf(v []byte) Kind {
	if !knownLayout(v) {
		return 0
	}
	return Kind(v[1])
}

// IsDBID reports whether s has a db id's form: 24 lowercase hex
// (^[0-9a-f]{24}$, without a regular expression: every record a write puts
// is checked).
func IsDBID(s string) bool {
	if len(s) != 24 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// API reads one API; ErrNotFound when there is none.
func (t *Tx) API(id string) (API, error) {
	v, err := t.r.Get(key(apiPrefix, id))
	if err != nil {
		return API{}, err
	}
	if v == nil {
		return API{}, ErrNotFound
	}
	return decodeAPI(id, v)
}

// Resolve finds the API a request path names. The name may be the API ID or,
// as the Tyk Dashboard accepts "either internal or public API ID", the API's
// db id (24 hex): the API ID wins when both would match. ErrNotFound when
// neither names an API.
func (t *Tx) Resolve(ref string) (API, error) { return t.resolve(ref, t.API) }

// resolveHeader is Resolve without the API's document (Doc and Derived
// nil): enough to delete it.
func (t *Tx) resolveHeader(ref string) (API, error) { return t.resolve(ref, t.apiHeader) }

// resolve is Resolve with read, which reads the API stored under an ID.
func (t *Tx) resolve(ref string, read func(id string) (API, error)) (API, error) {
	a, err := read(ref)
	if !errors.Is(err, ErrNotFound) || !IsDBID(ref) {
		return a, err
	}
	id, ok, err := t.APIIDByDBID(ref)
	switch {
	case err != nil:
		return API{}, err
	case !ok:
		return API{}, ErrNotFound
	}
	return read(id)
}

// apiHeader is API without the document: ErrNotFound when there is none.
func (t *Tx) apiHeader(id string) (API, error) {
	a, found, err := t.header(id)
	if err == nil && !found {
		err = ErrNotFound
	}
	a.Derived, a.DerivedBy = nil, ""
	return a, err
}

// Exists reports whether an API (of either kind) has this ID.
func (t *Tx) Exists(id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	v, err := t.r.Get(key(apiPrefix, id))
	return v != nil, err
}

// APIIDByDBID finds the API holding a db id.
func (t *Tx) APIIDByDBID(dbID string) (string, bool, error) {
	v, err := t.r.Get(key(dbIDPrefix, dbID))
	return string(v), v != nil, err
}

// NotStored asks PutAPI to create the record: no API may have its ID.
const NotStored = ^uint64(0) - 1

// ErrRevisionMoved means PutAPI found another revision of the record than
// the one its writer read (or the record gone): a writer that made its
// record from what it read reads again and retries (Store.UpdateAPI). It is
// a kv.ErrConflict, so a caller that gives up answers 503, retry later.
var ErrRevisionMoved = fmt.Errorf("%w: the API changed while it was being written", kv.ErrConflict)

// PutAPI stores a as given, creating it or replacing the API with the same
// ID, and keeps every index right: the one write path of API records. The
// stored record must be at revision expect: NotStored (ErrAlreadyExists
// when an API has the ID), AnyRevision (no check), or the revision the
// writer read (ErrRevisionMoved otherwise). It trusts its input, made
// outside the transaction by the record's maker (package apirecord): Name,
// Categories and Derived are the maker's, and an OAS document already holds
// a.DBID as x-tyk-api-gateway.info.dbId. It checks only the record's keys:
// an ID, a kind, and a 24-hex db id that no other API holds, in the one
// namespace of API IDs and db ids (checkNamespace) — a record rewriting
// itself (the stored API has its ID and db id) holds them already, and reads
// no index. Replacing an API may change its kind (as a direct migration
// does). a.Revision is set here (see API.Revision).
func (t *Tx) PutAPI(a API, expect uint64) error {
	if err := checkKeys(a); err != nil {
		return err
	}
	old, found, err := t.header(a.ID)
	if err != nil {
		return err
	}
	if !found || old.DBID != a.DBID {
		if err := t.checkIDs(a); err != nil {
			return err
		}
	}
	switch {
	case expect == NotStored && found:
		return fmt.Errorf("%w: api %q", ErrAlreadyExists, a.ID)
	case expect != NotStored && expect != AnyRevision && (!found || old.Revision != expect):
		return ErrRevisionMoved
	}
	return t.replace(a, old, found)
}

// Revision reads only the revision of the record stored under id.
func (t *Tx) Revision(id string) (uint64, bool, error) {
	a, ok, err := t.header(id)
	return a.Revision, ok, err
}

// header reads the record stored under id without its document.
func (t *Tx) header(id string) (API, bool, error) {
	v, err := t.r.Get(key(apiPrefix, id))
	if err != nil || v == nil {
		return API{}, false, err
	}
	a, _, err := decodeHeader(id, v)
	return a, err == nil, err
}

// checkKeys refuses a record without an ID, db id or kind.
func checkKeys(a API) error {
	if a.ID == "" || !IsDBID(a.DBID) || (a.Kind != Classic && a.Kind != OAS) {
		return fmt.Errorf("%w: api %q needs an ID, a 24-hex db id and a kind", ErrInvalid, a.ID)
	}
	return nil
}

// checkIDs refuses a db id another API holds, and an ID or db id the one
// namespace does not leave free (checkNamespace).
func (t *Tx) checkIDs(a API) error {
	holder, ok, err := t.APIIDByDBID(a.DBID)
	switch {
	case err != nil:
		return err
	case ok && holder != a.ID:
		return fmt.Errorf("%w: db id %s is held by api %q", ErrAlreadyExists, a.DBID, holder)
	}
	return t.checkNamespace(a)
}

// checkNamespace keeps API IDs and db ids one namespace (CONTRACT §2), so
// that an address never names two APIs: a's API ID may not be another API's
// db id, nor its db id another API's API ID. With checkIDs' db id check it
// is the one namespace rule of every API write: an id the writer was given
// (api_id, db id) is kept or the write refused (ErrAlreadyExists, 409); the
// service makes up only ids it was not given.
func (t *Tx) checkNamespace(a API) error {
	if holder, ok, err := t.APIIDByDBID(a.ID); err != nil || (ok && holder != a.ID) {
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: api id %q is the db id of api %q", ErrAlreadyExists, a.ID, holder)
	}
	if a.DBID == a.ID {
		return nil
	}
	if taken, err := t.Exists(a.DBID); err != nil || taken {
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: db id %s is the api id of another api", ErrAlreadyExists, a.DBID)
	}
	return nil
}

// putRecord replaces the record and its index entries, with the next
// revision.
func (t *Tx) putRecord(a API) error {
	old, found, err := t.header(a.ID)
	if err != nil {
		return err
	}
	return t.replace(a, old, found)
}

// replace writes a over old (the header stored under a.ID, when found):
// the index entries old has and a has not are deleted, those a has and old
// has not are put — an unchanged db id or category costs no write — and the
// record gets the next revision.
func (t *Tx) replace(a, old API, found bool) error {
	if found {
		if err := t.unindex(old, a); err != nil {
			return err
		}
		t.changed |= APIUpdated
		a.Revision = old.Revision + 1
	} else {
		t.changed |= APIAdded
		a.Revision = rand.Uint64()>>1 + 1 // from 1 to 2^63
		old = API{}
	}
	if a.Kind != OAS {
		a.Derived, a.DerivedBy = nil, ""
	}
	if err := t.put(key(apiPrefix, a.ID), encodeAPI(a)); err != nil {
		return err
	}
	return t.index(a, old)
}

// DeleteAPI removes one API and its index entries (not its child versions:
// see DeleteAPIWithVersions). ErrNotFound when there is none.
func (t *Tx) DeleteAPI(id string) error {
	old, err := t.apiHeader(id)
	if err != nil {
		return err
	}
	return t.deleteAPI(old)
}

// deleteAPI removes the API whose stored header is old, and its index
// entries.
func (t *Tx) deleteAPI(old API) error {
	if err := t.unindex(old, API{}); err != nil {
		return err
	}
	t.changed |= APIRemoved
	return t.delKey(apiPrefix, old.ID)
}

// DeleteAPIWithVersions removes an API and, recursively, every API whose
// BaseID names it; it returns the IDs removed, the API's own first.
func (t *Tx) DeleteAPIWithVersions(id string) ([]string, error) {
	var removed []string
	err := t.deleteVersionsOf(id, &removed)
	return removed, err
}

// deleteVersionsOf is DeleteAPIWithVersions appending the IDs removed to
// *removed, when removed is not nil.
func (t *Tx) deleteVersionsOf(id string, removed *[]string) error {
	old, err := t.apiHeader(id)
	if err != nil {
		return err
	}
	return t.deleteWithVersions(old, removed)
}

// deleteWithVersions is deleteVersionsOf the API whose stored header is
// old (read in this transaction).
func (t *Tx) deleteWithVersions(old API, removed *[]string) error {
	id := old.ID
	children, err := t.Children(id)
	if err != nil {
		return err
	}
	if err := t.deleteAPI(old); err != nil {
		return err
	}
	if removed != nil {
		*removed = append(*removed, id)
	}
	for _, c := range children {
		if err := t.deleteVersionsOf(c, removed); err != nil {
			return err
		}
	}
	return nil
}

// Children lists the IDs of the APIs whose BaseID is id, in ID order.
func (t *Tx) Children(id string) ([]string, error) {
	var out []string
	prefix := pairKey(childPrefix, id, "")
	err := t.r.Scan(prefix, nil, func(k, _ []byte) error {
		out = append(out, string(k[len(prefix):]))
		return nil
	})
	return out, err
}

// StagedCopy returns the ID of the staged copy made from a classic API.
func (t *Tx) StagedCopy(classicID string) (string, bool, error) {
	v, err := t.r.Get(key(stagedPrefix, classicID))
	return string(v), v != nil, err
}

// StagedClassicIDs lists, in ascending order, the classic API IDs that have a staged copy.
func (t *Tx) StagedClassicIDs() ([]string, error) {
	var out []string
	err := t.r.Scan(stagedPrefix, nil, func(k, _ []byte) error {
		out = append(out, string(k[len(stagedPrefix):]))
		return nil
	})
	return out, err
}

// IDs lists the IDs of every API of a kind (0: every kind) in ascending order.
func (t *Tx) IDs(kind Kind) ([]string, error) {
	var out []string
	err := t.r.Scan(apiPrefix, nil, func(k, v []byte) error {
		if kind == 0 || kindOf(v) == kind {
			out = append(out, string(k[len(apiPrefix):]))
		}
		return nil
	})
	return out, err
}

// index adds a's entries to the indexes, but those old (the record a
// replaces, or none) has too.
func (t *Tx) index(a, old API) error {
	id := []byte(a.ID)
	if a.DBID != old.DBID {
		if err := t.put(key(dbIDPrefix, a.DBID), id); err != nil {
			return err
		}
	}
	for _, c := range a.Categories {
		if !slices.Contains(old.Categories, c) {
			if err := t.put(pairKey(categoryPrefix, c, a.ID), nil); err != nil {
				return err
			}
		}
	}
	if a.StagedFrom != "" {
		if err := t.put(key(stagedPrefix, a.StagedFrom), id); err != nil {
			return err
		}
	}
	if a.BaseID != "" && a.BaseID != old.BaseID {
		if err := t.put(pairKey(childPrefix, a.BaseID, a.ID), nil); err != nil {
			return err
		}
	}
	return nil
}

// unindex removes the index entries of old (a stored record's header) that
// next (the record replacing it, or none) does not have too.
func (t *Tx) unindex(old, next API) error {
	id := old.ID
	if old.DBID != next.DBID {
		if err := t.delKey(dbIDPrefix, old.DBID); err != nil {
			return err
		}
	}
	for _, c := range old.Categories {
		if !slices.Contains(next.Categories, c) {
			if err := t.delPair(categoryPrefix, c, id); err != nil {
				return err
			}
		}
	}
	if old.StagedFrom != "" {
		cur, ok, err := t.StagedCopy(old.StagedFrom)
		if err != nil {
			return err
		}
		if ok && cur == id {
			if err := t.delKey(stagedPrefix, old.StagedFrom); err != nil {
				return err
			}
		}
	}
	if old.BaseID != "" && old.BaseID != next.BaseID {
		if err := t.delPair(childPrefix, old.BaseID, id); err != nil {
			return err
		}
	}
	return nil
}

// CategoryCount is one category in use.
type CategoryCount struct {
	Name  string
	Count int
}

// Categories lists every category in use with its number of APIs, sorted
// by name (byte order), from one scan of the category index.
func (t *Tx) Categories() ([]CategoryCount, error) {
	// the index keeps each category's entries together (its key is the
	// length-prefixed category, then the API ID), so a category is counted
	// as a run of equal prefixes, comparing bytes: no string or map entry
	// per API
	var out []CategoryCount
	var last []byte // the current run's length-prefixed category
	err := t.r.Scan(categoryPrefix, nil, func(k, _ []byte) error {
		k = k[len(categoryPrefix):]
		if len(k) < 2 || int(binary.BigEndian.Uint16(k)) > len(k)-2 {
			return fmt.Errorf("%w: index key %q", ErrCorrupt, k)
		}
		c := k[:2+int(binary.BigEndian.Uint16(k))]
		if len(out) > 0 && bytes.Equal(c, last) {
			out[len(out)-1].Count++
			return nil
		}
		last = append(last[:0], c...)
		out = append(out, CategoryCount{Name: string(c[2:]), Count: 1})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b CategoryCount) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// List returns the APIs in any of categories (every API when none is
// given), in ID order: limit of them after skipping offset (limit < 0: all),
// and how many there are.
func (t *Tx) List(categories []string, offset, limit int) ([]API, int, error) {
	var out []API
	var total int
	err := t.EachListed(categories, offset, limit, func(n int) error { total = n; return nil }, func(a API) error {
		out = append(out, a)
		return nil
	})
	return out, total, err
}

// EachListed is List calling fn with each API instead of keeping them
// (its Doc valid only during the call), after begin with how many there
// are: a list of everything is written as it is read (pkg/liststream).
func (t *Tx) EachListed(categories []string, offset, limit int, begin func(total int) error, fn func(API) error) error {
	if len(categories) == 0 {
		total, err := t.r.Count(apiPrefix)
		if err != nil {
			return err
		}
		if err := begin(total); err != nil {
			return err
		}
		i, n := 0, 0
		return t.r.Scan(apiPrefix, nil, func(k, v []byte) error {
			if limit >= 0 && n >= limit {
				return kv.ErrStop
			}
			if i++; i <= offset {
				return nil
			}
			a, err := decodeAPI(string(k[len(apiPrefix):]), v)
			if err != nil {
				return err
			}
			n++
			return fn(a)
		})
	}
	ids, err := t.categorised(categories)
	if err != nil {
		return err
	}
	if err := begin(len(ids)); err != nil {
		return err
	}
	ids = ids[min(offset, len(ids)):]
	if limit >= 0 {
		ids = ids[:min(limit, len(ids))]
	}
	for _, id := range ids {
		a, err := t.API(id)
		if err != nil {
			return err
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	return nil
}

// categorised lists, in ID order and once each, the IDs of the APIs in any
// of categories, from the category index.
func (t *Tx) categorised(categories []string) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	for _, c := range categories {
		prefix := pairKey(categoryPrefix, c, "")
		err := t.r.Scan(prefix, nil, func(k, _ []byte) error {
			if id := string(k[len(prefix):]); !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// EachFound is a search: it reads the header of every API in any of
// categories (every API when none is given), in ID order, and asks match
// about it, with a.Doc a view of the stored document (valid only during
// the call, a.Derived left out): match decides from the header (ID, DBID,
// Kind, Name) and reads the document only when it must. Of the matches it
// skips offset and calls fn with the next limit (limit < 0: all), decoded
// in full, a.Doc again a view valid only during the call; it returns how
// many APIs matched. Only the records fn is called with are copied.
func (t *Tx) EachFound(categories []string, match func(a API) bool, offset, limit int, fn func(API) error) (int, error) {
	total := 0
	visit := func(id string, v []byte) error {
		a, doc, err := decodeHeader(id, v)
		if err != nil {
			return err
		}
		a.Doc, a.Derived, a.DerivedBy = doc, nil, ""
		if !match(a) {
			return nil
		}
		if total++; total <= offset || limit >= 0 && total > offset+limit {
			return nil
		}
		return fn(a)
	}
	if len(categories) == 0 {
		err := t.r.Scan(apiPrefix, nil, func(k, v []byte) error {
			return visit(string(k[len(apiPrefix):]), v)
		})
		return total, err
	}
	ids, err := t.categorised(categories)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		v, err := t.r.Get(key(apiPrefix, id))
		if err != nil {
			return total, err
		}
		if v == nil {
			return total, fmt.Errorf("%w: category index names api %q, which is not stored", ErrCorrupt, id)
		}
		if err := visit(id, v); err != nil {
			return total, err
		}
	}
	return total, nil
}

// checkIndexes verifies that every index entry matches the records, for tests.
func checkIndexes(t *Tx) error {
	want := map[string]int{}
	err := t.r.Scan(apiPrefix, nil, func(k, v []byte) error {
		a, err := decodeAPI(string(k[len(apiPrefix):]), v)
		if err != nil {
			return err
		}
		return checkAPIIndexes(t, a, want)
	})
	if err != nil {
		return err
	}
	if err := checkUsers(t, want); err != nil {
		return err
	}
	for _, c := range []Collection{Policies, Assets} {
		if err := checkDocs(t, c); err != nil {
			return err
		}
	}
	if err := checkIssuedKeys(t); err != nil {
		return err
	}
	for _, p := range [][]byte{dbIDPrefix, categoryPrefix, stagedPrefix, childPrefix, userKeyPrefix, userEmailPrefix} {
		got, err := t.r.Count(p)
		if err != nil {
			return err
		}
		if got != want[string(p)] {
			return fmt.Errorf("index %s holds %d entries, want %d", p, got, want[string(p)])
		}
	}
	return nil
}

// checkAPIIndexes checks the index entries of one API and counts them in
// want, by index prefix.
func checkAPIIndexes(t *Tx, a API, want map[string]int) error {
	if id, ok, err := t.APIIDByDBID(a.DBID); err != nil || !ok || id != a.ID {
		return fmt.Errorf("db id index: %s → %q, want %q (%v)", a.DBID, id, a.ID, err)
	}
	want[string(dbIDPrefix)]++
	for _, c := range a.Categories {
		if v, err := t.r.Get(pairKey(categoryPrefix, c, a.ID)); err != nil || v == nil {
			return fmt.Errorf("category index misses %q → %s (%v)", c, a.ID, err)
		}
		want[string(categoryPrefix)]++
	}
	if a.StagedFrom != "" {
		if id, _, err := t.StagedCopy(a.StagedFrom); err != nil || id != a.ID {
			return fmt.Errorf("staged index: %s → %q, want %q (%v)", a.StagedFrom, id, a.ID, err)
		}
		want[string(stagedPrefix)]++
	}
	if a.BaseID != "" {
		if v, err := t.r.Get(pairKey(childPrefix, a.BaseID, a.ID)); err != nil || v == nil {
			return fmt.Errorf("child index misses %s → %s (%v)", a.BaseID, a.ID, err)
		}
		want[string(childPrefix)]++
	}
	return nil
}

// EachAPI calls fn with every API in ID order. a.Doc and a.Derived are
// views of the stored bytes, valid only during the call: what is streamed
// from them (the gateways' /system/apis) is never copied whole. a.DerivedBy
// says which build made a.Derived: the reader decides whether to use it.
func (t *Tx) EachAPI(fn func(a API) error) error {
	return t.r.Scan(apiPrefix, nil, func(k, v []byte) error {
		a, doc, err := decodeHeader(string(k[len(apiPrefix):]), v)
		if err != nil {
			return err
		}
		a.Doc = doc
		return fn(a)
	})
}
