package store

import (
	"reflect"

	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// TestRendered: a write's Rendered is kept beside its page and read by
// ShownPage without the page's source texts; a write without one keeps the
// old; Unrendered lists pages without a current one; SetRendered keeps one
// unless the page was written since; deleting the page or its product
// removes it.
func TestRendered(t *testing.T) {
	s, _ := open(t)
	prod := mustProduct(t, s, "p")
	legacy := mustPage(t, s, prod.ID, "legacy", nil, nil) // no rendering
	r := &Rendered{Version: 3, HTML: `<h2 id="a">A "q" <b>&amp;</b></h2>`, Headings: []RenderedHeading{{Level: 2, ID: "a", Text: "A"}}}
	page, err := s.CreatePage(ctx, prod.ID, func(p *Page, _ LabelLookup) error {
		p.Title, p.Content, p.Rendered = "new", "source", r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	shown, err := s.ShownPage(ctx, prod.ID, page.ID, true)
	if err != nil || !reflect.DeepEqual(shown.Rendered, r) || shown.Content != "" || shown.Title != "new" {
		t.Fatalf("ShownPage: %+v %v, want the rendering without the source", shown, err)
	}
	if head, _ := s.ShownPage(ctx, prod.ID, page.ID, false); head.Rendered == nil || head.Rendered.HTML != "" || head.Rendered.Version != 3 || len(head.Rendered.Headings) != 1 {
		t.Fatalf("ShownPage without the HTML: %+v", head.Rendered)
	}
	if _, err := s.UpdatePage(ctx, prod.ID, page.ID, func(p *Page, _ LabelLookup) error { p.Title = "renamed"; return nil }); err != nil {
		t.Fatal(err)
	}
	if shown, _ = s.ShownPage(ctx, prod.ID, page.ID, true); !reflect.DeepEqual(shown.Rendered, r) {
		t.Fatalf("after a write without a rendering: %+v, want the old one kept", shown.Rendered)
	}
	refs, err := s.Unrendered(ctx, 3, 100)
	if err != nil || len(refs) != 1 || refs[0].ID != legacy.ID {
		t.Fatalf("Unrendered(3): %+v %v, want the legacy page", refs, err)
	}
	if refs, _ := s.Unrendered(ctx, 4, 100); len(refs) != 2 {
		t.Fatalf("Unrendered(4): %+v, want both pages", refs)
	}
	stale := refs[0]
	stale.UpdatedAt = stale.UpdatedAt.Add(-time.Second)
	if err := s.SetRendered(ctx, stale, func(Page) *Rendered { return &Rendered{Version: 3, HTML: "old"} }); err != nil {
		t.Fatal(err)
	}
	if shown, _ = s.ShownPage(ctx, prod.ID, legacy.ID, true); shown.Rendered != nil {
		t.Fatal("SetRendered kept a rendering of a page written since")
	}
	if err := s.SetRendered(ctx, refs[0], func(p Page) *Rendered { return &Rendered{Version: 3, HTML: p.MarkdownContent} }); err != nil {
		t.Fatal(err)
	}
	if shown, _ = s.ShownPage(ctx, prod.ID, legacy.ID, true); shown.Rendered == nil || shown.Rendered.HTML != "md legacy" {
		t.Fatalf("after SetRendered: %+v", shown.Rendered)
	}
	if err := s.DeletePage(ctx, prod.ID, legacy.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteProduct(ctx, prod.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		n, err := tx.Count(renderedPrefix)
		if err == nil && n != 0 {
			t.Errorf("%d renderings left after their pages and product were deleted", n)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
