package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// BenchmarkListsLarge (issue 32 part 4, `make bench-large`): a portal store
// of GATEHOUSE_LARGE_LISTS_MIB MiB (1024 for the goal's 1 GB) — half
// developers, half apps, 128 KiB each, and 1,000 each of plans, access
// requests, tags and categories — and the heap each whole list adds above
// idle (peak-MiB; the bound is 16). Skipped without the variable.
func BenchmarkListsLarge(b *testing.B) {
	mib, _ := strconv.Atoi(os.Getenv("GATEHOUSE_LARGE_LISTS_MIB"))
	if mib <= 0 {
		b.Skip("GATEHOUSE_LARGE_LISTS_MIB is not set (make bench-large sets 1024)")
	}
	db := filepath.Join(b.TempDir(), "portal.db")
	e, err := boltkv.Open(db)
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(context.Background(), e)
	if err != nil {
		b.Fatal(err)
	}
	ctx, now := context.Background(), time.Now().UTC()
	pad := strings.Repeat("n", 128<<10)
	if _, err := st.CreateProduct(ctx, store.Product{Name: "product", DisplayName: "Product", Path: "product", CreatedAt: now, UpdatedAt: now}); err != nil {
		b.Fatal(err)
	}
	for i := range mib * 4 { // 8 records of 128 KiB a MiB, half of them developers
		d, err := st.CreateDeveloper(ctx, store.Developer{Email: fmt.Sprintf("d%d@example.test", i), Name: pad, Active: true, CreatedAt: now})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.CreateApp(ctx, store.App{UserID: d.ID, Name: fmt.Sprintf("app %d", i), Description: pad, CreatedAt: now}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 1000 {
		if _, err := st.CreatePlan(ctx, store.Plan{Name: fmt.Sprintf("plan %d", i), PolicyID: "p", CreatedAt: now, UpdatedAt: now}); err != nil {
			b.Fatal(err)
		}
		if _, err := st.CreateAccessRequest(ctx, store.AccessRequest{UserID: 1, AppID: 1, ProductID: 1, PlanID: 1, Status: store.RequestPending, CreatedAt: now, UpdatedAt: now}); err != nil {
			b.Fatal(err)
		}
		for _, kind := range []store.LabelKind{store.Tags, store.Categories} {
			if _, err := st.CreateLabel(ctx, kind, fmt.Sprintf("label %d", i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	e.Close()
	p := start(b, db)
	for _, path := range []string{"/portal-api/users", "/portal-api/apps", "/portal-api/plans", "/portal-api/access-requests",
		"/portal-api/tags", "/portal-api/categories", "/portal-api/products?per_page=1000"} {
		b.Run(strings.NewReplacer("/", "_", "?", "_").Replace(strings.TrimPrefix(path, "/portal-api/")), func(b *testing.B) {
			var worst uint64
			var size int64
			for b.Loop() {
				peak, n := servertest.GETPeak(b, p.base+path, token)
				worst, size = max(worst, peak), n
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-MiB")
			b.ReportMetric(float64(size)/(1<<20), "answer-MiB")
		})
	}
}
