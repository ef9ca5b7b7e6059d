package convert

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func timeDuration(ns int64) time.Duration { return time.Duration(ns) }

// FuzzConvert: any input either converts into documents that pass validation, or fails with a *Failure.
func FuzzConvert(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, in := range inputs {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version_data":{"versions":{"":null}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := Convert(raw, Options{DBID: "db"})
		if err != nil {
			var fl *Failure
			if !errors.As(err, &fl) || len(fl.Messages) == 0 {
				t.Fatalf("want a *Failure with messages, got %T %v", err, err)
			}
			return
		}
		expectValidDocument(t, "base", res.Base.JSON)
		for _, v := range res.Versions {
			expectValidDocument(t, "version "+v.Name, v.JSON)
		}
	})
}
