package audit

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
)

// BenchmarkWrite is what auditing adds to one write on bbolt: plain is a
// bare transaction, audited the same one made by an authenticated write
// request (its entry and index key put in the same transaction).
func BenchmarkWrite(b *testing.B) {
	for _, audited := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "audited"}[audited], func(b *testing.B) {
			e, err := boltkv.Open(filepath.Join(b.TempDir(), "b.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			var eng kv.Engine = e
			ctx := context.Background()
			if audited {
				eng = Engine(e)
				r := newRecord(Entry{ID: newID(time.Now()), Time: time.Now(), Action: "PUT /api/apis/{api_id}", RemoteAddr: "127.0.0.1"})
				r.success = 200
				ctx = withRecord(ctx, r)
				auditctx.SetCaller(ctx, "6b074d359dba20c5c8e1d480", "ana@example.test")
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				err := eng.Update(ctx, func(w kv.WriteTx) error { return w.Put([]byte(fmt.Sprintf("thing/%d", i)), []byte("value")) })
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkList is one page of the newest entries of 10,000, without and
// with a user filter.
func BenchmarkList(b *testing.B) {
	l, e := newLog(b, config.Audit{})
	seed(b, e, time.Now(), 10_000)
	for _, q := range []Query{{Page: 1}, {Page: 1, UserID: "u1"}} {
		b.Run(fmt.Sprintf("user=%q", q.UserID), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := l.List(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
