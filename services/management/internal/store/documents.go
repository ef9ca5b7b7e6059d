package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Collection is a set of JSON documents the store keeps verbatim, as the
// Tyk Dashboard keeps them: security policies and assets (CONTRACT §2
// "Policies and assets"). Each document has a db id (`_id`, 24 lowercase
// hex) under which it is stored, and an ID (`id`) that clients and
// gateways use; both address it, and they share one namespace: no
// document's ID is another document's db id.
type Collection struct {
	name     string // for errors
	records  []byte // <prefix><_id> → record (encodeDoc)
	ids      []byte // <prefix><id> → _id
	announce Change // what a change of the collection tells gateways
}

// The collections of the management store.
var (
	Policies = Collection{name: "policy", records: policyPrefix, ids: policyIDPrefix, announce: PolicyChanged}
	Assets   = Collection{name: "asset", records: assetPrefix, ids: assetIDPrefix}
)

// Name is the collection's record name ("policy", "asset").
func (c Collection) Name() string { return c.name }

// Document is one stored policy or asset.
type Document struct {
	DBID string // `_id`: 24 lowercase hex
	ID   string // `id`
	Doc  []byte // the exact JSON bytes, holding _id and id
}

// docRecordVersion is the first byte of every document record.
const docRecordVersion = 1

// encodeDoc lays a record out as: version byte, the uvarint length-prefixed
// ID, then the document bytes.
func encodeDoc(d Document) []byte {
	out := make([]byte, 0, 1+binary.MaxVarintLen32+len(d.ID)+len(d.Doc))
	out = append(out, docRecordVersion)
	out = binary.AppendUvarint(out, uint64(len(d.ID)))
	out = append(out, d.ID...)
	return append(out, d.Doc...)
}

// decodeDoc reads a record; the result shares no memory with v unless
// keep is true (then it is valid only inside the transaction).
func (c Collection) decodeDoc(dbID string, v []byte, keep bool) (Document, error) {
	if len(v) < 2 || v[0] != docRecordVersion {
		return Document{}, fmt.Errorf("%w: %s %q: unknown record layout", ErrCorrupt, c.name, dbID)
	}
	id, doc, ok := splitDoc(v)
	if !ok {
		return Document{}, fmt.Errorf("%w: %s %q: truncated record", ErrCorrupt, c.name, dbID)
	}
	d := Document{DBID: dbID, ID: string(id), Doc: doc}
	if !keep {
		d.Doc = bytes.Clone(d.Doc)
	}
	return d, nil
}

// Doc finds the document ref names: its db id, else its ID. ErrNotFound
// when neither names one.
func (t *Tx) Doc(c Collection, ref string) (Document, error) {
	if ref == "" {
		return Document{}, ErrNotFound
	}
	dbID := ref
	v, err := t.r.Get(key(c.records, ref))
	if err == nil && v == nil {
		var holder []byte
		if holder, err = t.r.Get(key(c.ids, ref)); err == nil && holder != nil {
			dbID = string(holder)
			v, err = t.r.Get(key(c.records, dbID))
		}
	}
	switch {
	case err != nil:
		return Document{}, err
	case v == nil:
		return Document{}, ErrNotFound
	}
	return c.decodeDoc(dbID, v, false)
}

// PutDoc stores d, creating it or replacing the document with its db id,
// and keeps the ID index right. ErrAlreadyExists when d's ID or db id
// names another document.
func (t *Tx) PutDoc(c Collection, d Document) error {
	if !IsDBID(d.DBID) || d.ID == "" {
		return fmt.Errorf("%w: %s needs a 24-hex _id and an id", ErrInvalid, c.name)
	}
	for _, name := range []string{d.ID, d.DBID} {
		holder, err := t.holder(c, name)
		if err != nil {
			return err
		}
		if holder != "" && holder != d.DBID {
			return fmt.Errorf("%w: %s %q", ErrAlreadyExists, c.name, name)
		}
	}
	if err := t.unindexDoc(c, d.DBID); err != nil {
		return err
	}
	if err := t.put(key(c.records, d.DBID), encodeDoc(d)); err != nil {
		return err
	}
	t.changed |= c.announce
	return t.put(key(c.ids, d.ID), []byte(d.DBID))
}

