package app

import (
	"bytes"
	"context"

	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// classicTemplate is the converter's 4 KB benchmark input: a classic API
// with two versions (one child) and a dozen endpoints.
func classicTemplate(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "convert", "testdata", "bench-4k.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// openStore opens the management store on the bbolt file db.
func openStore(tb testing.TB, db string) *store.Store {
	tb.Helper()
	e, err := boltkv.Open(db)
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

// seedClassic writes n classic APIs made from the template straight into the
// store file db, in one transaction, and returns their IDs in order.
func seedClassic(tb testing.TB, db string, n int) []string {
	tb.Helper()
	tmpl := classicTemplate(tb)
	st := openStore(tb, db)
	defer st.Close()
	ids := make([]string, n)
	err := st.Update(context.Background(), func(t *store.Tx) error {
		for i := range n {
			ids[i] = fmt.Sprintf("%032x", i+1)
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
			dbID := store.NewDBID()
			if doc, err = rawjson.Set(doc, rawjson.Quote(dbID), "id"); err != nil {
				return err
			}
			if err := t.PutAPI(store.API{ID: ids[i], DBID: dbID, Kind: store.Classic, Name: fmt.Sprintf("API %d #seeded", i), Doc: doc}, store.AnyRevision); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}

func migrateBody(mode string, ids ...string) string {
	b, _ := json.Marshal(map[string]any{"mode": mode, "apiIDs": ids})
	return string(b)
}

type report struct {
	Success struct {
		Count      int
		APIIDs     []string                                  `json:"apiIDs"`
		StagedAPIs []struct{ ClassicAPIID, OASAPIID string } `json:"stagedAPIs"`
		Warnings   []struct {
			APIID   string `json:"apiID"`
			Message []string
		}
	}
	Failure struct {
		Count  int
		Errors []struct {
			APIID   string `json:"apiID"`
			Message []string
		}
	}
	Skipped struct {
		Count int
		APIs  []struct{ APIID, Message, Key string } `json:"apis"`
	}
	AbortedOnFailure bool
}

func (in *instance) migrate(t testing.TB, body string) report {
	t.Helper()
	r := in.admin("POST", "/api/apis/migrate", body)
	var rep report
	if r.status != 200 || json.Unmarshal([]byte(r.body), &rep) != nil {
		t.Fatalf("migrate %s: %d %s", body, r.status, r.body)
	}
	return rep
}

func TestMigrateStagePromoteKeepsEditsAndVersions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	ids := seedClassic(t, db, 1)
	in := start(t, db)
	id := ids[0]
	if rep := in.migrate(t, migrateBody("stage", id)); rep.Success.Count != 1 || rep.Success.StagedAPIs[0].OASAPIID != "staging-"+id {
		t.Fatalf("stage: %+v", rep)
	}
	child := convert.StagingIDPrefix + convert.ChildID(id, "v2")
	expect(t, "staged child", in.admin("GET", "/api/apis/oas/"+child, nil), 200, "")
	// edit the staged copy, then promote
	staged := string(in.admin("GET", "/api/apis/oas/staging-"+id, nil).body)
	edited := strings.Replace(staged, `"url":"http://`, `"url":"http://edited.`, 1)
	expect(t, "edit staged", in.admin("PUT", "/api/apis/oas/staging-"+id, edited), 200, "")
	if rep := in.migrate(t, migrateBody("promote", "staging-"+id)); rep.Success.Count != 1 || rep.Success.APIIDs[0] != id {
		t.Fatalf("promote: %+v", rep)
	}
	promoted := string(in.admin("GET", "/api/apis/oas/"+id, nil).body)
	for _, want := range []string{`"url":"http://edited.`, `"name":"API 0 #seeded"`, `"value":"/seeded-0/"`, `"id":"` + convert.ChildID(id, "v2") + `"`} {
		if !strings.Contains(promoted, want) {
			t.Errorf("promoted document lacks %s: %s", want, promoted)
		}
	}
	if strings.Contains(promoted, "staging-") || strings.Contains(promoted, "[staged]") || strings.Contains(promoted, "tyk-staging") {
		t.Errorf("promoted document keeps a staging prefix: %s", promoted)
	}
	expect(t, "promoted child", in.admin("GET", "/api/apis/oas/"+convert.ChildID(id, "v2"), nil), 200, "")
	for _, gone := range []string{"staging-" + id, child} {
		expect(t, "staged record removed", in.admin("GET", "/api/apis/oas/"+gone, nil), 404, mgmtErr("API not found"))
	}
	if rep := in.migrate(t, migrateBody("promote", id)); rep.Skipped.Count != 1 || rep.Skipped.APIs[0].Key != "already_migrated" {
		t.Fatalf("promote twice: %+v", rep)
	}
}

func TestMigrateRefusesWhatWouldBeOverwritten(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	ids := seedClassic(t, db, 2)
	in := start(t, db)
	// an OAS API already holds the ID the stage copy needs
	expect(t, "squat", in.admin("POST", "/api/apis/oas", oasDoc("staging-"+ids[0], "Squatter", "/squat/")), 200, "")
	rep := in.migrate(t, migrateBody("stage", ids[0]))
	if rep.Failure.Count != 1 || !strings.Contains(rep.Failure.Errors[0].Message[0], "staging-"+ids[0]) {
		t.Fatalf("stage onto a taken ID: %+v", rep)
	}
	// an OAS API holds a child version's ID
	expect(t, "squat child", in.admin("POST", "/api/apis/oas", oasDoc(convert.ChildID(ids[1], "v2"), "Squatter 2", "/squat2/")), 200, "")
	rep = in.migrate(t, migrateBody("direct", ids[1]))
	if rep.Failure.Count != 1 || !strings.Contains(rep.Failure.Errors[0].Message[0], convert.ChildID(ids[1], "v2")) {
		t.Fatalf("direct onto a taken version ID: %+v", rep)
	}
	if r := in.admin("GET", "/api/apis/"+ids[1], nil); r.status != 200 || bytes.Contains(r.body, []byte(`"is_oas":true`)) {
		t.Fatalf("the refused API is no longer classic: %d %s", r.status, r.body)
	}
}

func TestMigrateOverGRPC(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	ids := seedClassic(t, db, 1)
	in := start(t, db)
	res, err := in.client.Migrate(grpcCtx(adminToken), &managementv1.MigrateRequest{Mode: "dryRun", ApiIds: ids})
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(res.GetReport().GetData(), &rep); err != nil || rep.Success.Count != 1 {
		t.Fatalf("gRPC dryRun report: %v %s", err, res.GetReport().GetData())
	}
	// the seeded definition's validate_json entries change behaviour: the gRPC report says so as REST does
	if w := rep.Success.Warnings; len(w) != 1 || w[0].APIID != ids[0] || len(w[0].Message) == 0 {
		t.Fatalf("gRPC dryRun report: success.warnings = %+v, want one entry for %s", w, ids[0])
	}
	rest := in.migrate(t, migrateBody("dryRun", ids...))
	if fmt.Sprint(rest.Success.Warnings) != fmt.Sprint(rep.Success.Warnings) {
		t.Fatalf("REST warnings %+v differ from gRPC's %+v", rest.Success.Warnings, rep.Success.Warnings)
	}
}

// buildBinary builds the management binary as deploy/Dockerfile does.
func buildBinary(tb testing.TB) string {
	tb.Helper()
	bins, err := binproc.Build(filepath.Join("..", "..", "..", ".."), tb.TempDir(), []string{"management"})
	if err != nil || bins["management"] == "" {
		tb.Fatalf("build the management binary: %v", err)
	}
	return bins["management"]
}

// startBinary runs the management binary on loopback with the store at db.
func startBinary(tb testing.TB, bin, db string, flags ...string) *binproc.Process {
	tb.Helper()
	return binproc.Start(tb, bin, append([]string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--db", db,
		"--bootstrap-token", adminToken}, flags...), os.Environ(), nil, "")
}

// postMigrate sends a migration request to a running binary.
func postMigrate(p *binproc.Process, body string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", "http://"+p.HTTPAddr+"/api/apis/migrate", strings.NewReader(body))
	req.Header.Set("Authorization", adminToken)
	return http.DefaultClient.Do(req)
}

// TestMigrateCrashLeavesEveryAPIWhole kills the service with SIGKILL in the
// middle of a large direct migration, restarts it, and checks that every API
// is wholly classic (byte for byte as before) or wholly OAS with all its
// versions, and that nothing is lost or doubled.
func TestMigrateCrashLeavesEveryAPIWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and migrates thousands of APIs")
	}
	const n = 6000
	bin := buildBinary(t)
	// one seeded store, copied for each kill point (seeding 6,000 APIs under
	// the race detector took seconds per subtest)
	seeded := filepath.Join(t.TempDir(), "seed.db")
	ids := seedClassic(t, seeded, n)
	before := map[string][]byte{}
	st := openStore(t, seeded)
	st.View(context.Background(), func(tx *store.Tx) error {
		for _, id := range ids {
			a, _ := tx.API(id)
			before[id] = a.Doc
		}
		return nil
	})
	st.Close()
	template, err := os.ReadFile(seeded)
	if err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"early", "after-first-chunk"} {
		t.Run(when, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "management.db")
			if err := os.WriteFile(db, template, 0o600); err != nil {
				t.Fatal(err)
			}

			p := startBinary(t, bin, db)
			go postMigrate(p, `{"mode":"direct","all":true}`)
			waitForKillPoint(t, p, ids[0], when)
			p.Cmd.Process.Kill() // binproc waits for the process at cleanup

			st := openStore(t, db)
			defer st.Close()
			migrated := checkWhole(t, st, ids, before)
			t.Logf("killed %s: %d of %d APIs were migrated, every API whole", when, migrated, n)
			// the rest migrates after the restart
			st.Close()
			p = startBinary(t, bin, db)
			res, err := postMigrate(p, `{"mode":"direct","all":true}`)
			if err != nil {
				t.Fatal(err)
			}
			var rep report
			json.NewDecoder(res.Body).Decode(&rep)
			res.Body.Close()
			if rep.Success.Count != n-migrated || rep.Failure.Count != 0 {
				t.Fatalf("after the restart: %d migrated, %d failed; want %d, 0", rep.Success.Count, rep.Failure.Count, n-migrated)
			}
		})
	}
}

