package app

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
)

// titles lists the titles of an array of pages.
func titles(t *testing.T, v any) []string {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("want an array of pages, got %v", v)
	}
	var out []string
	for _, p := range list {
		out = append(out, checkPage(t, "page", p)["Title"].(string))
	}
	return out
}

func TestReorderPages(t *testing.T) {
	p := newPortal(t)
	prod, other := p.product("order"), p.product("other")
	a, _ := p.page(prod, `{"Title":"A"}`)
	b, _ := p.page(prod, `{"Title":"B"}`)
	c, _ := p.page(prod, `{"Title":"C"}`)
	foreign, _ := p.page(other, `{"Title":"X"}`)
	reorder := "/portal-api/products/" + prod + "/docs/reorder"
	list := "/portal-api/products/" + prod + "/docs"

	got := titles(t, p.expect(p.do("POST", reorder, "["+c+","+a+","+b+"]"), 200, "reorder"))
	if want := []string{"C", "A", "B"}; !slices.Equal(got, want) {
		t.Errorf("reorder answered %v, want %v", got, want)
	}
	p.page(prod, `{"Title":"D"}`)
	if got, want := titles(t, p.expect(p.do("GET", list, ""), 200, "list")), []string{"C", "A", "B", "D"}; !slices.Equal(got, want) {
		t.Errorf("list after reorder and create: %v, want %v", got, want)
	}
	if got, want := titles(t, p.expect(p.do("GET", list+"?page=2&per_page=2", ""), 200, "list")), []string{"B", "D"}; !slices.Equal(got, want) {
		t.Errorf("second page of the list: %v, want %v", got, want)
	}

	refusals := []struct {
		name, body string
		status     int
		want       []string // a substring of each message, in order
	}{
		{"partial list", "[" + a + "]", 422, []string{"missing: "}},
		{"foreign page", "[" + foreign + "]", 422, []string{"tutorial page " + foreign + " is not a page of this product", "missing"}},
		{"unknown page", "[999999]", 422, []string{"not a page of this product", "missing"}},
		{"beyond the id range", "[99999999999]", 422, []string{"not a page of this product", "missing"}},
		{"twice", "[" + a + "," + a + "]", 422, []string{"listed twice", "missing"}},
		{"not an id", `[1.5, -1, 0]`, 422, []string{"Item 1 must be", "Item 2 must be", "Item 3 must be", "missing"}},
		{"wrong types", `[true, {}]`, 422, []string{"Item 1 must be", "Item 2 must be"}},
		{"object", `{"ids":[1]}`, 422, []string{"must be a JSON array"}},
		{"broken", `[1,`, 422, []string{"not valid JSON"}},
		{"empty", ``, 422, []string{"empty"}},
	}
	for _, tt := range refusals {
		msgs := p.errorsOf(p.do("POST", reorder, tt.body), tt.status, tt.name)
		if len(msgs) != len(tt.want) {
			t.Errorf("%s: messages %q, want %d", tt.name, msgs, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(msgs[i], w) {
				t.Errorf("%s: message %q lacks %q", tt.name, msgs[i], w)
			}
		}
	}
	if got, want := titles(t, p.expect(p.do("GET", list, ""), 200, "list")), []string{"C", "A", "B", "D"}; !slices.Equal(got, want) {
		t.Errorf("refusals changed the order: %v, want %v", got, want)
	}
	p.errorsOf(p.do("POST", "/portal-api/products/999999/docs/reorder", "[]"), 404, "missing product")
	p.errorsOf(p.do("POST", "/portal-api/products/x/docs/reorder", "[]"), 400, "bad product id")
	p.errorsOf(p.do("POST", reorder, "[]", withAuth{}), 401, "no key")
	// GET .../docs/reorder is a page read whose ID is not a number.
	p.errorsOf(p.do("GET", reorder, ""), 400, "GET reorder")

	// gRPC: IDs as decimal text, the same checks.
	resp, err := p.client.ReorderTutorialPages(rpc(), &portalv1.ReorderTutorialPagesRequest{ProductId: prod, Order: &portalv1.DocOrder{DocIds: []string{a, b, c, p.id(p.expect(p.do("GET", list+"?page=4&per_page=1", ""), 200, "d").([]any)[0])}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetPages()) != 4 || resp.GetPages()[0].GetTitle() != "A" || resp.GetPages()[3].GetTitle() != "D" {
		t.Errorf("gRPC reorder: %v", resp.GetPages())
	}
	_, err = p.client.ReorderTutorialPages(rpc(), &portalv1.ReorderTutorialPagesRequest{ProductId: prod, Order: &portalv1.DocOrder{DocIds: []string{a}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("gRPC partial reorder: %v, want InvalidArgument", err)
	}
}

func TestPathConflictsRefused(t *testing.T) {
	p := newPortal(t)
	prod, other := p.product("paths"), p.product("other")
	first, _ := p.page(prod, `{"Title":"A","Path":"guides/start"}`)
	p.page(other, `{"Title":"X","Path":"guides/start"}`) // another product: fine
	msgs := p.errorsOf(p.do("POST", "/portal-api/products/"+prod+"/docs", `{"Title":"B","Path":"/guides/start/"}`), 422, "create with a taken path")
	if len(msgs) != 1 || !strings.Contains(msgs[0], "tutorial page "+first) {
		t.Errorf("create: %q", msgs)
	}
	second, _ := p.page(prod, `{"Title":"B","Path":"other"}`)
	p.errorsOf(p.do("PUT", docPath(prod, second), `{"Path":"guides/start"}`), 422, "update to a taken path")
	p.expect(p.do("PUT", docPath(prod, first), `{"Path":"guides/start","Title":"A2"}`), 200, "a page keeps its own path")
	p.expect(p.do("PUT", docPath(prod, first), `{"Path":""}`), 200, "clear the path")
	p.expect(p.do("PUT", docPath(prod, second), `{"Path":"guides/start"}`), 200, "take the freed path")
	_, err := p.client.CreateTutorialPage(rpc(), &portalv1.CreateTutorialPageRequest{ProductId: prod, Page: &portalv1.TutorialPageInput{Title: proto.String("C"), Path: proto.String("guides/start")}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("gRPC create with a taken path: %v", err)
	}
}
