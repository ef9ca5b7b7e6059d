package convert

import (
	stdjson "encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"
)

// The converter decodes classic definitions with goccy/go-json for speed
// (BenchmarkConvert). These tests hold it to encoding/json's behaviour: the
// same input must give the same classicAPI, or both must refuse it.

func sameDecoding(t *testing.T, raw []byte) {
	t.Helper()
	var fast, std classicAPI
	errFast := json.Unmarshal(raw, &fast)
	errStd := stdjson.Unmarshal(raw, &std)
	if (errFast == nil) != (errStd == nil) {
		// encoding/json rejects some inputs that are valid for goccy only when
		// they are not JSON at all; accepting garbage that std refuses is a difference
		t.Fatalf("decoders disagree on %q: goccy %v, encoding/json %v", raw, errFast, errStd)
	}
	if errStd == nil && !reflect.DeepEqual(fast, std) {
		t.Fatalf("decoders give different results for %q:\ngoccy %+v\nstd   %+v", raw, fast, std)
	}
}

func TestDecoderMatchesEncodingJSON(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	if len(inputs) == 0 {
		t.Fatal("no classic definitions in testdata")
	}
	for _, in := range inputs {
		raw, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(in), func(t *testing.T) { sameDecoding(t, raw) })
	}
	for _, raw := range []string{
		`{"NAME":"case","Api_ID":"x"}`,          // field names match case-insensitively
		`{"name":"a","name":"b"}`,               // the last duplicate wins
		`{"name":null,"proxy":null}`,            // null leaves zero values
		`{"version_data":{"versions":{"":{}}}}`, // empty version key
		`{"name":"\u00e9\ud83d\ude00"}`,         // escapes and surrogate pairs
		`{"proxy":{"listen_path":"/a"}} `,       // trailing space
		`{"global_rate_limit":{"rate":1e2}}`,    // exponent
		`{"name":"x"} {"name":"y"}`,             // two values
	} {
		sameDecoding(t, []byte(raw))
	}
}

func FuzzDecoderMatchesEncodingJSON(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, in := range inputs {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !stdjson.Valid(raw) {
			return // stored definitions are always valid JSON
		}
		sameDecoding(t, raw)
	})
}
