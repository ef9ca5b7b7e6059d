package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

var pageKeys = []string{"ID", "Content", "MarkdownEnabled", "Status", "Title", "Lede", "Type", "Path", "Categories", "Tags", "CreatedAt", "UpdatedAt"}

var portalTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$`)

// checkPage checks the twelve keys of a page, their JSON types and formats.
func checkPage(t *testing.T, what string, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok || len(m) != len(pageKeys) {
		t.Fatalf("%s: want exactly the keys %v, got %v", what, pageKeys, v)
	}
	for _, k := range pageKeys {
		if _, ok := m[k]; !ok {
			t.Fatalf("%s: key %s missing", what, k)
		}
	}
	if m["Type"] != "tutorial" {
		t.Errorf("%s: Type %v, want tutorial", what, m["Type"])
	}
	for _, k := range []string{"CreatedAt", "UpdatedAt"} {
		if s, _ := m[k].(string); !portalTime.MatchString(s) {
			t.Errorf("%s: %s %q is not YYYY-MM-DD HH:MM", what, k, m[k])
		}
	}
	for _, k := range []string{"Categories", "Tags"} {
		if _, ok := m[k].([]any); !ok {
			t.Errorf("%s: %s is %v, want an array", what, k, m[k])
		}
	}
	return m
}

func TestAuthRefusals(t *testing.T) {
	p := newPortal(t)
	prod := p.product("auth")
	doc, _ := p.page(prod, `{"Title":"t"}`)
	for _, auth := range []withAuth{
		{},                  // no header
		{"unknown-key"},     // not a key
		{"Bearer " + token}, // a scheme is not part of the key
		{"bearer " + token}, // in any case
		{token, token},      // one value only
		{""},                // empty
	} {
		for _, req := range []struct{ method, path, body string }{
			{"GET", "/portal-api/products", ""},
			{"POST", "/portal-api/products", `{"Name":5`}, // refused before the body is read
			{"GET", "/portal-api/products/abc", ""},       // refused before the path is read
			{"PUT", docPath(prod, doc), `{"Title":"x"}`},
			{"GET", "/portal-api/tags", ""},
			{"DELETE", "/portal-api/categories/1", ""},
		} {
			r := p.do(req.method, req.path, req.body, auth)
			if r.status != 401 || string(r.body) != `{"errors":["Not authorised"]}` {
				t.Errorf("%s %s with Authorization %q: %d %s, want 401 {\"errors\":[\"Not authorised\"]}", req.method, req.path, auth, r.status, r.body)
			}
		}
		ctx := metadata.NewOutgoingContext(context.Background(), metadata.MD{"authorization": auth})
		_, err := p.client.ListProducts(ctx, &portalv1.ListProductsRequest{})
		if st := status.Convert(err); st.Code() != codes.Unauthenticated || st.Message() != "Not authorised" {
			t.Errorf("gRPC with authorization %q: %v, want Unauthenticated \"Not authorised\"", auth, err)
		}
	}
	if r := p.do("GET", "/healthz", "", withAuth{}); r.status != 200 {
		t.Errorf("/healthz without a key: %d", r.status)
	}
}

func TestProducts(t *testing.T) {
	p := newPortal(t)
	body := `{"Name":"payments","DisplayName":"Payments API","Description":"Pay","Path":"payments","Content":"<p>Pay</p>"}`
	r := p.do("POST", "/portal-api/products", body)
	created := p.expect(r, 201, "create").(map[string]any)
	id := p.id(created)
	if loc := r.header.Get("Location"); loc != "/portal-api/products/"+id {
		t.Errorf("Location %q", loc)
	}
	for k, want := range map[string]string{"Name": "payments", "DisplayName": "Payments API", "Description": "Pay", "Path": "payments", "Content": "<p>Pay</p>"} {
		if created[k] != want {
			t.Errorf("create: %s = %v, want %q", k, created[k], want)
		}
	}
	if len(created) != 10 || !portalTime.MatchString(created["CreatedAt"].(string)) || !portalTime.MatchString(created["UpdatedAt"].(string)) {
		t.Errorf("create: want ID, the five fields, CreatedAt, UpdatedAt, PolicyIDs and PlanIDs, got %s", r.body)
	}
	if got := p.expect(p.do("GET", "/portal-api/products/"+id, ""), 200, "get"); fmt.Sprint(got) != fmt.Sprint(created) {
		t.Errorf("get: %v, want %v", got, created)
	}

	// PUT changes what it names and keeps the rest.
	upd := p.expect(p.do("PUT", "/portal-api/products/"+id, `{"DisplayName":"Renamed","Content":null}`), 200, "put").(map[string]any)
	if upd["DisplayName"] != "Renamed" || upd["Name"] != "payments" || upd["Content"] != "<p>Pay</p>" || upd["CreatedAt"] != created["CreatedAt"] {
		t.Errorf("put: %v", upd)
	}
	if msgs := p.errorsOf(p.do("PUT", "/portal-api/products/"+id, `{"Name":""}`), 422, "put empty name"); !slices.Equal(msgs, []string{"Name must not be empty"}) {
		t.Errorf("put empty name: %q", msgs)
	}

	// Paging: page and per_page, ascending IDs.
	for i := range 4 {
		p.product(fmt.Sprintf("more-%d", i))
	}
	ids := func(query string) []string {
		list, _ := p.expect(p.do("GET", "/portal-api/products"+query, ""), 200, "list "+query).([]any)
		var out []string
		for _, x := range list {
			out = append(out, p.id(x))
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"1", "2", "3", "4", "5"}},
		{"?page=1&per_page=2", []string{"1", "2"}},
		{"?page=3&per_page=2", []string{"5"}},
		{"?page=4&per_page=2", nil},
		{"?per_page=100000", []string{"1", "2", "3", "4", "5"}},
		{"?page=99999999999999999999999", nil},
	} {
		if got := ids(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("list %s: got %v, want %v", tc.query, got, tc.want)
		}
	}
	if r := p.do("GET", "/portal-api/products?page=1&per_page=1", ""); string(r.body) == "[]" || r.body[0] != '[' {
		t.Errorf("list answers a JSON array: %s", r.body)
	}
	for _, q := range []string{"?page=0", "?page=-1", "?page=x", "?per_page=0", "?per_page=1.5"} {
		p.errorsOf(p.do("GET", "/portal-api/products"+q, ""), 400, "list "+q)
	}

	for _, req := range []string{"name missing", `{"Name":`, `{"Name":5}`, `[]`, `{"Name":""}`, `{"Name":null}`} {
		body := req
		if req == "name missing" {
			body = `{"DisplayName":"x"}`
		}
		if msgs := p.errorsOf(p.do("POST", "/portal-api/products", body), 422, "create "+body); len(msgs) != 1 {
			t.Errorf("create %s: want one message, got %q", body, msgs)
		}
	}

	if r := p.do("DELETE", "/portal-api/products/"+id, ""); r.status != 200 || string(r.body) != `{"status":"ok"}` {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	p.errorsOf(p.do("GET", "/portal-api/products/"+id, ""), 404, "get deleted")
}

func TestPathIDs(t *testing.T) {
	p := newPortal(t)
	prod := p.product("ids")
	doc, _ := p.page(prod, `{"Title":"t"}`)
	other := p.product("other")
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/portal-api/products/abc", 400},
		{"GET", "/portal-api/products/0", 400},
		{"GET", "/portal-api/products/-1", 400},
		{"GET", "/portal-api/products/1.5", 400},
		{"GET", "/portal-api/products/+1", 400},
		{"GET", "/portal-api/products/99999999999", 404},
		{"GET", "/portal-api/products/999", 404},
		{"PUT", "/portal-api/products/abc", 400},
		{"DELETE", "/portal-api/products/0", 400},
		{"GET", docPath(prod, "abc"), 400},
		{"GET", docPath("abc", doc), 400},
		{"PUT", docPath(prod, "0"), 400},
		{"DELETE", docPath(prod, "1e3"), 400},
		{"GET", docPath(prod, "999"), 404},
		{"GET", docPath("999", doc), 404},
		{"GET", docPath(other, doc), 404},
		{"PUT", docPath(other, doc), 404},
		{"DELETE", docPath(other, doc), 404},
		{"GET", "/portal-api/products/999/docs", 404},
		{"POST", "/portal-api/products/999/docs", 404},
		{"DELETE", "/portal-api/tags/x", 400},
		{"DELETE", "/portal-api/tags/5", 404},
		{"DELETE", "/portal-api/categories/-2", 400},
		{"DELETE", "/portal-api/categories/5", 404},
	} {
		body := ""
		if tc.method == "PUT" || tc.method == "POST" {
			body = `{"Title":"x","Name":"x"}`
		}
		p.errorsOf(p.do(tc.method, tc.path, body), tc.status, tc.method+" "+tc.path)
	}
	// gRPC gives the same answers with the same messages.
	for _, tc := range []struct {
		what string
		call func() error
		code codes.Code
		msg  string
	}{
		{"product abc", call(p.client.GetProduct, &portalv1.GetProductRequest{ProductId: "abc"}), codes.InvalidArgument, "Invalid product ID: it must be a positive integer"},
		{"product 999", call(p.client.GetProduct, &portalv1.GetProductRequest{ProductId: "999"}), codes.NotFound, "Product not found"},
		{"doc 0", call(p.client.GetTutorialPage, &portalv1.GetTutorialPageRequest{ProductId: prod, DocId: "0"}), codes.InvalidArgument, "Invalid tutorial page ID: it must be a positive integer"},
		{"doc of other", call(p.client.GetTutorialPage, &portalv1.GetTutorialPageRequest{ProductId: other, DocId: doc}), codes.NotFound, "Tutorial page not found"},
		{"tag x", call(p.client.DeleteTag, &portalv1.DeleteTagRequest{TagId: "x"}), codes.InvalidArgument, "Invalid tag ID: it must be a positive integer"},
		{"category 7", call(p.client.DeleteCategory, &portalv1.DeleteCategoryRequest{CategoryId: "7"}), codes.NotFound, "Category not found"},
	} {
		if st := status.Convert(tc.call()); st.Code() != tc.code || st.Message() != tc.msg {
			t.Errorf("gRPC %s: %v %q, want %v %q", tc.what, st.Code(), st.Message(), tc.code, tc.msg)
		}
	}
}

func TestLabels(t *testing.T) {
	p := newPortal(t)
	for _, kind := range []string{"tags", "categories"} {
		r := p.do("POST", "/portal-api/"+kind, `{"Name":"payments"}`)
		if r.status != 201 || string(r.body) != `{"ID":1,"Name":"payments"}` {
			t.Errorf("create %s: %d %s", kind, r.status, r.body)
		}
		for body, want := range map[string]string{
			`{"Name":"payments"}`: `Name: a `,
			`{}`:                  "Name is required",
			`{"Name":"   "}`:      "Name must not be empty",
			`{"Name":"` + strings.Repeat("é", 256) + `"}`: "Name must be at most 255 characters",
			`{"Name":true}`: "Name must be a string",
			`{"name":"x"}`:  `Unknown field "name"`,
		} {
			msgs := p.errorsOf(p.do("POST", "/portal-api/"+kind, body), 422, kind+" "+body)
			if len(msgs) != 1 || !strings.HasPrefix(msgs[0], want) {
				t.Errorf("create %s %.40s: %q, want one message starting %q", kind, body, msgs, want)
			}
		}
		p.label(kind, "Payments") // names are case-sensitive
		if r := p.do("GET", "/portal-api/"+kind, ""); string(r.body) != `[{"ID":1,"Name":"payments"},{"ID":2,"Name":"Payments"}]` {
			t.Errorf("list %s: %s", kind, r.body)
		}
		if r := p.do("DELETE", "/portal-api/"+kind+"/1", ""); r.status != 200 || string(r.body) != `{"status":"ok"}` {
			t.Errorf("delete %s: %d %s", kind, r.status, r.body)
		}
		if r := p.do("GET", "/portal-api/"+kind, ""); string(r.body) != `[{"ID":2,"Name":"Payments"}]` {
			t.Errorf("list %s after delete: %s", kind, r.body)
		}
	}
}

func TestTutorialPages(t *testing.T) {
	p := newPortal(t)
	prod := p.product("docs")
	cat, tag := p.label("categories", "Guides"), p.label("tags", "beginner")

	r := p.do("POST", "/portal-api/products/"+prod+"/docs", `{"Title":"Only a title","NotAField":1}`)
	first := checkPage(t, "create defaults", p.expect(r, 201, "create"))
	for k, want := range map[string]any{"Status": "draft", "Content": "", "Lede": "", "Path": "", "MarkdownEnabled": false} {
		if first[k] != want {
			t.Errorf("create defaults: %s = %v, want %v", k, first[k], want)
		}
	}
	if !strings.HasSuffix(r.header.Get("Location"), "/docs/"+p.id(first)) {
		t.Errorf("Location %q", r.header.Get("Location"))
	}

	full := fmt.Sprintf(`{"Title":"Getting started","Content":"# Hi","MarkdownEnabled":true,"Status":"review","Lede":"Short",`+
		`"Path":"start","Categories":[%q],"Tags":[%q,%q],"MarkdownContent":"# Hi (md)","PreviewContent":"Hi"}`, cat, tag, tag)
	id, page := p.page(prod, full)
	checkPage(t, "create full", page)
	if fmt.Sprint(page["Categories"]) != "[Guides]" || fmt.Sprint(page["Tags"]) != "[beginner]" {
		t.Errorf("labels answered as names, duplicates once: %v %v", page["Categories"], page["Tags"])
	}
	if got := p.expect(p.do("GET", docPath(prod, id), ""), 200, "get"); fmt.Sprint(got) != fmt.Sprint(page) {
		t.Errorf("get: %v, want %v", got, page)
	}
	list, _ := p.expect(p.do("GET", "/portal-api/products/"+prod+"/docs", ""), 200, "list").([]any)
	if len(list) != 2 || p.id(list[0]) != p.id(first) || p.id(list[1]) != id {
		t.Errorf("list: want both pages in ID order, got %v", list)
	}
	if list, _ := p.expect(p.do("GET", "/portal-api/products/"+prod+"/docs?page=2&per_page=1", ""), 200, "list").([]any); len(list) != 1 || p.id(list[0]) != id {
		t.Errorf("list page 2: %v", list)
	}

	// Deleting a label takes it off the page.
	p.expect(p.do("DELETE", "/portal-api/tags/"+tag, ""), 200, "delete tag")
	if got := checkPage(t, "after tag delete", p.expect(p.do("GET", docPath(prod, id), ""), 200, "get")); fmt.Sprint(got["Tags"]) != "[]" {
		t.Errorf("a deleted tag is still shown: %v", got["Tags"])
	}
	p.expect(p.do("DELETE", "/portal-api/categories/"+cat, ""), 200, "delete category")
	if got := checkPage(t, "after category delete", p.expect(p.do("GET", docPath(prod, id), ""), 200, "get")); fmt.Sprint(got["Categories"]) != "[]" {
		t.Errorf("a deleted category is still shown: %v", got["Categories"])
	}

	if r := p.do("DELETE", docPath(prod, id), ""); r.status != 200 || string(r.body) != `{"status":"ok"}` {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	p.errorsOf(p.do("GET", docPath(prod, id), ""), 404, "get deleted")
	p.errorsOf(p.do("DELETE", docPath(prod, id), ""), 404, "delete again")

	// Deleting the product deletes its pages.
	p.expect(p.do("DELETE", "/portal-api/products/"+prod, ""), 200, "delete product")
	p.errorsOf(p.do("GET", docPath(prod, p.id(first)), ""), 404, "page of a deleted product")
	if _, err := p.client.GetTutorialPage(rpc(), &portalv1.GetTutorialPageRequest{ProductId: prod, DocId: p.id(first)}); status.Code(err) != codes.NotFound {
		t.Errorf("gRPC page of a deleted product: %v", err)
	}
}

// TestPutTitleOnlyKeepsEverythingElse is the partial update of 4.3a, seen
// through gRPC, which also shows MarkdownContent and PreviewContent.
func TestPutTitleOnlyKeepsEverythingElse(t *testing.T) {
	p := newPortal(t)
	prod := p.product("partial")
	cat, tag := p.label("categories", "c"), p.label("tags", "t")
	id, _ := p.page(prod, fmt.Sprintf(`{"Title":"Before","Content":"<p>c</p>","MarkdownEnabled":true,"Status":"published","Lede":"l",`+
		`"Path":"p","Categories":[%q],"Tags":[%q],"MarkdownContent":"md","PreviewContent":"pre"}`, cat, tag))
	req := &portalv1.GetTutorialPageRequest{ProductId: prod, DocId: id}
	before, err := p.client.GetTutorialPage(rpc(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, "put", p.expect(p.do("PUT", docPath(prod, id), `{"Title":"After"}`), 200, "put"))
	after, err := p.client.GetTutorialPage(rpc(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := proto.Clone(before).(*portalv1.GetTutorialPageResponse)
	want.Page.Title, want.Page.UpdatedAt = "After", after.Page.UpdatedAt
	if !proto.Equal(after, want) {
		t.Errorf("PUT {\"Title\":\"After\"} changed more than the title:\n got %v\nwant %v", after, want)
	}
	if after.Hidden.GetMarkdownContent() != "md" || after.Hidden.GetPreviewContent() != "pre" {
		t.Errorf("hidden fields: %v", after.Hidden)
	}
	// Null keeps a value too; the hidden fields change when sent.
	checkPage(t, "put", p.expect(p.do("PUT", docPath(prod, id), `{"Title":null,"Categories":null,"MarkdownContent":"md2"}`), 200, "put nulls"))
	again, _ := p.client.GetTutorialPage(rpc(), req)
	if again.Page.Title != "After" || len(again.Page.Categories) != 1 || again.Hidden.MarkdownContent != "md2" || again.Hidden.PreviewContent != "pre" {
		t.Errorf("after a PUT with nulls: %v", again)
	}
}

func TestPutValidation(t *testing.T) {
	p := newPortal(t)
	prod := p.product("validation")
	cat := p.label("categories", "c")
	id, _ := p.page(prod, fmt.Sprintf(`{"Title":"T","Categories":[%q],"MarkdownContent":"md"}`, cat))
	req := &portalv1.GetTutorialPageRequest{ProductId: prod, DocId: id}
	before, err := p.client.GetTutorialPage(rpc(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body string
		want []string
	}{
		{`{"Title":5}`, []string{"Title must be a string"}},
		{`{"MarkdownEnabled":"yes"}`, []string{"MarkdownEnabled must be true or false"}},
		{`{"Categories":[1]}`, []string{`Categories must be an array of IDs written as strings, such as ["1", "2"]`}},
		{`{"Tags":"1"}`, []string{`Tags must be an array of IDs written as strings, such as ["1", "2"]`}},
		{`{"Title":`, []string{"Request body is not valid JSON (error at byte 9)"}},
		{`{"Title":"a"}{}`, []string{"Request body is not valid JSON (error at byte 14)"}},
		{`[]`, []string{"Request body must be a JSON object"}},
		{`null`, []string{"Request body must be a JSON object"}},
		{"\xff", []string{"Request body is not valid UTF-8"}},
		{`{"Status":"archived"}`, []string{`Status must be one of published, draft, review; got "archived"`}},
		{`{"Status":"Published"}`, []string{`Status must be one of published, draft, review; got "Published"`}},
		{`{"Status":"bogus","Categories":["999999999"],"Tags":["999999998"]}`, []string{
			`Status must be one of published, draft, review; got "bogus"`,
			`Categories: there is no category with ID "999999999"`,
			`Tags: there is no tag with ID "999999998"`}},
		{`{"Categories":["abc","0","99999999999"]}`, []string{
			`Categories: "abc" is not a category ID (a positive integer written as a string)`,
			`Categories: "0" is not a category ID (a positive integer written as a string)`,
			`Categories: there is no category with ID "99999999999"`}},
		{`{"Categories":["99999999999"]}`, []string{`Categories: there is no category with ID "99999999999"`}},
		{`{"Title":""}`, []string{"Title must not be empty"}},
		{`{"Title":"` + strings.Repeat("x", 256) + `"}`, []string{"Title must be at most 255 characters"}},
		{`{"Lede":"` + strings.Repeat("x", 4097) + `"}`, []string{"Lede must be at most 4096 characters"}},
		{`{"Title":5,"Status":"bogus","Lede":[]}`, []string{"Title must be a string", "Lede must be a string", `Status must be one of published, draft, review; got "bogus"`}},
		{`{"title":"x"}`, []string{`Unknown field "title": field names are case-sensitive; did you mean "Title"?`}},
		{`{"markdownEnabled":true,"markdown_content":"x"}`, []string{
			`Unknown field "markdownEnabled": field names are case-sensitive; did you mean "MarkdownEnabled"?`,
			`Unknown field "markdown_content": field names are case-sensitive; did you mean "MarkdownContent"?`}},
	} {
		msgs := p.errorsOf(p.do("PUT", docPath(prod, id), tc.body), 422, fmt.Sprintf("PUT %.40s", tc.body))
		if !slices.Equal(msgs, tc.want) {
			t.Errorf("PUT %.60s:\n got %q\nwant %q", tc.body, msgs, tc.want)
		}
	}
	after, _ := p.client.GetTutorialPage(rpc(), req)
	if !proto.Equal(before, after) {
		t.Errorf("refused updates changed the page:\n got %v\nwant %v", after, before)
	}
	// POST validation: the required title and everything else at once.
	msgs := p.errorsOf(p.do("POST", "/portal-api/products/"+prod+"/docs", `{"Content":"x","Status":"archived","Tags":["77"]}`), 422, "create")
	if want := []string{"Title is required", `Status must be one of published, draft, review; got "archived"`, `Tags: there is no tag with ID "77"`}; !slices.Equal(msgs, want) {
		t.Errorf("create: got %q, want %q", msgs, want)
	}
	// The same checks on gRPC, with the same sentences.
	bad := "bogus"
	_, err = p.client.UpdateTutorialPage(rpc(), &portalv1.UpdateTutorialPageRequest{ProductId: prod, DocId: id,
		Page: &portalv1.TutorialPageInput{Status: &bad, Tags: &portalv1.IdList{Ids: []string{"12"}}}})
	if st := status.Convert(err); st.Code() != codes.InvalidArgument ||
		st.Message() != `Status must be one of published, draft, review; got "bogus"; Tags: there is no tag with ID "12"` {
		t.Errorf("gRPC update: %v", err)
	}
}

func TestContentStoredAsGiven(t *testing.T) {
	p := newPortal(t)
	prod := p.product("unicode")
	content := `<script>alert(\"x\")</script> & <b>ü</b> 😀 \u0000 line\nbreak \u2028 'quotes' \\ </p>`
	id, page := p.page(prod, `{"Title":"Ünïcödé 日本語 <i>","Content":"`+content+`","PreviewContent":"`+content+`"}`)
	got, err := p.client.GetTutorialPage(rpc(), &portalv1.GetTutorialPageRequest{ProductId: prod, DocId: id})
	if err != nil {
		t.Fatal(err)
	}
	want := "<script>alert(\"x\")</script> & <b>ü</b> 😀 \x00 line\nbreak \u2028 'quotes' \\ </p>"
	if got.Page.Content != want || got.Hidden.PreviewContent != want || got.Page.Title != "Ünïcödé 日本語 <i>" {
		t.Errorf("stored: %q / %q / %q", got.Page.Content, got.Hidden.PreviewContent, got.Page.Title)
	}
	if page["Content"] != want {
		t.Errorf("answered: %q", page["Content"])
	}
}

func TestIntegersAreNumbers(t *testing.T) {
	p := newPortal(t)
	prod := p.product("numbers")
	p.page(prod, `{"Title":"t"}`)
	for _, path := range []string{"/portal-api/products/" + prod, "/portal-api/products/" + prod + "/docs/1"} {
		r := p.do("GET", path, "")
		if !bytes.HasPrefix(r.body, []byte(`{"ID":1,`)) {
			t.Errorf("GET %s: want {\"ID\":1,... first, got %s", path, r.body)
		}
	}
}

func TestFacadeErrors(t *testing.T) {
	p := newPortal(t)
	if msgs := p.errorsOf(p.do("GET", "/portal-api/nothing", ""), 404, "unknown path"); len(msgs) != 1 {
		t.Errorf("unknown path: %q", msgs)
	}
	r := p.do("PATCH", "/portal-api/products", "{}")
	p.errorsOf(r, 405, "wrong method")
	if allow := r.header.Get("Allow"); allow != "GET, HEAD, POST" {
		t.Errorf("Allow %q", allow)
	}
	big := `{"Name":"` + strings.Repeat("a", 1<<20) + `"}`
	p.errorsOf(p.do("POST", "/portal-api/products", big), http.StatusRequestEntityTooLarge, "1 MiB body")
	// Just under the limit (1 MiB for a product) is read, and refused for its length only.
	fits := `{"Name":"` + strings.Repeat("a", 1<<20-20) + `"}`
	if msgs := p.errorsOf(p.do("POST", "/portal-api/products", fits), 422, "big body"); !slices.Equal(msgs, []string{"Name must be at most 255 characters"}) {
		t.Errorf("big body: %q", msgs)
	}
	if list := p.expect(p.do("GET", "/portal-api/products", ""), 200, "list").([]any); len(list) != 0 {
		t.Errorf("refused creates stored something: %v", list)
	}
}

func TestGRPCPartialUpdate(t *testing.T) {
	p := newPortal(t)
	ctx := rpc()
	prod, err := p.client.CreateProduct(ctx, &portalv1.CreateProductRequest{Product: &portalv1.ProductInput{Name: proto.String("grpc")}})
	if err != nil {
		t.Fatal(err)
	}
	pid := fmt.Sprint(prod.Product.Id)
	tag, err := p.client.CreateTag(ctx, &portalv1.CreateTagRequest{Tag: &portalv1.TagInput{Name: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	created, err := p.client.CreateTutorialPage(ctx, &portalv1.CreateTutorialPageRequest{ProductId: pid, Page: &portalv1.TutorialPageInput{
		Title: proto.String("g"), MarkdownEnabled: proto.Bool(true), Tags: &portalv1.IdList{Ids: []string{fmt.Sprint(tag.Tag.Id)}},
		PreviewContent: proto.String("pre"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if created.Page.Status != "draft" || !slices.Equal(created.Page.Tags, []string{"t"}) || created.Hidden.PreviewContent != "pre" {
		t.Errorf("created: %v", created)
	}
	did := fmt.Sprint(created.Page.Id)
	// Absent fields keep their values; false and an empty list are values.
	upd, err := p.client.UpdateTutorialPage(ctx, &portalv1.UpdateTutorialPageRequest{ProductId: pid, DocId: did,
		Page: &portalv1.TutorialPageInput{MarkdownEnabled: proto.Bool(false), Tags: &portalv1.IdList{}}})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Page.MarkdownEnabled || len(upd.Page.Tags) != 0 || upd.Page.Title != "g" || upd.Hidden.PreviewContent != "pre" {
		t.Errorf("updated: %v", upd)
	}
	// No input at all changes nothing but UpdatedAt.
	same, err := p.client.UpdateTutorialPage(ctx, &portalv1.UpdateTutorialPageRequest{ProductId: pid, DocId: did})
	if err != nil || !proto.Equal(same.Page, upd.Page) {
		t.Errorf("empty update: %v, %v", same, err)
	}
	if _, err := p.client.CreateTutorialPage(ctx, &portalv1.CreateTutorialPageRequest{ProductId: pid}); status.Convert(err).Message() != "Title is required" {
		t.Errorf("create without title: %v", err)
	}
	if _, err := p.client.CreateTag(ctx, &portalv1.CreateTagRequest{Tag: &portalv1.TagInput{Name: "t"}}); status.Code(err) != codes.AlreadyExists {
		t.Errorf("duplicate tag: %v", err)
	}
	list, err := p.client.ListTutorialPages(ctx, &portalv1.ListTutorialPagesRequest{ProductId: pid})
	if err != nil || len(list.Pages) != 1 {
		t.Errorf("list: %v, %v", list, err)
	}
	if del, err := p.client.DeleteProduct(ctx, &portalv1.DeleteProductRequest{ProductId: pid}); err != nil || del.Status != "ok" {
		t.Errorf("delete: %v, %v", del, err)
	}
}

func TestRestartKeepsData(t *testing.T) {
	db := filepath.Join(t.TempDir(), "nested", "portal.db")
	p := start(t, db)
	prod := p.product("durable")
	id, page := p.page(prod, `{"Title":"kept","MarkdownContent":"md"}`)
	p.stop()

	q := start(t, db)
	got := q.expect(q.do("GET", docPath(prod, id), ""), 200, "get after restart")
	if fmt.Sprint(got) != fmt.Sprint(page) {
		t.Errorf("after restart: %v, want %v", got, page)
	}
	hidden, err := q.client.GetTutorialPage(rpc(), &portalv1.GetTutorialPageRequest{ProductId: prod, DocId: id})
	if err != nil || hidden.Hidden.MarkdownContent != "md" {
		t.Errorf("hidden after restart: %v, %v", hidden, err)
	}
	// IDs continue after the restart.
	if next := q.product("next"); next != "2" {
		t.Errorf("next product ID %s, want 2", next)
	}
}

func TestOpenAPIDescribesIDListsAsArrays(t *testing.T) {
	p := newPortal(t)
	doc := p.expect(p.do("GET", "/openapi.json", "", withAuth{}), 200, "openapi").(map[string]any)
	def := servertest.OpenAPI(t, p.base).Schema("#/definitions/v1IdList")
	if items, _ := def["items"].(map[string]any); def["type"] != "array" || items["type"] != "string" {
		t.Errorf("v1IdList: %v", def)
	}
	if _, ok := doc["paths"].(map[string]any)["/portal-api/products/{product_id}/docs/{doc_id}"]; !ok {
		t.Error("the page path is not described")
	}
}
