package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// openEtcdStore opens the management store on prefix of an etcd cluster.
func openEtcdStore(tb testing.TB, endpoints []string, prefix string) *store.Store {
	tb.Helper()
	e, err := etcdkv.Open(context.Background(), etcdkv.Config{Endpoints: endpoints, Prefix: prefix})
	if err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(context.Background(), e)
	if err != nil {
		e.Close()
		tb.Fatal(err)
	}
	return st
}

// seedClassicEtcd writes n classic APIs made from the template, a few per
// transaction (etcd's request limits), and returns their IDs in order.
func seedClassicEtcd(tb testing.TB, st *store.Store, n int) []string {
	tb.Helper()
	tmpl := classicTemplate(tb)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%032x", i+1)
	}
	const perTx = 16
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	chunks := make(chan int)
	for range 4 {
		wg.Go(func() {
			for from := range chunks {
				err := st.Update(context.Background(), func(t *store.Tx) error {
					for i := from; i < min(from+perTx, n); i++ {
						doc := tmpl
						var err error
						for _, f := range []struct {
							value string
							path  []string
						}{{ids[i], []string{"api_id"}}, {fmt.Sprintf("API %d #seeded", i), []string{"name"}}, {fmt.Sprintf("/seeded-%d/", i), []string{"proxy", "listen_path"}}} {
							if doc, err = rawjson.Set(doc, rawjson.Quote(f.value), f.path...); err != nil {
								return err
							}
						}
						dbID := fmt.Sprintf("%024x", i+1)
						if doc, err = rawjson.Set(doc, rawjson.Quote(dbID), "id"); err != nil {
							return err
						}
						if err := t.PutAPI(store.API{ID: ids[i], DBID: dbID, Kind: store.Classic, Doc: doc}, store.AnyRevision); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for from := 0; from < n; from += perTx {
		chunks <- from
	}
	close(chunks)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
	return ids
}

// startEtcdBinary runs the management binary on an etcd prefix.
func startEtcdBinary(tb testing.TB, bin string, endpoints []string, prefix string) *binproc.Process {
	tb.Helper()
	return binproc.Start(tb, bin, []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--store", "etcd", "--etcd-endpoints", strings.Join(endpoints, ","), "--etcd-prefix", prefix,
		"--bootstrap-token", adminToken}, os.Environ(), nil, "")
}

func decodeReport(t testing.TB, p *binproc.Process, body string) report {
	t.Helper()
	res, err := postMigrate(p, body)
	if err != nil {
		t.Error(err)
		return report{}
	}
	defer res.Body.Close()
	var rep report
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&rep) != nil {
		t.Errorf("migrate: status %d", res.StatusCode)
	}
	return rep
}

// TestMigrateReplicasOnEtcd: two management processes on one prefix of a
// 3-member etcd cluster both migrate all APIs at once; each API is migrated
// exactly once and the two reports add up.
func TestMigrateReplicasOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a 3-member etcd cluster")
	}
	t.Parallel() // its own etcd cluster, processes on 127.0.0.1:0; mostly waits on etcd
	const n = 300
	c := etcdtest.Start(t, 3)
	const prefix = "/gatehouse-test/management/"
	st := openEtcdStore(t, c.Endpoints(), prefix)
	seedClassicEtcd(t, st, n)
	st.Close()

	bin := buildBinary(t)
	a := startEtcdBinary(t, bin, c.Endpoints(), prefix)
	b := startEtcdBinary(t, bin, c.Endpoints(), prefix)
	var reps [2]report
	var wg sync.WaitGroup
	for i, p := range []*binproc.Process{a, b} {
		wg.Go(func() { reps[i] = decodeReport(t, p, `{"mode":"direct","all":true}`) })
	}
	wg.Wait()

	migrated := map[string]int{}
	for _, r := range reps {
		if r.Success.Count != len(r.Success.APIIDs) || r.Skipped.Count != len(r.Skipped.APIs) || r.Failure.Count != len(r.Failure.Errors) {
			t.Errorf("a report's counts differ from its lists: %+v", r)
		}
		for _, id := range r.Success.APIIDs {
			migrated[id]++
		}
		for _, e := range r.Failure.Errors {
			t.Errorf("failure %s: %v", e.APIID, e.Message)
		}
	}
	for id, k := range migrated {
		if k != 1 {
			t.Errorf("api %s migrated %d times", id, k)
		}
	}
	if got := reps[0].Success.Count + reps[1].Success.Count; got != n || len(migrated) != n {
		t.Errorf("the replicas migrated %d + %d = %d APIs (%d distinct), want %d", reps[0].Success.Count, reps[1].Success.Count, got, len(migrated), n)
	}
	t.Logf("replica a migrated %d, skipped %d; replica b migrated %d, skipped %d",
		reps[0].Success.Count, reps[0].Skipped.Count, reps[1].Success.Count, reps[1].Skipped.Count)
}

// TestMigrateCrashOnEtcd kills a management process with SIGKILL in the
// middle of a 3,000-API direct migration on etcd; every API must be wholly
// classic (byte for byte) or wholly OAS with its version, and the rest
// migrates after a restart.
func TestMigrateCrashOnEtcd(t *testing.T) {
	if os.Getenv("GATEHOUSE_LONG") == "" {
		t.Skip("a long run: make test-long (GATEHOUSE_LONG=1)")
	}
	const n = 3000
	c := etcdtest.Start(t, 1)
	const prefix = "/gatehouse-test/crash/"
	st := openEtcdStore(t, c.Endpoints(), prefix)
	defer st.Close()
	ids := seedClassicEtcd(t, st, n)
	before := map[string][]byte{}
	err := st.View(context.Background(), func(tx *store.Tx) error {
		for _, id := range ids {
			a, err := tx.API(id)
			if err != nil {
				return err
			}
			before[id] = a.Doc
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	bin := buildBinary(t)
	p := startEtcdBinary(t, bin, c.Endpoints(), prefix)
	go postMigrate(p, `{"mode":"direct","all":true}`)
	waitForKillPoint(t, p, ids[0], "after-first-chunk")
	time.Sleep(200 * time.Millisecond) // well inside the run
	p.Cmd.Process.Kill()
	p.Cmd.Process.Wait()

	migrated := checkWhole(t, st, ids, before)
	if migrated == 0 || migrated == n {
		t.Errorf("the kill came at %d of %d migrated: not in the middle", migrated, n)
	}
	t.Logf("killed after %d of %d APIs were migrated; every API whole", migrated, n)
	p = startEtcdBinary(t, bin, c.Endpoints(), prefix)
	rep := decodeReport(t, p, `{"mode":"direct","all":true}`)
	if rep.Success.Count != n-migrated || rep.Failure.Count != 0 {
		t.Fatalf("after the restart: %d migrated, %d failed; want %d, 0", rep.Success.Count, rep.Failure.Count, n-migrated)
	}
}

// BenchmarkMigrateDirect10kEtcd is BenchmarkMigrateDirect10k on etcd (one
// member in the test process, loopback, fsync on): 10,000 classic APIs
// (4 KB, two versions each) migrated through POST /api/apis/migrate with
// all:true on the real binary, one etcd transaction per API.
func BenchmarkMigrateDirect10kEtcd(b *testing.B) {
	const n = 10000
	bin := buildBinary(b)
	c := etcdtest.Start(b, 1)
	var peakKB, round int
	for b.Loop() {
		b.StopTimer()
		round++
		prefix := fmt.Sprintf("/gatehouse-bench/management-%d/", round)
		st := openEtcdStore(b, c.Endpoints(), prefix)
		seedClassicEtcd(b, st, n)
		st.Close()
		p := startEtcdBinary(b, bin, c.Endpoints(), prefix)
		b.StartTimer()
		rep := decodeReport(b, p, `{"mode":"direct","all":true}`)
		b.StopTimer()
		if rep.Success.Count != n {
			b.Fatalf("migrated %d of %d: %+v", rep.Success.Count, n, rep.Failure)
		}
		peakKB = max(peakKB, p.PeakRSS(b))
		p.Stop(b, 15*time.Second)
		b.StartTimer()
	}
	b.ReportMetric(float64(peakKB)/1024, "peak-MB")
}
