package app

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/server/servertest"

	"google.golang.org/protobuf/proto"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
)

// fillAudit writes audit entries of about 400 bytes (a 256-byte object id)
// straight into the store at db until they hold about mib MiB, newest a
// second ago, and returns how many.
func fillAudit(t testing.TB, db string, mib int) int {
	t.Helper()
	e, err := boltkv.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	object := strings.Repeat("o", 256)
	now := time.Now().Add(-time.Second)
	n, size := 0, 0
	for size < mib<<20 {
		err := e.Update(context.Background(), func(tx kv.WriteTx) error {
			for range 10_000 {
				at := now.Add(-time.Duration(n) * time.Millisecond)
				b := binary.BigEndian.AppendUint64(nil, math.MaxUint64-uint64(at.UnixNano()))
				id := hex.EncodeToString(append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n)))
				v, _ := json.Marshal(audit.Entry{ID: id, Time: at, UserID: "1", UserEmail: "bench@example.com",
					Action: "DELETE /api/apis/{api_id}", ObjectID: object, Status: 403, RemoteAddr: "127.0.0.1"})
				if err := tx.Put(append([]byte(audit.Prefix), id...), v); err != nil {
					return err
				}
				n++
				size += len(v) + len(id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestAuditListStreams: GET /api/audit-logs?p=0 answers every entry as the
// pages do, in one JSON object, written as it is read: over 20 MiB of
// entries, the heap grows by at most 16 MiB while it is answered (on
// 1151b31, whole: 328 MiB for 62 MiB of entries, BenchmarkListAll).
func TestAuditListStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store")
	}
	db := filepath.Join(t.TempDir(), "management.db")
	n := fillAudit(t, db, 20)
	in := start(t, db)
	peak, size := servertest.GETPeak(t, in.base+"/api/audit-logs?p=0", adminToken)
	if peak > 16<<20 {
		t.Errorf("heap grew by %.1f MiB answering %.1f MiB, want at most 16 MiB", float64(peak)/(1<<20), float64(size)/(1<<20))
	}
	r := in.admin("GET", "/api/audit-logs?p=0", nil)
	expect(t, "GET /api/audit-logs?p=0", r, 200, "")
	var all struct {
		Logs  []audit.Entry `json:"logs"`
		Pages int           `json:"pages"`
	}
	if err := json.Unmarshal(r.body, &all); err != nil || all.Pages != 1 || len(all.Logs) < n {
		t.Fatalf("p=0: %d entries, pages %d, %v; want at least %d entries and pages 1", len(all.Logs), all.Pages, err, n)
	}
	page1, pages := in.auditLogs("?p=1")
	if pages != (len(all.Logs)+9)/10 || len(page1) != 10 {
		t.Fatalf("p=1: %d entries of %d pages", len(page1), pages)
	}
	for i := range page1 {
		if page1[i] != all.Logs[i] {
			t.Fatalf("entry %d: p=0 %+v, p=1 %+v", i, all.Logs[i], page1[i])
		}
	}
}

// BenchmarkListAll measures the heap a whole-list answer takes above idle
// (peak-MiB) for an audit log of GATEHOUSE_LIST_BENCH_MIB MiB (default 64;
// the goal is 1 GB, which takes minutes to fill): REST ?p=0 streams,
// gRPC answers one message (the whole list in memory).
func BenchmarkListAll(b *testing.B) {
	mib := 64
	if v, err := strconv.Atoi(os.Getenv("GATEHOUSE_LIST_BENCH_MIB")); err == nil && v > 0 {
		mib = v
	}
	db := filepath.Join(b.TempDir(), "management.db")
	fillAudit(b, db, mib)
	in := start(b, db)
	b.Run(fmt.Sprintf("audit-%dMiB/rest", mib), func(b *testing.B) {
		var worst uint64
		var size int64
		for b.Loop() {
			peak, n := servertest.GETPeak(b, in.base+"/api/audit-logs?p=0", adminToken)
			worst, size = max(worst, peak), n
		}
		b.ReportMetric(float64(worst)/(1<<20), "peak-MiB")
		b.ReportMetric(float64(size)/(1<<20), "answer-MiB")
	})
}

// TestDocumentListsStream: GET /api/portal/policies?p=0 and GET /api/assets
// answer every document as the gRPC list (one message) does, streamed, and
// over 20 MiB of policies the heap grows by at most 16 MiB while answering.
func TestDocumentListsStream(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store")
	}
	in := start(t, "")
	pad := strings.Repeat("p", 200<<10)
	for i := range 100 {
		expect(t, "create policy", in.admin("POST", "/api/portal/policies", fmt.Sprintf(`{"id":"p%d","name":"%s","rate":10,"per":1}`, i, pad)), 200, "")
	}
	for i := range 3 {
		expect(t, "create asset", in.admin("POST", "/api/assets", fmt.Sprintf(`{"kind":"oas-template","name":"a%d","data":{}}`, i)), 201, "")
	}
	for _, c := range []struct{ path, field string }{{"/api/portal/policies?p=0", "Data"}, {"/api/assets", ""}} {
		peak, size := servertest.GETPeak(t, in.base+c.path, adminToken)
		if peak > 16<<20 {
			t.Errorf("%s: heap grew by %.1f MiB answering %.1f MiB, want at most 16 MiB", c.path, float64(peak)/(1<<20), float64(size)/(1<<20))
		}
		r := in.admin("GET", c.path, nil)
		expect(t, c.path, r, 200, "")
		var got []json.RawMessage
		if c.field == "" {
			if err := json.Unmarshal(r.body, &got); err != nil || len(got) != 3 {
				t.Errorf("%s: %d assets, %v", c.path, len(got), err)
			}
			continue
		}
		var v struct {
			Data  []json.RawMessage
			Pages int
		}
		if err := json.Unmarshal(r.body, &v); err != nil || len(v.Data) != 100 || v.Pages != 10 {
			t.Errorf("%s: %d policies, pages %d, %v; want 100 and 10", c.path, len(v.Data), v.Pages, err)
		}
	}
}

// TestAPIListStreams: GET /api/apis?p=0 (streamed) answers byte for byte
// what gRPC ListAPIs with p 0 (one message) does, with and without a
// category filter.
func TestAPIListStreams(t *testing.T) {
	in := start(t, "")
	for i := range 25 {
		id := fmt.Sprintf("%032x", i+1)
		expect(t, "create", in.admin("POST", "/api/apis/oas", oasDoc(id, fmt.Sprintf("API %d #c%d", i, i%2), fmt.Sprintf("/a%d/", i))), 200, "")
		if i%3 == 0 {
			expect(t, "categories", in.admin("PUT", "/api/apis/oas/"+id+"/categories", `{"categories":["c"]}`), 200, "")
		}
	}
	for _, category := range []string{"", "c"} {
		path := "/api/apis?p=0"
		req := &managementv1.ListAPIsRequest{P: proto.Int64(0)}
		if category != "" {
			path += "&category=" + category
			req.Category = category
		}
		r := in.admin("GET", path, nil)
		expect(t, path, r, 200, "")
		whole, err := in.client.ListAPIs(grpcCtx(adminToken), req)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(r.body), string(whole.GetBody().GetData()); got != want {
			t.Errorf("%s streamed:\n%.400s\nwhole:\n%.400s", path, got, want)
		}
	}
}
