// Package store keeps the developer portal's records in bbolt: API products,
// their tutorial pages, tags, categories and the admin API keys.
package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/pkg/boltstore"
)

// schemaVersion is the layout below; raise it with a migration when it changes.
const schemaVersion = 1

// Buckets, all declared here and created when the store opens. IDs are
// uint32 big-endian, so a cursor walks them in ascending order.
var (
	productBucket = []byte("products")       // product id → Product (JSON)
	pageBucket    = []byte("pages")          // product id ‖ page id → Page (JSON); its sequence numbers pages
	tagBucket     = []byte("tags")           // tag id → Label (JSON)
	tagNameBucket = []byte("tag_names")      // tag name → tag id
	catBucket     = []byte("categories")     // category id → Label (JSON)
	catNameBucket = []byte("category_names") // category name → category id
	keyBucket     = []byte("api_keys")       // SHA-256 of an admin API key → Credential (JSON)
	orderBucket   = []byte("page_orders")    // product id → its page ids in their order (uint32 big-endian each)
	siteBucket    = []byte("site")           // changedKey → when pages last changed without an UpdatedAt moving
	allBuckets    = [][]byte{productBucket, pageBucket, tagBucket, tagNameBucket, catBucket, catNameBucket, keyBucket, orderBucket, siteBucket}
	errNoBucket   = errors.New("store: bucket missing")
	labelBuckets  = map[LabelKind][2][]byte{Tags: {tagBucket, tagNameBucket}, Categories: {catBucket, catNameBucket}}
)

var (
	// ErrNotFound means no record has that id (or the page belongs to another product).
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists means a tag or category with that name exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrPathTaken means another page of the product has that Path (see PathTakenError).
	ErrPathTaken = errors.New("path taken")
	// ErrIDsExhausted means every uint32 id has been handed out.
	ErrIDsExhausted = boltstore.ErrIDsExhausted
)

// Store is the portal's bbolt store. Every write is one transaction, fsynced
// before the method returns.
type Store struct{ db *bolt.DB }