// waitForKillPoint returns when the migration has reached the point to kill
// it at: early, 50 ms after the request; after-first-chunk, as soon as the
// first API (in the first chunk) reads back as Tyk OAS, while later chunks
// are still being converted and written.
func waitForKillPoint(t *testing.T, p *binproc.Process, first, when string) {
	if when == "early" {
		time.Sleep(50 * time.Millisecond)
		return
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		req, _ := http.NewRequest("GET", "http://"+p.HTTPAddr+"/api/apis/oas/"+first, nil)
		req.Header.Set("Authorization", adminToken)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatal("the first chunk never committed")
}

// BenchmarkMigrateDirect10k migrates 10,000 classic APIs (4 KB, two versions
// each) through POST /api/apis/migrate with all:true on the real binary
// (with GOMEMLIMIT as in a base manifest's pod),
// until its report (about 12 MB) is read in full, and reports the service's
// CPU time and peak resident memory. Decoding the report to check it is not
// timed: encoding/json took 160-220 ms of it at load 5, the client's work.
// BENCH_DEBUG_ADDR=host:port makes the binary serve pprof there (see
// studio's BenchmarkREST32); with BENCH_CPUPROFILE=file as well, each run's
// CPU profile (BENCH_CPUPROFILE_SECONDS, default 3) is written to file.
// gc/op is the binary's collections a run (its /metrics, read untimed).
func BenchmarkMigrateDirect10k(b *testing.B) {
	const n = 10000
	if os.Getenv("GOMEMLIMIT") == "" {
		// the memory limit the binary sets itself in a base manifest's pod
		// (90% of its container's 256 MiB), under which the migration raises
		// the collector's percent (package gcpercent); this machine's
		// cgroup may have none
		b.Setenv("GOMEMLIMIT", "230MiB")
	}
	bin := buildBinary(b)
	seeded := filepath.Join(b.TempDir(), "seed.db")
	seedClassic(b, seeded, n)
	template, err := os.ReadFile(seeded)
	if err != nil {
		b.Fatal(err)
	}
	var peakKB int
	var cpu time.Duration
	var cycles int
	for b.Loop() {
		b.StopTimer()
		db := filepath.Join(b.TempDir(), "management.db")
		if err := os.WriteFile(db, template, 0o600); err != nil {
			b.Fatal(err)
		}
		p := startBinary(b, bin, db, "--debug-addr", os.Getenv("BENCH_DEBUG_ADDR"))
		cpu -= p.CPUTime(b)
		cycles -= gcCycles(b, p)
		profiled := profileTimed(b)
		b.StartTimer()
		res, err := postMigrate(p, `{"mode":"direct","all":true}`)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(res.Body) // the answer in full; checking it is the test's work
		res.Body.Close()
		b.StopTimer()
		var rep report
		if err == nil {
			err = json.Unmarshal(body, &rep)
		}
		if err != nil {
			b.Fatal(err)
		}
		if rep.Success.Count != n {
			b.Fatalf("migrated %d of %d: %+v", rep.Success.Count, n, rep.Failure)
		}
		profiled()
		peakKB = max(peakKB, p.PeakRSS(b))
		cpu += p.CPUTime(b)
		cycles += gcCycles(b, p)
		p.Stop(b, 15*time.Second)
		b.StartTimer()
	}
	b.ReportMetric(float64(peakKB)/1024, "peak-MB")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(cycles)/float64(b.N), "gc/op")
}