// holder is the db id of the document that name addresses ("" for none).
func (t *Tx) holder(c Collection, name string) (string, error) {
	if v, err := t.r.Get(key(c.records, name)); err != nil || v != nil {
		return name, err
	}
	v, err := t.r.Get(key(c.ids, name))
	return string(v), err
}

// unindexDoc removes the ID index entry of the document stored under dbID.
func (t *Tx) unindexDoc(c Collection, dbID string) error {
	v, err := t.r.Get(key(c.records, dbID))
	if err != nil || v == nil {
		return err
	}
	old, err := c.decodeDoc(dbID, v, true)
	if err != nil {
		return err
	}
	return t.delKey(c.ids, old.ID)
}

// DeleteDoc removes the document with this db id; ErrNotFound when there is none.
func (t *Tx) DeleteDoc(c Collection, dbID string) error {
	v, err := t.r.Get(key(c.records, dbID))
	switch {
	case err != nil:
		return err
	case v == nil:
		return ErrNotFound
	}
	if err := t.unindexDoc(c, dbID); err != nil {
		return err
	}
	t.changed |= c.announce
	return t.delKey(c.records, dbID)
}

// EachDoc calls fn with every document in db id order; the document's bytes
// are valid only during the call.
func (t *Tx) EachDoc(c Collection, fn func(Document) error) error {
	return t.EachDocWhere(c, nil, fn)
}

// EachDocWhere is EachDoc of the documents whose bytes keep accepts (every
// one when keep is nil), asked before the document is decoded: a scan that
// passes over most documents (an API delete's in-use check reads every
// policy) allocates nothing for those.
func (t *Tx) EachDocWhere(c Collection, keep func(doc []byte) bool, fn func(Document) error) error {
	return t.r.Scan(c.records, nil, func(k, v []byte) error {
		if keep != nil {
			if _, doc, ok := splitDoc(v); ok && !keep(doc) {
				return nil
			}
		}
		d, err := c.decodeDoc(string(k[len(c.records):]), v, true)
		if err != nil {
			return err
		}
		return fn(d)
	})
}

// splitDoc reads a document record: its ID and the document; ok is false
// for one decodeDoc refuses.
func splitDoc(v []byte) (id, doc []byte, ok bool) {
	if len(v) < 2 || v[0] != docRecordVersion {
		return nil, nil, false
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return nil, nil, false
	}
	rest := v[1+w:]
	return rest[:n], rest[n:], true
}

// CreateDoc stores a new document. An empty givenDBID gets a fresh db id;
// a given one, or the document's ID, that addresses another document is
// ErrAlreadyExists (the namespace rule of API records too: Tx.PutAPI); doc
// returns the bytes to store under the final db id, and the document's ID
// ("" means the db id).
func (s *Store) CreateDoc(ctx context.Context, c Collection, givenDBID string, doc func(dbID string) (id string, b []byte, err error)) (Document, error) {
	var created Document
	err := s.Update(ctx, func(tx *Tx) error {
		d := Document{DBID: givenDBID}
		if d.DBID == "" {
			var err error
			if d.DBID, err = tx.newDocDBID(c); err != nil {
				return err
			}
		}
		var err error
		if d.ID, d.Doc, err = doc(d.DBID); err != nil {
			return err
		}
		if err := tx.createCheck(c, d); err != nil {
			return err
		}
		auditctx.SetObject(ctx, d.DBID) // the request's audit entry names the new document, as its answer does
		if err := tx.PutDoc(c, d); err != nil {
			return err
		}
		created = Document{DBID: d.DBID, ID: d.ID}
		return nil
	})
	return created, err
}