// Open opens the store file at path.
func Open(path string) (*Store, error) {
	db, err := boltstore.Open(path, schemaVersion, allBuckets...)
	if err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Product is an API product.
type Product struct {
	ID          uint32    `json:"id"`
	Name        string    `json:"name"`
	DisplayName string    `json:"display_name"`
	Description string    `json:"description"`
	Path        string    `json:"path"`
	Content     string    `json:"content"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Page is a tutorial page. Categories and Tags hold IDs; the read methods
// fill CategoryNames and TagNames with the names of those that exist.
type Page struct {
	ID              uint32    `json:"id"`
	ProductID       uint32    `json:"product_id"`
	Title           string    `json:"title"`
	Content         string    `json:"content"`
	MarkdownEnabled bool      `json:"markdown_enabled"`
	Status          string    `json:"status"`
	Lede            string    `json:"lede"`
	Path            string    `json:"path"`
	Categories      []uint32  `json:"categories"`
	Tags            []uint32  `json:"tags"`
	MarkdownContent string    `json:"markdown_content"`
	PreviewContent  string    `json:"preview_content"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`

	CategoryNames []string `json:"-"`
	TagNames      []string `json:"-"`
}

// LabelKind tells tags from categories.
type LabelKind int

const (
	// Tags label pages.
	Tags LabelKind = iota + 1
	// Categories file pages.
	Categories
)

// Label is a tag or a category.
type Label struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
}

// Credential is an admin API key, known only by its hash.
type Credential struct {
	Admin     bool      `json:"admin"`
	CreatedAt time.Time `json:"created_at"`
}

// LabelLookup tells, inside a write transaction, whether a tag or category exists.
type LabelLookup func(kind LabelKind, id uint32) bool

func pageKey(product, page uint32) []byte {
	return binary.BigEndian.AppendUint32(boltstore.Key(product), page)
}

func put(b *bolt.Bucket, k []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}

func decode[T any](raw []byte, what string) (T, error) {
	var v T
	if raw == nil {
		return v, ErrNotFound
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("decode %s: %w", what, err)
	}
	return v, nil
}

// window calls fn for the records of c after skipping offset, at most limit
// times, walking keys that start with prefix.
func window(c *bolt.Cursor, prefix []byte, offset, limit int, fn func(k, v []byte) error) error {
	i := 0
	for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix) && limit > 0; k, v = c.Next() {
		if i++; i <= offset {
			continue
		}
		if err := fn(k, v); err != nil {
			return err
		}
		limit--
	}
	return nil
}

func hasPrefix(k, prefix []byte) bool {
	return len(k) >= len(prefix) && string(k[:len(prefix)]) == string(prefix)
}

// CreateProduct stores p under a new id and returns it with the id set.
func (s *Store) CreateProduct(_ context.Context, p Product) (Product, error) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(productBucket)
		id, err := boltstore.NextID(b)
		if err != nil {
			return err
		}
		p.ID = id
		return put(b, boltstore.Key(id), p)
	})
	return p, err
}

// GetProduct reads one product.
func (s *Store) GetProduct(_ context.Context, id uint32) (Product, error) {
	var p Product
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		p, err = decode[Product](tx.Bucket(productBucket).Get(boltstore.Key(id)), "product")
		return err
	})
	return p, err
}

// ListProducts returns up to limit products after skipping offset, in ascending id order.
func (s *Store) ListProducts(_ context.Context, offset, limit int) ([]Product, error) {
	out := []Product{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return window(tx.Bucket(productBucket).Cursor(), nil, offset, limit, func(_, v []byte) error {
			p, err := decode[Product](v, "product")
			out = append(out, p)
			return err
		})
	})
	return out, err
}

// UpdateProduct runs update on the stored product inside one transaction and
// stores the result unless update fails; the ID cannot change.
func (s *Store) UpdateProduct(_ context.Context, id uint32, update func(*Product) error) (Product, error) {
	var p Product
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(productBucket)
		var err error
		if p, err = decode[Product](b.Get(boltstore.Key(id)), "product"); err != nil {
			return err
		}
		if err := update(&p); err != nil {
			return err
		}
		p.ID = id
		return put(b, boltstore.Key(id), p)
	})
	return p, err
}

// DeleteProduct removes a product and every tutorial page of it, in one transaction.
func (s *Store) DeleteProduct(_ context.Context, id uint32) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(productBucket)
		if b.Get(boltstore.Key(id)) == nil {
			return ErrNotFound
		}
		pages := tx.Bucket(pageBucket)
		prefix := boltstore.Key(id)
		c := pages.Cursor()
		for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		if err := tx.Bucket(orderBucket).Delete(prefix); err != nil {
			return err
		}
		if err := markChanged(tx); err != nil {
			return err
		}
		return b.Delete(boltstore.Key(id))
	})
}

// CreatePage stores a new page of product, last in the product's order.
// fill sets the page's fields; it runs inside the transaction and may look
// labels up, and its error aborts the creation. The product must exist, and
// a Path already used by another page of the product is a *PathTakenError.
func (s *Store) CreatePage(_ context.Context, product uint32, fill func(*Page, LabelLookup) error) (Page, error) {
	var p Page
	err := s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(productBucket).Get(boltstore.Key(product)) == nil {
			return ErrNotFound
		}
		if err := fill(&p, lookupIn(tx)); err != nil {
			return err
		}
		b := tx.Bucket(pageBucket)
		if err := pathFree(tx, product, 0, p.Path); err != nil {
			return err
		}
		id, err := boltstore.NextID(b)
		if err != nil {
			return err
		}
		p.ID, p.ProductID = id, product
		if err := put(b, pageKey(product, id), p); err != nil {
			return err
		}
		return fillNames(tx, &p, nil)
	})
	return p, err
}

// GetPage reads page id of product; a page of another product is ErrNotFound.
func (s *Store) GetPage(_ context.Context, product, id uint32) (Page, error) {
	var p Page
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		if p, err = decode[Page](tx.Bucket(pageBucket).Get(pageKey(product, id)), "page"); err != nil {
			return err
		}
		return fillNames(tx, &p, nil)
	})
	return p, err
}

// ListPages returns up to limit pages of product after skipping offset, in
// the product's page order; ErrNotFound when the product does not exist.
func (s *Store) ListPages(_ context.Context, product uint32, offset, limit int) ([]Page, error) {
	out := []Page{}
	err := s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(productBucket).Get(boltstore.Key(product)) == nil {
			return ErrNotFound
		}
		order := pageOrder(tx, product)
		if offset >= len(order) {
			return nil
		}
		order = order[offset:]
		if limit < len(order) {
			order = order[:limit]
		}
		var err error
		out, err = pagesByID(tx, product, order)
		return err
	})
	return out, err
}

// UpdatePage runs update on page id of product inside one transaction and
// stores the result unless update fails. update may look labels up; the
// page's ID and product cannot change. A new Path already used by another
// page of the product is a *PathTakenError.
func (s *Store) UpdatePage(_ context.Context, product, id uint32, update func(*Page, LabelLookup) error) (Page, error) {
	var p Page
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(pageBucket)
		var err error
		if p, err = decode[Page](b.Get(pageKey(product, id)), "page"); err != nil {
			return err
		}
		before := CleanPath(p.Path)
		if err := update(&p, lookupIn(tx)); err != nil {
			return err
		}
		if CleanPath(p.Path) != before {
			if err := pathFree(tx, product, id, p.Path); err != nil {
				return err
			}
		}
		p.ID, p.ProductID = id, product
		if err := put(b, pageKey(product, id), p); err != nil {
			return err
		}
		return fillNames(tx, &p, nil)
	})
	return p, err
}

// DeletePage removes page id of product.
func (s *Store) DeletePage(_ context.Context, product, id uint32) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(pageBucket)
		if b.Get(pageKey(product, id)) == nil {
			return ErrNotFound
		}
		if err := b.Delete(pageKey(product, id)); err != nil {
			return err
		}
		if err := setOrder(tx, product, pageOrder(tx, product)); err != nil {
			return err
		}
		return markChanged(tx)
	})
}

type labelRef struct {
	kind LabelKind
	id   uint32
}

func lookupIn(tx *bolt.Tx) LabelLookup {
	return func(kind LabelKind, id uint32) bool {
		return tx.Bucket(labelBuckets[kind][0]).Get(boltstore.Key(id)) != nil
	}
}

// fillNames sets the names of p's tags and categories; a label that no
// longer exists is left out. cache, when not nil, remembers names across pages.
func fillNames(tx *bolt.Tx, p *Page, cache map[labelRef]string) error {
	var err error
	if p.CategoryNames, err = names(tx, Categories, p.Categories, cache); err != nil {
		return err
	}
	p.TagNames, err = names(tx, Tags, p.Tags, cache)
	return err
}

func names(tx *bolt.Tx, kind LabelKind, ids []uint32, cache map[labelRef]string) ([]string, error) {
	out := make([]string, 0, len(ids))
	b := tx.Bucket(labelBuckets[kind][0])
	for _, id := range ids {
		if n, ok := cache[labelRef{kind, id}]; ok {
			out = append(out, n)
			continue
		}
		raw := b.Get(boltstore.Key(id))
		if raw == nil {
			continue
		}
		l, err := decode[Label](raw, "label")
		if err != nil {
			return nil, err
		}
		if cache != nil {
			cache[labelRef{kind, id}] = l.Name
		}
		out = append(out, l.Name)
	}
	return out, nil
}

// CreateLabel stores a tag or category named name; ErrAlreadyExists when
// one of that kind has exactly that name.
func (s *Store) CreateLabel(_ context.Context, kind LabelKind, name string) (Label, error) {
	l := Label{Name: name}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, byName := tx.Bucket(labelBuckets[kind][0]), tx.Bucket(labelBuckets[kind][1])
		if byName.Get([]byte(name)) != nil {
			return ErrAlreadyExists
		}
		id, err := boltstore.NextID(b)
		if err != nil {
			return err
		}
		l.ID = id
		if err := byName.Put([]byte(name), boltstore.Key(id)); err != nil {
			return err
		}
		return put(b, boltstore.Key(id), l)
	})
	return l, err
}

// ListLabels returns every tag or category in ascending id order.
func (s *Store) ListLabels(_ context.Context, kind LabelKind) ([]Label, error) {
	out := []Label{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(labelBuckets[kind][0]).ForEach(func(_, v []byte) error {
			l, err := decode[Label](v, "label")
			out = append(out, l)
			return err
		})
	})
	return out, err
}

// DeleteLabel removes a tag or category and takes it off every page that
// references it, in one transaction.
func (s *Store) DeleteLabel(_ context.Context, kind LabelKind, id uint32) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b, byName := tx.Bucket(labelBuckets[kind][0]), tx.Bucket(labelBuckets[kind][1])
		l, err := decode[Label](b.Get(boltstore.Key(id)), "label")
		if err != nil {
			return err
		}
		if err := byName.Delete([]byte(l.Name)); err != nil {
			return err
		}
		if err := b.Delete(boltstore.Key(id)); err != nil {
			return err
		}
		if err := markChanged(tx); err != nil {
			return err
		}
		return unlinkLabel(tx, kind, id)
	})
}

// unlinkLabel removes a label's id from every page that lists it.
func unlinkLabel(tx *bolt.Tx, kind LabelKind, id uint32) error {
	pages := tx.Bucket(pageBucket)
	type change struct {
		k []byte
		p Page
	}
	var changed []change
	err := pages.ForEach(func(k, v []byte) error {
		p, err := decode[Page](v, "page")
		if err != nil {
			return err
		}
		list := &p.Tags
		if kind == Categories {
			list = &p.Categories
		}
		kept := (*list)[:0]
		for _, x := range *list {
			if x != id {
				kept = append(kept, x)
			}
		}
		if len(kept) != len(*list) {
			*list = kept
			changed = append(changed, change{append([]byte(nil), k...), p})
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Writes after the walk: bbolt forbids changing a bucket inside ForEach.
	for _, c := range changed {
		if err := put(pages, c.k, c.p); err != nil {
			return err
		}
	}
	return nil
}

// KeyValid reports whether hash is the hash of a stored admin API key.
func (s *Store) KeyValid(_ context.Context, hash []byte) (bool, error) {
	valid := false
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(keyBucket).Get(hash)
		if raw == nil {
			return nil
		}
		c, err := decode[Credential](raw, "credential")
		valid = c.Admin
		return err
	})
	return valid, err
}

// HasAdmin reports whether any admin API key exists (credential.AdminStore).
func (s *Store) HasAdmin(_ context.Context) (bool, error) {
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(keyBucket).ForEach(func(_, v []byte) error {
			c, err := decode[Credential](v, "credential")
			found = found || c.Admin
			return err
		})
	})
	return found, err
}

// EnsureAdmin stores an admin API key with this hash unless it exists or,
// with onlyFirst, unless any admin key exists; one transaction (credential.AdminStore).
func (s *Store) EnsureAdmin(_ context.Context, hash []byte, onlyFirst bool) (created bool, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(keyBucket)
		if b.Get(hash) != nil || (onlyFirst && b.Stats().KeyN > 0) {
			return nil
		}
		created = true
		return put(b, hash, Credential{Admin: true, CreatedAt: time.Now().UTC()})
	})
	return created && err == nil, err
}

// Check runs bbolt's consistency check and verifies that every bucket
// exists; tests call it before closing a store.
func (s *Store) Check() error {
	return s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("%w: %s", errNoBucket, name)
			}
		}
		return nil
	})
}
