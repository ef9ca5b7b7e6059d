package migration

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// BenchmarkDirect10k runs the engine in-process over 10,000 classic APIs
// (the converter's 4 KB benchmark input, two versions each) on a bbolt
// file: the domain's share of POST /api/apis/migrate without HTTP. The
// records keep no derived classic definition (no gateways served);
// BenchmarkDirect10kDerived keeps them, as the management binary does.
func BenchmarkDirect10k(b *testing.B) { benchDirect10k(b, nil) }

// BenchmarkDirect10kDerived is BenchmarkDirect10k with the records'
// derived classic definitions (convert.ToClassicWithin), the work of the binary
// that BenchmarkMigrateDirect10k times.
func BenchmarkDirect10kDerived(b *testing.B) { benchDirect10k(b, convert.ToClassicWithin) }

func benchDirect10k(b *testing.B, derive apirecord.Derive) {
	const n = 10000
	tmpl, err := os.ReadFile(filepath.Join("..", "convert", "testdata", "bench-4k.json"))
	if err != nil {
		b.Fatal(err)
	}
	docs := make([][]byte, n)
	for i := range n {
		doc, _ := rawjson.Set(tmpl, rawjson.Quote(fmt.Sprintf("%032x", i+1)), "api_id")
		doc, _ = rawjson.Set(doc, rawjson.Quote(fmt.Sprintf("API %d #seeded", i)), "name")
		docs[i], _ = rawjson.Set(doc, rawjson.Quote(fmt.Sprintf("/seeded-%d/", i)), "proxy", "listen_path")
	}
	seeded := seededFile(b, docs)
	docs = nil
	// the memory limit of a base manifest's pod, which the binary sets from
	// its container (GOMEMLIMIT=230MiB): the engine's collector setting
	// needs one (package gcpercent)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(230 << 20))
	b.ReportAllocs()
	var cpu time.Duration // of the runs alone: on a shared machine, steadier than the wall clock
	var idle float64      // the seconds the runs left a P (one of GOMAXPROCS) with nothing to run
	var cycles uint64     // the collector's
	var commits int64     // the store's (each one fdatasync of its pages, one of its meta page)
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "m.db")
		copyFile(b, seeded, path)
		st, kvEngine := openStore(b, path)
		eng := New(st, apirecord.New(st.OrgID(), derive), slog.New(slog.NewTextHandler(io.Discard, nil)), GroupCommitWrites)
		runtime.GC() // the previous run's garbage is not this one's
		b.StartTimer()
		start, idleStart, cyclesStart := processCPU(), idleCPU(), gcCycles()
		revStart, _ := kvEngine.Committed()
		rep, err := eng.Run(bg, Request{Mode: Direct, All: true})
		cpu += processCPU() - start
		revEnd, _ := kvEngine.Committed()
		commits += revEnd - revStart
		idle += idleCPU() - idleStart
		cycles += gcCycles() - cyclesStart
		if err != nil || len(rep.Success) != n {
			b.Fatalf("%v: %d migrated, failures %v", err, len(rep.Success), rep.Failures)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(idle/float64(b.N), "idle-P-s/op")
	b.ReportMetric(float64(cycles)/float64(b.N), "gc/op")
	b.ReportMetric(float64(commits)/float64(b.N), "commits/op")
}

// gcCycles is the number of garbage collections the process completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// copyFile copies the file at from to a new file at to, through a small
// buffer: the runs' heap holds nothing of the seeded store (kept in memory,
// it raised the collector's goal far above the binary's, which ran three
// times as many collections for the same migration: 26-28 against 8-9).
func copyFile(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err == nil {
		_, err = io.Copy(out, in)
		err = errors.Join(err, out.Close())
	}
	if err != nil {
		b.Fatal(err)
	}
}

// idleCPU is the runtime's count of the time its Ps had nothing to run
// (runtime/metrics /cpu/classes/idle:cpu-seconds): how much of the cores a
// run left unused, whatever other processes did with them meanwhile.
func idleCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/idle:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64()
}

// seededFile is the path of a bbolt store file holding docs as classic
// APIs, made once so that each run starts from a copy of it.
func seededFile(b *testing.B, docs [][]byte) string {
	path := filepath.Join(b.TempDir(), "seed.db")
	st, _ := openStore(b, path)
	seed(b, st, docs...)
	st.Close()
	return path
}

// BenchmarkReportJSON10k writes the report of BenchmarkDirect10k's
// migration: 10,000 APIs, each with the converter's warnings for the 4 KB
// benchmark input (about 12 MB), written after the last commit; as in a
// run, the warnings were encoded before (while the chunks were reported).
func BenchmarkReportJSON10k(b *testing.B) {
	tmpl, err := os.ReadFile(filepath.Join("..", "convert", "testdata", "bench-4k.json"))
	if err != nil {
		b.Fatal(err)
	}
	res, err := convert.Convert(tmpl, convert.Options{DBID: store.NewDBID()})
	if err != nil || len(res.Warnings) == 0 {
		b.Fatalf("convert: %v, %d warnings", err, len(res.Warnings))
	}
	r := newReport(Direct)
	for i := range 10000 {
		id := fmt.Sprintf("%032x", i+1)
		r.Success = append(r.Success, id)
		r.Warnings = append(r.Warnings, Warning{APIID: id, Messages: res.Warnings})
	}
	r.encodeWarnings()
	b.ReportAllocs()
	for b.Loop() {
		r.JSON()
	}
}

// openStore opens the management store on the bbolt file at path.
func openStore(b *testing.B, path string) (*store.Store, *boltkv.Engine) {
	e, err := boltkv.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(bg, e)
	if err != nil {
		b.Fatal(err)
	}
	return st, e
}
