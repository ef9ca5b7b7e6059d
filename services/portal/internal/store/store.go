// Package store keeps the developer portal's records — API products, their
// tutorial pages, tags, categories and the admin API keys — in a kv engine
// (bbolt or etcd), written once against pkg/kv. Every method is one
// transaction; update functions may run more than once (kv's contract), so
// they derive what they write from what they read.
package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

var (
	// ErrNotFound means no record has that id (or the page belongs to another product).
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists means a tag or category with that name exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrPathTaken means another page of the product has that Path (see PathTakenError).
	ErrPathTaken = errors.New("path taken")
)

// Store is the portal's domain store. Every write is one transaction,
// durable before the method returns.
type Store struct{ kv kv.Engine }

// Open checks (and if needed upgrades) the layout of e's key space in one
// transaction and returns the store. The caller keeps owning e.
func Open(ctx context.Context, e kv.Engine) (*Store, error) {
	if err := kv.EnsureSchema(ctx, e, "portal", schemaVersion, upgrade); err != nil {
		return nil, fmt.Errorf("portal store: %w", err)
	}
	return &Store{kv: e}, nil
}

// Ready reports whether the engine answers (readiness).
func (s *Store) Ready(ctx context.Context) error { return s.kv.Ready(ctx) }

// Product is an API product.
type Product struct {
	ID          uint32 `json:"id"`
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Description string `json:"description"`
	Path        string `json:"path"`
	Content     string `json:"content"`
	// PolicyIDs are the management policies (their `id`) a credential for
	// the product applies; PlanIDs the plans the product offers.
	PolicyIDs []string  `json:"policy_ids,omitempty"`
	PlanIDs   []uint32  `json:"plan_ids,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
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
	// Rendered is what the public site shows of the page, kept under its
	// own key (rendered.go): set by a write that changes what is shown,
	// read by ShownPage.
	Rendered *Rendered `json:"-"`
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

// LabelLookup tells, inside a write transaction, whether a tag or category
// exists. A failed read answers false and fails the transaction.
type LabelLookup func(kind LabelKind, id uint32) bool

// lookupIn returns a LabelLookup over tx and the first read error it met.
func lookupIn(tx kv.ReadTx) (LabelLookup, func() error) {
	var failed error
	return func(kind LabelKind, id uint32) bool {
			ok, err := exists(tx, labelKey(kind, id))
			if err != nil && failed == nil {
				failed = err
			}
			return ok
		}, func() error {
			return failed
		}
}

func put(tx kv.WriteTx, k []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(k, raw)
}

// get reads and decodes k; ErrNotFound when absent.
func get[T any](tx kv.ReadTx, k []byte, what string) (T, error) {
	raw, err := tx.Get(k)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode[T](raw, what)
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

func exists(tx kv.ReadTx, k []byte) (bool, error) {
	v, err := tx.Get(k)
	return v != nil, err
}

// mustExist is ErrNotFound unless k exists.
func mustExist(tx kv.ReadTx, k []byte) error {
	ok, err := exists(tx, k)
	if err == nil && !ok {
		err = ErrNotFound
	}
	return err
}

// window calls fn for the pairs under prefix after skipping offset, at most limit times.
func window(tx kv.ReadTx, prefix []byte, offset, limit int, fn func(k, v []byte) error) error {
	i := 0
	return tx.Scan(prefix, nil, func(k, v []byte) error {
		if limit <= 0 {
			return kv.ErrStop
		}
		if i++; i <= offset {
			return nil
		}
		limit--
		return fn(k, v)
	})
}

// CreateProduct stores p under a new id and returns it with the id set.
func (s *Store) CreateProduct(ctx context.Context, p Product) (Product, error) {
	var out Product
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		id, err := kv.NextID32(tx, productSeq)
		if err != nil {
			return err
		}
		auditctx.SetObject(ctx, strconv.FormatUint(uint64(id), 10)) // the request's audit entry names the new product
		rec := p
		rec.ID = id
		if err := put(tx, productKey(id), rec); err != nil {
			return err
		}
		out = rec
		return nil
	})
	return out, err
}

// GetProduct reads one product.
func (s *Store) GetProduct(ctx context.Context, id uint32) (Product, error) {
	var p Product
	err := s.kv.View(ctx, func(tx kv.ReadTx) (err error) {
		p, err = get[Product](tx, productKey(id), "product")
		return err
	})
	return p, err
}

// ListProducts returns up to limit products after skipping offset, in ascending id order.
func (s *Store) ListProducts(ctx context.Context, offset, limit int) ([]Product, error) {
	out := []Product{}
	err := s.EachProduct(ctx, offset, limit, func(p Product) error {
		out = append(out, p)
		return nil
	})
	return out, err
}

// EachProduct is ListProducts calling fn with each product instead of
// keeping them, from one snapshot (pkg/liststream).
func (s *Store) EachProduct(ctx context.Context, offset, limit int, fn func(Product) error) error {
	return s.kv.View(ctx, func(tx kv.ReadTx) error {
		return window(tx, productPrefix, offset, limit, func(_, v []byte) error {
			p, err := decode[Product](v, "product")
			if err != nil {
				return err
			}
			return fn(p)
		})
	})
}

// UpdateProduct runs update on the stored product inside one transaction and
// stores the result unless update fails; the ID cannot change. update may
// run more than once, each time on a fresh copy.
func (s *Store) UpdateProduct(ctx context.Context, id uint32, update func(*Product) error) (Product, error) {
	var out Product
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		p, err := get[Product](tx, productKey(id), "product")
		if err != nil {
			return err
		}
		if err := update(&p); err != nil {
			return err
		}
		p.ID = id
		if err := put(tx, productKey(id), p); err != nil {
			return err
		}
		out = p
		return nil
	})
	return out, err
}

// DeleteProduct removes a product, every tutorial page of it and its page
// order, in one transaction.
func (s *Store) DeleteProduct(ctx context.Context, id uint32) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		if err := mustExist(tx, productKey(id)); err != nil {
			return err
		}
		if err := tx.Scan(pagesOf(id), nil, func(k, _ []byte) error { return tx.Delete(k) }); err != nil {
			return err
		}
		if err := tx.Scan(renderedOf(id), nil, func(k, _ []byte) error { return tx.Delete(k) }); err != nil {
			return err
		}
		if err := tx.Delete(orderKey(id)); err != nil {
			return err
		}
		if err := markChanged(tx); err != nil {
			return err
		}
		return tx.Delete(productKey(id))
	})
}

// KeyValid reports whether hash is the hash of a stored admin API key.
func (s *Store) KeyValid(ctx context.Context, hash []byte) (bool, error) {
	valid := false
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		c, err := get[Credential](tx, apiKeyKey(hash), "credential")
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		valid = c.Admin
		return err
	})
	return valid, err
}

// HasAdmin reports whether any admin API key exists.
func (s *Store) HasAdmin(ctx context.Context) (bool, error) {
	var found bool
	err := s.kv.View(ctx, func(tx kv.ReadTx) (err error) { found, err = hasAdmin(tx); return err })
	return found, err
}

func hasAdmin(tx kv.ReadTx) (bool, error) {
	found := false
	err := tx.Scan(apiKeyPrefix, nil, func(_, v []byte) error {
		c, err := decode[Credential](v, "credential")
		if err != nil {
			return err
		}
		if c.Admin {
			found = true
			return kv.ErrStop
		}
		return nil
	})
	return found, err
}

// EnsureAdmin stores an admin API key with this hash unless it exists or,
// with onlyFirst, unless any admin key exists; one transaction, so replicas
// starting together create one (credential.AdminStore).
func (s *Store) EnsureAdmin(ctx context.Context, hash []byte, onlyFirst bool) (created bool, err error) {
	now := time.Now().UTC()
	err = s.kv.Update(ctx, func(tx kv.WriteTx) error {
		created = false
		if ok, err := exists(tx, apiKeyKey(hash)); err != nil || ok {
			return err
		}
		if onlyFirst {
			if has, err := hasAdmin(tx); err != nil || has {
				return err
			}
		}
		if err := put(tx, apiKeyKey(hash), Credential{Admin: true, CreatedAt: now}); err != nil {
			return err
		}
		created = true
		return nil
	})
	return created && err == nil, err
}

// RetireBootstrap makes hash the bootstrap credential the store remembers
// and, when it remembered another one, deletes that admin key (a new
// --bootstrap-token retires the previous). It returns "bootstrap" when it
// retired one (admin keys have no id), else "".
func (s *Store) RetireBootstrap(ctx context.Context, hash []byte) (retired string, err error) {
	err = s.kv.Update(ctx, func(tx kv.WriteTx) error {
		retired = ""
		prev, err := tx.Get(bootstrapKey)
		if err != nil || bytes.Equal(prev, hash) {
			return err
		}
		found := false
		if prev != nil {
			if found, err = exists(tx, apiKeyKey(prev)); err != nil {
				return err
			}
			if err := tx.Delete(apiKeyKey(prev)); err != nil {
				return err
			}
		}
		if err := tx.Put(bootstrapKey, bytes.Clone(hash)); err != nil {
			return err
		}
		if found {
			retired = "bootstrap"
		}
		return nil
	})
	return retired, err
}
