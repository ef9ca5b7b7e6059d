package app

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
)

// TestLabelGetAndRename: GET and PUT /portal-api/tags/{id} and
// /portal-api/categories/{id} (CONTRACT §3).
func TestLabelGetAndRename(t *testing.T) {
	p := newPortal(t)
	prod := p.product("labels")
	for _, kind := range []string{"tags", "categories"} {
		first, second := p.label(kind, "first"), p.label(kind, "second")
		field := map[string]string{"tags": "Tags", "categories": "Categories"}[kind]
		doc, _ := p.page(prod, fmt.Sprintf(`{"Title":"t","%s":[%q]}`, field, first))
		for _, c := range []struct {
			name, method, path, body string
			status                   int
			want                     string // the exact body, or the start of the one error message
		}{
			{"get", "GET", first, "", 200, `{"ID":` + first + `,"Name":"first"}`},
			{"rename", "PUT", first, `{"Name":"renamed"}`, 200, `{"ID":` + first + `,"Name":"renamed"}`},
			{"get renamed", "GET", first, "", 200, `{"ID":` + first + `,"Name":"renamed"}`},
			{"same name again", "PUT", first, `{"Name":"renamed","Other":1}`, 200, `{"ID":` + first + `,"Name":"renamed"}`},
			{"another's name", "PUT", first, `{"Name":"second"}`, 422, "Name: a "},
			{"blank", "PUT", first, `{"Name":"  "}`, 422, "Name must not be empty"},
			{"missing name", "PUT", first, `{}`, 422, "Name is required"},
			{"wrong type", "PUT", first, `{"Name":5}`, 422, "Name must be a string"},
			{"malformed", "PUT", first, `{"Name":`, 422, ""},
			{"too long", "PUT", first, `{"Name":"` + strings.Repeat("x", 256) + `"}`, 422, "Name must be at most 255 characters"},
			{"not a number", "GET", "x", "", 400, "Invalid "},
			{"zero", "PUT", "0", `{"Name":"z"}`, 400, "Invalid "},
			{"negative", "GET", "-1", "", 400, "Invalid "},
			{"missing", "GET", "99", "", 404, ""},
			{"rename missing", "PUT", "99", `{"Name":"z"}`, 404, ""},
			{"beyond uint32", "GET", "99999999999", "", 404, ""},
		} {
			r := p.do(c.method, "/portal-api/"+kind+"/"+c.path, c.body)
			what := kind + " " + c.name
			if c.status == 200 {
				if r.status != 200 || string(r.body) != c.want {
					t.Errorf("%s: %d %s, want 200 %s", what, r.status, r.body, c.want)
				}
				continue
			}
			msgs := p.errorsOf(r, c.status, what)
			if len(msgs) == 0 || !strings.HasPrefix(msgs[0], c.want) {
				t.Errorf("%s: %q, want a message starting %q", what, msgs, c.want)
			}
		}
		// pages show the new name; the other label is untouched
		page := checkPage(t, kind+" page", p.expect(p.do("GET", docPath(prod, doc), ""), 200, "get page"))
		if fmt.Sprint(page[field]) != "[renamed]" {
			t.Errorf("%s: page shows %v, want [renamed]", kind, page[field])
		}
		if r := p.do("GET", "/portal-api/"+kind+"/"+second, ""); string(r.body) != `{"ID":`+second+`,"Name":"second"}` {
			t.Errorf("%s: other label %s", kind, r.body)
		}
		// the old name is free again
		p.label(kind, "first")
	}
	// gRPC: the same operations and messages
	ctx := rpc()
	if got, err := p.client.GetTag(ctx, &portalv1.GetTagRequest{TagId: "1"}); err != nil || got.GetTag().GetName() != "renamed" {
		t.Fatalf("gRPC GetTag: %v %v", got, err)
	}
	if got, err := p.client.UpdateCategory(ctx, &portalv1.UpdateCategoryRequest{CategoryId: "1", Category: &portalv1.CategoryInput{Name: "by gRPC"}}); err != nil || got.GetCategory().GetName() != "by gRPC" {
		t.Fatalf("gRPC UpdateCategory: %v %v", got, err)
	}
	for _, c := range []struct {
		what string
		call func() error
		code codes.Code
		msg  string
	}{
		{"tag x", call(p.client.GetTag, &portalv1.GetTagRequest{TagId: "x"}), codes.InvalidArgument, "Invalid tag ID: it must be a positive integer"},
		{"category 99", call(p.client.GetCategory, &portalv1.GetCategoryRequest{CategoryId: "99"}), codes.NotFound, "Category not found"},
		{"tag taken", call(p.client.UpdateTag, &portalv1.UpdateTagRequest{TagId: "1", Tag: &portalv1.TagInput{Name: "second"}}), codes.AlreadyExists, `Name: a tag named "second" already exists`},
	} {
		if st := status.Convert(c.call()); st.Code() != c.code || st.Message() != c.msg {
			t.Errorf("gRPC %s: %v %q, want %v %q", c.what, st.Code(), st.Message(), c.code, c.msg)
		}
	}
}
