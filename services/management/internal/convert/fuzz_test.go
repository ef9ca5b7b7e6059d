package convert

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
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

// FuzzReadable holds readableSeconds and readableFull to the schema's expressions for readable durations.
func FuzzReadable(f *testing.F) {
	seconds := regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+s)?$`)
	full := regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+s)?(\d+ms)?(\d+µs)?(\d+ns)?$`)
	for _, s := range []string{"", "0s", "1h2m3s", "10ms", "1m10ms", "1h1h", "1s1m", "5µs", "7ns", "1ms2µs3ns", "m", "1", "1x", "1hs",
		"1h\n", "١s", "1h2m3s4ms5µs6ns", "1h 2m", "01m", "1m1ms1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := readableSeconds(s), seconds.MatchString(s); got != want {
			t.Errorf("readableSeconds(%q) = %v, want %v", s, got, want)
		}
		if got, want := readableFull(s), full.MatchString(s); got != want {
			t.Errorf("readableFull(%q) = %v, want %v", s, got, want)
		}
	})
}
