package check

import (
	"strconv"
	"testing"

	pclient "github.com/gatehouse/gatehouse/tools/openapi/client/portal/client"
	ps "github.com/gatehouse/gatehouse/tools/openapi/client/portal/client/portal_service"
	pm "github.com/gatehouse/gatehouse/tools/openapi/client/portal/models"
)

// TestPortalClient makes every documented portal call once.
func TestPortalClient(t *testing.T) {
	c := pclient.New(transport(start(t, "portal"), "/"), formats).PortalService
	a := auth("")
	id := func(n int64) string { return strconv.FormatInt(n, 10) }

	prod, err := c.PortalServiceCreateProduct(ps.NewPortalServiceCreateProductParams().WithProduct(&pm.V1ProductInput{Name: "payments"}), a)
	ok(t, "CreateProduct", err)
	pid := id(prod.Payload.ID)
	_, err = c.PortalServiceListProducts(ps.NewPortalServiceListProductsParams().WithPage(str("1")).WithPerPage(str("10")), a)
	ok(t, "ListProducts", err)
	_, err = c.PortalServiceGetProduct(ps.NewPortalServiceGetProductParams().WithProductID(pid), a)
	ok(t, "GetProduct", err)
	_, err = c.PortalServiceUpdateProduct(ps.NewPortalServiceUpdateProductParams().WithProductID(pid).WithProduct(&pm.V1ProductInput{DisplayName: "Payments"}), a)
	ok(t, "UpdateProduct", err)

	tag, err := c.PortalServiceCreateTag(ps.NewPortalServiceCreateTagParams().WithTag(&pm.V1TagInput{Name: "beginner"}), a)
	ok(t, "CreateTag", err)
	tid := id(tag.Payload.ID)
	_, err = c.PortalServiceListTags(ps.NewPortalServiceListTagsParams(), a)
	ok(t, "ListTags", err)
	logs, err := c.PortalServiceListAuditLogs(ps.NewPortalServiceListAuditLogsParams(), a)
	ok(t, "ListAuditLogs", err)
	if len(logs.Payload) == 0 || logs.Payload[0].Action != "POST /portal-api/tags" || logs.Payload[0].Status != 201 {
		t.Fatalf("ListAuditLogs: %+v", logs.Payload)
	}
	_, err = c.PortalServiceGetTag(ps.NewPortalServiceGetTagParams().WithTagID(tid), a)
	ok(t, "GetTag", err)
	renamed, err := c.PortalServiceUpdateTag(ps.NewPortalServiceUpdateTagParams().WithTagID(tid).WithTag(&pm.V1TagInput{Name: "starter"}), a)
	ok(t, "UpdateTag", err)
	if renamed.Payload.Name != "starter" {
		t.Fatalf("UpdateTag: %+v", renamed.Payload)
	}
	cat, err := c.PortalServiceCreateCategory(ps.NewPortalServiceCreateCategoryParams().WithCategory(&pm.V1CategoryInput{Name: "guides"}), a)
	ok(t, "CreateCategory", err)
	cid := id(cat.Payload.ID)
	_, err = c.PortalServiceListCategories(ps.NewPortalServiceListCategoriesParams(), a)
	ok(t, "ListCategories", err)
	_, err = c.PortalServiceGetCategory(ps.NewPortalServiceGetCategoryParams().WithCategoryID(cid), a)
	ok(t, "GetCategory", err)
	_, err = c.PortalServiceUpdateCategory(ps.NewPortalServiceUpdateCategoryParams().WithCategoryID(cid).WithCategory(&pm.V1CategoryInput{Name: "how-to"}), a)
	ok(t, "UpdateCategory", err)

	first, err := c.PortalServiceCreateTutorialPage(ps.NewPortalServiceCreateTutorialPageParams().WithProductID(pid).WithPage(&pm.V1TutorialPageInput{
		Title: "Getting started", Categories: pm.V1IDList{cid}, Tags: pm.V1IDList{tid}}), a)
	ok(t, "CreateTutorialPage", err)
	if len(first.Payload.Tags) != 1 || first.Payload.Tags[0] != "starter" {
		t.Fatalf("CreateTutorialPage: %+v", first.Payload)
	}
	second, err := c.PortalServiceCreateTutorialPage(ps.NewPortalServiceCreateTutorialPageParams().WithProductID(pid).WithPage(&pm.V1TutorialPageInput{Title: "Next"}), a)
	ok(t, "CreateTutorialPage", err)
	_, err = c.PortalServiceListTutorialPages(ps.NewPortalServiceListTutorialPagesParams().WithProductID(pid).WithPage(str("1")).WithPerPage(str("10")), a)
	ok(t, "ListTutorialPages", err)
	_, err = c.PortalServiceGetTutorialPage(ps.NewPortalServiceGetTutorialPageParams().WithProductID(pid).WithDocID(id(first.Payload.ID)), a)
	ok(t, "GetTutorialPage", err)
	_, err = c.PortalServiceUpdateTutorialPage(ps.NewPortalServiceUpdateTutorialPageParams().WithProductID(pid).WithDocID(id(first.Payload.ID)).
		WithPage(&pm.V1TutorialPageInput{Status: "published"}), a)
	ok(t, "UpdateTutorialPage", err)
	_, err = c.PortalServiceReorderTutorialPages(ps.NewPortalServiceReorderTutorialPagesParams().WithProductID(pid).
		WithOrder(pm.V1DocOrder{second.Payload.ID, first.Payload.ID}), a)
	ok(t, "ReorderTutorialPages", err)
	_, err = c.PortalServiceDeleteTutorialPage(ps.NewPortalServiceDeleteTutorialPageParams().WithProductID(pid).WithDocID(id(second.Payload.ID)), a)
	ok(t, "DeleteTutorialPage", err)
	_, err = c.PortalServiceDeleteTag(ps.NewPortalServiceDeleteTagParams().WithTagID(tid), a)
	ok(t, "DeleteTag", err)
	_, err = c.PortalServiceDeleteCategory(ps.NewPortalServiceDeleteCategoryParams().WithCategoryID(cid), a)
	ok(t, "DeleteCategory", err)
	// the consumer side's reads (the writes need management: the portal's own tests run them)
	_, err = c.PortalServiceListPlans(ps.NewPortalServiceListPlansParams(), a)
	ok(t, "ListPlans", err)
	_, err = c.PortalServiceListDevelopers(ps.NewPortalServiceListDevelopersParams(), a)
	ok(t, "ListDevelopers", err)
	_, err = c.PortalServiceListApps(ps.NewPortalServiceListAppsParams(), a)
	ok(t, "ListApps", err)
	_, err = c.PortalServiceListAccessRequests(ps.NewPortalServiceListAccessRequestsParams().WithStatus(str("pending")), a)
	ok(t, "ListAccessRequests", err)
	_, err = c.PortalServiceDeleteProduct(ps.NewPortalServiceDeleteProductParams().WithProductID(pid), a)
	ok(t, "DeleteProduct", err)
	_, err = c.PortalServiceGetProduct(ps.NewPortalServiceGetProductParams().WithProductID(pid), a)
	if _, isNotFound := err.(*ps.PortalServiceGetProductNotFound); !isNotFound {
		t.Fatalf("GetProduct of a deleted product: %T %v, want the documented 404", err, err)
	}
}
