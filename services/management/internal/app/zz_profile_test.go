package app

import (
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkZZMigrateInProcess(b *testing.B) {
	seeded := filepath.Join(b.TempDir(), "seed.db")
	seedClassic(b, seeded, 10000)
	template, _ := os.ReadFile(seeded)
	for b.Loop() {
		b.StopTimer()
		db := filepath.Join(b.TempDir(), "m.db")
		os.WriteFile(db, template, 0o600)
		in := start(b, db)
		b.StartTimer()
		r := in.admin("POST", "/api/apis/migrate", `{"mode":"direct","all":true}`)
		b.StopTimer()
		if r.status != 200 {
			b.Fatal(r.status)
		}
		in.stop()
		b.StartTimer()
	}
}