// gcCycles is the number of collections the binary completed, from the
// go_gc_duration_seconds_count line of its /metrics.
func gcCycles(b *testing.B, p *binproc.Process) int {
	res, err := http.Get("http://" + p.HTTPAddr + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, "go_gc_duration_seconds_count "); ok {
			var n int
			if _, err := fmt.Sscan(v, &n); err == nil {
				return n
			}
		}
	}
	b.Fatalf("no go_gc_duration_seconds_count in /metrics (status %d)", res.StatusCode)
	return 0
}

// TestMigrateKeepsCategories: a classic API shows the same categories in the
// classic listing before a migration as its OAS API shows after it, for the
// cases where two rules used to disagree (repeats, a bare '#', over-long words).
func TestMigrateKeepsCategories(t *testing.T) {
	in := start(t, "")
	for i, name := range []string{
		"Orders #retail #internal",
		"Orders #retail #retail ##double # #",
		"Orders #" + strings.Repeat("x", 1025) + " #ok\t#tab",
		"Orders",
	} {
		def := fmt.Sprintf(`{"api_definition":{"name":%s,"use_keyless":true,"proxy":{"listen_path":"/cat-%d/","target_url":"http://upstream.test"},"version_data":{"not_versioned":true,"default_version":"Default","versions":{"Default":{"name":"Default"}}}}}`, quote(name), i)
		id := in.admin("POST", "/api/apis", def).json(t)["ID"].(string)
		var list struct {
			APIs []struct {
				Def struct {
					APIID string `json:"api_id"`
				} `json:"api_definition"`
				Categories []string
			} `json:"apis"`
		}
		if r := in.admin("GET", "/api/apis?p=-1", nil); json.Unmarshal(r.body, &list) != nil {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		var before []string
		for _, a := range list.APIs {
			if a.Def.APIID == id {
				before = a.Categories
			}
		}
		if before == nil {
			t.Fatalf("%q: the classic listing has no categories array for %s", name, id)
		}
		if rep := in.migrate(t, migrateBody("direct", id)); rep.Success.Count != 1 {
			t.Fatalf("%q: migrate: %+v", name, rep)
		}
		var after struct{ Categories []string }
		if r := in.admin("GET", "/api/apis/oas/"+id+"/categories", nil); json.Unmarshal(r.body, &after) != nil {
			t.Fatalf("%q: categories after: %d %s", name, r.status, r.body)
		}
		if !slices.Equal(before, after.Categories) {
			t.Errorf("%q: categories before migration %q, after %q", name, before, after.Categories)
		}
	}
}

// checkWhole reads st after a kill during a direct migration of ids (each
// classic with one version v2, before holding their stored bytes): every API
// is wholly classic (byte-identical, no version stored) or wholly OAS with its
// version, and nothing else was stored. It returns how many were migrated.
func checkWhole(t *testing.T, st *store.Store, ids []string, before map[string][]byte) int {
	t.Helper()
	migrated := 0
	err := st.View(context.Background(), func(tx *store.Tx) error {
		migrated = 0
		all, err := tx.IDs(0)
		if err != nil {
			return err
		}
		want := len(ids)
		for _, id := range ids {
			a, err := tx.API(id)
			if err != nil {
				return fmt.Errorf("api %s lost: %v", id, err)
			}
			child := convert.ChildID(id, "v2")
			switch a.Kind {
			case store.Classic:
				if !bytes.Equal(a.Doc, before[id]) {
					return fmt.Errorf("classic api %s changed", id)
				}
				if found, _ := tx.Exists(child); found {
					return fmt.Errorf("classic api %s has a stored version %s", id, child)
				}
			case store.OAS:
				migrated++
				want++
				if c, err := tx.API(child); err != nil || c.BaseID != id {
					return fmt.Errorf("migrated api %s lacks its version %s: %v", id, child, err)
				}
			}
		}
		if len(all) != want {
			return fmt.Errorf("%d APIs stored, want %d (%d classic APIs, %d migrated with one version each)", len(all), want, len(ids), migrated)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return migrated
}
