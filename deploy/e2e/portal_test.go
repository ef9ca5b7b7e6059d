package e2e

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"testing"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// portalTime is the portal's time format, YYYY-MM-DD HH:MM (UTC).
var portalTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$`)

// portalJourney: a product, tags, a category and a tutorial page; a partial
// PUT of the page over REST and another over gRPC; a restart keeps the page,
// hidden Markdown source included.
func portalJourney(t *testing.T) {
	s := newService(t, "portal")
	key := s.token // exactly the key: no scheme
	pt := portalv1.NewPortalServiceClient(s.conn)

	s.expectJSON(t, http.StatusUnauthorized, `{"errors":["Not authorised"]}`, "GET", "/portal-api/products", "Bearer "+key, "")

	r := s.expect(t, http.StatusCreated, "POST", "/portal-api/products", key,
		`{"Name":"orders-api","DisplayName":"Orders API","Description":"Order management","Path":"orders","Content":"<p>Orders</p>"}`)
	product := decode[map[string]any](t, r.body)
	productID := fmt.Sprint(product["ID"])
	if product["Name"] != "orders-api" || product["DisplayName"] != "Orders API" || productID == "0" {
		t.Fatalf("POST /portal-api/products: %s", r.body)
	}
	ids := map[string]string{} // tag or category name → ID
	for _, c := range []struct{ path, name string }{
		{"/portal-api/tags", "getting-started"}, {"/portal-api/tags", "orders"}, {"/portal-api/categories", "Tutorials"},
	} {
		r := s.expect(t, http.StatusCreated, "POST", c.path, key, `{"Name":"`+c.name+`"}`)
		v := decode[map[string]any](t, r.body)
		if v["Name"] != c.name || len(v) != 2 {
			t.Fatalf("POST %s: %s", c.path, r.body)
		}
		ids[c.name] = fmt.Sprint(v["ID"])
	}
	s.expect(t, http.StatusUnprocessableEntity, "POST", "/portal-api/tags", key, `{"Name":"orders"}`)

	docs := "/portal-api/products/" + productID + "/docs"
	r = s.expect(t, http.StatusCreated, "POST", docs, key, fmt.Sprintf(`{"Title":"Placing an order","Lede":"Your first order",
		"Content":"# Placing an order","MarkdownEnabled":true,"MarkdownContent":"# Placing an order\n\nPOST /orders",
		"PreviewContent":"Place one","Path":"placing-an-order","Status":"published",
		"Categories":[%q],"Tags":[%q,%q]}`, ids["Tutorials"], ids["getting-started"], ids["orders"]))
	page := decode[map[string]any](t, r.body)
	docID := fmt.Sprint(page["ID"])
	wantPage := func(what string, got map[string]any, title, lede string) {
		t.Helper()
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if fmt.Sprint(keys) != "[Categories Content CreatedAt ID Lede MarkdownEnabled Path Status Tags Title Type UpdatedAt]" {
			t.Errorf("%s: keys %v, want exactly the twelve of a page", what, keys)
		}
		for _, c := range []struct {
			field string
			want  any
		}{
			{"Title", title}, {"Lede", lede}, {"Content", "# Placing an order"}, {"MarkdownEnabled", true},
			{"Path", "placing-an-order"}, {"Status", "published"}, {"Type", "tutorial"},
			{"Categories", "[Tutorials]"}, {"Tags", "[getting-started orders]"},
		} {
			got := got[c.field]
			if _, isList := got.([]any); isList {
				got = fmt.Sprint(got)
			}
			if got != c.want {
				t.Errorf("%s: %s = %v, want %v", what, c.field, got, c.want)
			}
		}
		for _, f := range []string{"CreatedAt", "UpdatedAt"} {
			if v, _ := got[f].(string); !portalTime.MatchString(v) {
				t.Errorf("%s: %s = %v, want YYYY-MM-DD HH:MM", what, f, got[f])
			}
		}
	}
	wantPage("POST docs", page, "Placing an order", "Your first order")

	// PUT changes only the Title; the rest, tag and category names included, stays.
	doc := docs + "/" + docID
	r = s.expect(t, http.StatusOK, "PUT", doc, key, `{"Title":"Place your first order"}`)
	updated := decode[map[string]any](t, r.body)
	wantPage("PUT docs (Title only)", updated, "Place your first order", "Your first order")
	if updated["CreatedAt"] != page["CreatedAt"] || fmt.Sprint(updated["ID"]) != docID {
		t.Errorf("PUT changed CreatedAt or ID: %s, was %v", r.body, page)
	}
	got := decode[map[string]any](t, s.expect(t, http.StatusOK, "GET", doc, key, "").body)
	sameJSON(t, "GET after PUT", mustJSON(t, got), mustJSON(t, updated))

	// gRPC sees the same page, with the Markdown source REST does not show.
	g, err := pt.GetTutorialPage(authorized(t, key), &portalv1.GetTutorialPageRequest{ProductId: productID, DocId: docID})
	if err != nil {
		t.Fatalf("gRPC GetTutorialPage: %v", err)
	}
	if g.GetPage().GetTitle() != "Place your first order" || g.GetHidden().GetMarkdownContent() != "# Placing an order\n\nPOST /orders" ||
		g.GetHidden().GetPreviewContent() != "Place one" {
		t.Errorf("gRPC GetTutorialPage after PUT: %v", g)
	}
	// A partial update over gRPC: only the Lede.
	u, err := pt.UpdateTutorialPage(authorized(t, key), &portalv1.UpdateTutorialPageRequest{
		ProductId: productID, DocId: docID, Page: &portalv1.TutorialPageInput{Lede: proto.String("Orders in five minutes")},
	})
	if err != nil {
		t.Fatalf("gRPC UpdateTutorialPage: %v", err)
	}
	if p := u.GetPage(); p.GetTitle() != "Place your first order" || p.GetLede() != "Orders in five minutes" ||
		fmt.Sprint(p.GetTags()) != "[getting-started orders]" || u.GetHidden().GetMarkdownContent() != "# Placing an order\n\nPOST /orders" {
		t.Errorf("gRPC UpdateTutorialPage (Lede only): %v", u)
	}
	_, err = pt.UpdateTutorialPage(authorized(t, "Bearer "+key), &portalv1.UpdateTutorialPageRequest{
		ProductId: productID, DocId: docID, Page: &portalv1.TutorialPageInput{Title: proto.String("x")},
	})
	wantStatus(t, "gRPC UpdateTutorialPage with a Bearer key", err, codes.Unauthenticated, "Not authorised")

	// What a PUT refuses.
	s.expectJSON(t, http.StatusUnauthorized, `{"errors":["Not authorised"]}`, "PUT", doc, "Bearer "+key, `{"Title":"x"}`)
	s.expect(t, http.StatusBadRequest, "PUT", docs+"/abc", key, `{"Title":"x"}`)
	s.expect(t, http.StatusNotFound, "PUT", docs+"/9999", key, `{"Title":"x"}`)
	s.expect(t, http.StatusNotFound, "PUT", "/portal-api/products/9999/docs/"+docID, key, `{"Title":"x"}`)
	s.expect(t, http.StatusUnprocessableEntity, "PUT", doc, key, `{"Status":"archived"}`)
	s.expect(t, http.StatusUnprocessableEntity, "PUT", doc, key, `{"Tags":["9999"]}`)
	before := s.expect(t, http.StatusOK, "GET", doc, key, "").body
	wantPage("after refused PUTs", decode[map[string]any](t, before), "Place your first order", "Orders in five minutes")

	// A restart keeps the page, its hidden fields, the product and the tags.
	s.restart(t)
	pt = portalv1.NewPortalServiceClient(s.conn)
	s.expectJSON(t, http.StatusOK, string(before), "GET", doc, key, "")
	g, err = pt.GetTutorialPage(authorized(t, key), &portalv1.GetTutorialPageRequest{ProductId: productID, DocId: docID})
	if err != nil || g.GetHidden().GetMarkdownContent() != "# Placing an order\n\nPOST /orders" {
		t.Errorf("gRPC GetTutorialPage after restart: %v, %v", g, err)
	}
	s.expectJSON(t, http.StatusOK, `[{"ID":`+ids["getting-started"]+`,"Name":"getting-started"},{"ID":`+ids["orders"]+`,"Name":"orders"}]`,
		"GET", "/portal-api/tags", key, "")
	s.expect(t, http.StatusOK, "GET", "/portal-api/products/"+productID, key, "")
	s.stop(t)
}
