package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Rendered is a page's content as the public site shows it: sanitised HTML
// and its headings. The API makes it when the page is written (package
// site renders it) and the store keeps it beside the page, under its own
// key (pagehtml/<product id><id>), in the same transaction: a reader's GET
// reads it, without the page's source text, and never renders. Version is
// the renderer's (site.RenderVersion): a rendering of another version is
// made again (site.Site.RenderStored).
type Rendered struct {
	Version  int
	HTML     string
	Headings []RenderedHeading
}

// RenderedHeading is one entry of a page's table of contents.
type RenderedHeading struct {
	Level int    `json:"level"`
	ID    string `json:"id"`
	Text  string `json:"text"`
}

var renderedPrefix = []byte("pagehtml/")

func renderedKey(product, page uint32) []byte { return idKey(renderedPrefix, product, page) }
func renderedOf(product uint32) []byte        { return idKey(renderedPrefix, product) }

// encodeRendered lays r out as its version, the length of its headings'
// JSON, that JSON, then the HTML as it is (no escaping: HTML is mostly
// quotes and angle brackets).
func encodeRendered(r *Rendered) ([]byte, error) {
	heads, err := json.Marshal(r.Headings)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 8+len(heads)+len(r.HTML))
	out = binary.BigEndian.AppendUint32(out, uint32(r.Version))
	out = binary.BigEndian.AppendUint32(out, uint32(len(heads)))
	out = append(append(out, heads...), r.HTML...)
	return out, nil
}

func decodeRendered(raw []byte, html bool) (*Rendered, error) {
	if len(raw) < 8 || uint64(binary.BigEndian.Uint32(raw[4:8])) > uint64(len(raw)-8) {
		return nil, fmt.Errorf("decode page rendering: %d bytes", len(raw))
	}
	n := 8 + int(binary.BigEndian.Uint32(raw[4:8]))
	r := &Rendered{Version: int(binary.BigEndian.Uint32(raw[:4]))}
	if err := json.Unmarshal(raw[8:n], &r.Headings); err != nil {
		return nil, fmt.Errorf("decode page rendering: %w", err)
	}
	if html {
		r.HTML = string(raw[n:])
	}
	return r, nil
}

// putRendered stores p.Rendered when the write made one.
func putRendered(tx kv.WriteTx, p Page) error {
	if p.Rendered == nil {
		return nil
	}
	raw, err := encodeRendered(p.Rendered)
	if err != nil {
		return err
	}
	return tx.Put(renderedKey(p.ProductID, p.ID), raw)
}

// pageHead is a stored page without its source texts: decoding into it
// skips them.
type pageHead struct {
	ID         uint32    `json:"id"`
	ProductID  uint32    `json:"product_id"`
	Title      string    `json:"title"`
	Status     string    `json:"status"`
	Lede       string    `json:"lede"`
	Path       string    `json:"path"`
	Categories []uint32  `json:"categories"`
	Tags       []uint32  `json:"tags"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// ShownPage reads page id of product as the public site shows it: its
// fields but not its source texts (Content, MarkdownContent and
// PreviewContent are empty), its labels' names, and its Rendered (nil when
// none is kept), whose HTML is read only when html is set (a reader that
// keeps the HTML it read asks without it first). ErrNotFound as GetPage.
func (s *Store) ShownPage(ctx context.Context, product, id uint32, html bool) (Page, error) {
	var p Page
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		h, err := get[pageHead](tx, pageKey(product, id), "page")
		if err != nil {
			return err
		}
		p = Page{ID: h.ID, ProductID: h.ProductID, Title: h.Title, Status: h.Status, Lede: h.Lede, Path: h.Path,
			Categories: h.Categories, Tags: h.Tags, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt}
		raw, err := tx.Get(renderedKey(product, id))
		if err != nil {
			return err
		}
		if raw != nil {
			if p.Rendered, err = decodeRendered(raw, html); err != nil {
				return err
			}
		}
		return fillNames(tx, &p, nil)
	})
	return p, err
}

// PageRef names a page at one UpdatedAt.
type PageRef struct {
	Product, ID uint32
	UpdatedAt   time.Time
}

// Unrendered lists up to limit pages whose kept rendering is missing or of
// another version than version.
func (s *Store) Unrendered(ctx context.Context, version, limit int) ([]PageRef, error) {
	var out []PageRef
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		return tx.Scan(pagePrefix, nil, func(k, v []byte) error {
			if len(out) >= limit {
				return kv.ErrStop
			}
			h, err := decode[pageHead](v, "page")
			if err != nil {
				return err
			}
			raw, err := tx.Get(renderedKey(h.ProductID, h.ID))
			if err != nil {
				return err
			}
			if len(raw) < 4 || int(binary.BigEndian.Uint32(raw[:4])) != version {
				out = append(out, PageRef{Product: h.ProductID, ID: h.ID, UpdatedAt: h.UpdatedAt})
			}
			return nil
		})
	})
	return out, err
}

// SetRendered keeps r as the rendering of the page ref names, unless the
// page is gone or was written since ref's UpdatedAt (that write kept its
// own rendering). render runs outside the transaction, on the page as read.
func (s *Store) SetRendered(ctx context.Context, ref PageRef, render func(Page) *Rendered) error {
	p, err := s.GetPage(ctx, ref.Product, ref.ID)
	if err != nil || !p.UpdatedAt.Equal(ref.UpdatedAt) {
		return nil
	}
	r := render(p)
	raw, err := encodeRendered(r)
	if err != nil {
		return err
	}
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		h, err := get[pageHead](tx, pageKey(ref.Product, ref.ID), "page")
		if err != nil || !h.UpdatedAt.Equal(ref.UpdatedAt) {
			return nil
		}
		return tx.Put(renderedKey(ref.Product, ref.ID), raw)
	})
}
