package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// TestWholeListsStream (issue 32): the lists that answer every record —
// plans, developers, apps, access requests, tags, categories — are written
// as they are read: each REST answer reads exactly as the gRPC answer (one
// message) marshalled, and answering 19 MiB of developers or of apps
// raises the heap by at most 16 MiB (held whole, the records, messages and
// JSON took more than twice the answer).
func TestWholeListsStream(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 38 MiB of records")
	}
	db := filepath.Join(t.TempDir(), "portal.db")
	e, err := boltkv.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	ctx, now := context.Background(), time.Now().UTC()
	pad := strings.Repeat("n", 128<<10)
	for i := range 150 {
		d, err := st.CreateDeveloper(ctx, store.Developer{Email: fmt.Sprintf("d%d@example.test", i), Name: pad, Active: true, CreatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateApp(ctx, store.App{UserID: d.ID, Name: fmt.Sprintf("app %d", i), Description: pad, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateProduct(ctx, store.Product{Name: "product", DisplayName: "Product", Path: "product", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := st.CreatePlan(ctx, store.Plan{Name: fmt.Sprintf("plan %d", i), PolicyID: "p", CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateAccessRequest(ctx, store.AccessRequest{UserID: 1, AppID: 1, ProductID: 1, PlanID: 1, Status: store.RequestPending, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []store.LabelKind{store.Tags, store.Categories} {
			if _, err := st.CreateLabel(ctx, kind, fmt.Sprintf("label %d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Close()
	p := start(t, db)
	big := grpc.MaxCallRecvMsgSize(64 << 20)
	for _, c := range []struct {
		path    string
		bounded bool // big enough for the heap bound to tell
		call    func() ([]proto.Message, error)
	}{
		{"/portal-api/users", true, func() ([]proto.Message, error) {
			r, err := p.client.ListDevelopers(rpc(), &portalv1.ListDevelopersRequest{}, big)
			return messages(r.GetUsers()), err
		}},
		{"/portal-api/apps", true, func() ([]proto.Message, error) {
			r, err := p.client.ListApps(rpc(), &portalv1.ListAppsRequest{}, big)
			return messages(r.GetApps()), err
		}},
		{"/portal-api/plans", false, func() ([]proto.Message, error) {
			r, err := p.client.ListPlans(rpc(), &portalv1.ListPlansRequest{})
			return messages(r.GetPlans()), err
		}},
		{"/portal-api/access-requests?status=pending", false, func() ([]proto.Message, error) {
			r, err := p.client.ListAccessRequests(rpc(), &portalv1.ListAccessRequestsRequest{Status: proto.String(store.RequestPending)})
			return messages(r.GetAccessRequests()), err
		}},
		{"/portal-api/tags", false, func() ([]proto.Message, error) {
			r, err := p.client.ListTags(rpc(), &portalv1.ListTagsRequest{})
			return messages(r.GetTags()), err
		}},
		{"/portal-api/categories", false, func() ([]proto.Message, error) {
			r, err := p.client.ListCategories(rpc(), &portalv1.ListCategoriesRequest{})
			return messages(r.GetCategories()), err
		}},
	} {
		if c.bounded {
			peak, size := servertest.GETPeak(t, p.base+c.path, token)
			if peak > 16<<20 || size < 18<<20 {
				t.Errorf("%s: heap grew by %.1f MiB answering %.1f MiB, want at most 16 MiB for over 18 MiB", c.path, float64(peak)/(1<<20), float64(size)/(1<<20))
			}
		}
		r := p.do("GET", c.path, "")
		p.expect(r, 200, c.path)
		whole, err := c.call()
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, m := range whole {
			b, _ := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
			parts = append(parts, string(b))
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte("["+strings.Join(parts, ",")+"]")); err != nil {
			t.Fatal(err)
		}
		got, want := string(r.body), compact.String()
		if got != want {
			t.Errorf("%s streamed:\n%.300s\nwhole:\n%.300s", c.path, got, want)
		}
	}
}

// messages is a gRPC answer's list as messages.
func messages[T proto.Message](list []T) []proto.Message {
	out := make([]proto.Message, len(list))
	for i, m := range list {
		out[i] = m
	}
	return out
}