// createCheck refuses a new document whose db id or ID addresses an existing one.
func (t *Tx) createCheck(c Collection, d Document) error {
	for _, name := range []string{d.DBID, d.ID} {
		holder, err := t.holder(c, name)
		if err != nil {
			return err
		}
		if holder != "" {
			return fmt.Errorf("%w: %s %q", ErrAlreadyExists, c.name, name)
		}
	}
	return nil
}

// newDocDBID returns a fresh db id that addresses nothing in c.
func (t *Tx) newDocDBID(c Collection) (string, error) {
	for {
		id := NewDBID()
		if holder, err := t.holder(c, id); err != nil || holder == "" {
			return id, err
		}
	}
}

// GetDoc reads the document ref names (Tx.Doc).
func (s *Store) GetDoc(ctx context.Context, c Collection, ref string) (Document, error) {
	var d Document
	err := s.View(ctx, func(tx *Tx) (err error) {
		d, err = tx.Doc(c, ref)
		return err
	})
	return d, err
}

// UpdateDoc replaces the document ref names with what edit makes of it; the
// db id stays the stored one.
func (s *Store) UpdateDoc(ctx context.Context, c Collection, ref string, edit func(old Document) (Document, error)) error {
	return s.Update(ctx, func(tx *Tx) error {
		old, err := tx.Doc(c, ref)
		if err != nil {
			return err
		}
		n, err := edit(old)
		if err != nil {
			return err
		}
		n.DBID = old.DBID
		return tx.PutDoc(c, n)
	})
}

// DeleteDocument removes the document ref names. check, when set, runs
// first in the same transaction, and its error refuses the delete.
func (s *Store) DeleteDocument(ctx context.Context, c Collection, ref string, check func(*Tx, Document) error) error {
	return s.Update(ctx, func(tx *Tx) error {
		d, err := tx.Doc(c, ref)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(tx, d); err != nil {
				return err
			}
		}
		return tx.DeleteDoc(c, d.DBID)
	})
}

// ListDocs returns limit documents after skipping offset (limit < 0: all),
// in db id order, and how many there are, from one snapshot.
func (s *Store) ListDocs(ctx context.Context, c Collection, offset, limit int) ([]Document, int, error) {
	var out []Document
	var total int
	err := s.View(ctx, func(tx *Tx) error {
		var page []Document
		n, err := tx.r.Count(c.records)
		if err != nil {
			return err
		}
		i := 0
		err = tx.EachDoc(c, func(d Document) error {
			if limit >= 0 && len(page) >= limit {
				return kv.ErrStop
			}
			if i++; i > offset {
				d.Doc = bytes.Clone(d.Doc)
				page = append(page, d)
			}
			return nil
		})
		out, total = page, n
		return err
	})
	return out, total, err
}

// EachDocs calls begin with the number of c's documents, then each with
// every document's bytes (valid only during the call), in ListDocs' order,
// from one snapshot, keeping none: a list of everything is written as it
// is read (pkg/liststream).
func (s *Store) EachDocs(ctx context.Context, c Collection, begin func(total int) error, each func(doc []byte) error) error {
	return s.View(ctx, func(tx *Tx) error {
		n, err := tx.r.Count(c.records)
		if err != nil {
			return err
		}
		if err := begin(n); err != nil {
			return err
		}
		return tx.EachDoc(c, func(d Document) error { return each(d.Doc) })
	})
}

// checkDocs verifies a collection's ID index against its records, for tests.
func checkDocs(t *Tx, c Collection) error {
	n := 0
	err := t.EachDoc(c, func(d Document) error {
		n++
		if v, err := t.r.Get(key(c.ids, d.ID)); err != nil || string(v) != d.DBID {
			return fmt.Errorf("%s id index: %q → %q, want %q (%v)", c.name, d.ID, v, d.DBID, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if got, err := t.r.Count(c.ids); err != nil || got != n {
		return fmt.Errorf("%s id index holds %d entries, want %d (%v)", c.name, got, n, err)
	}
	return nil
}
