package convert

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestZZDump(t *testing.T) {
	dir := os.Getenv("DUMP")
	if dir == "" {
		t.Skip()
	}
	os.MkdirAll(dir+"/in", 0o755)
	os.MkdirAll(dir+"/ours", 0o755)
	n := 0
	dump := func(name string, raw []byte, opts Options) {
		res, err := Convert(raw, opts)
		if err != nil {
			return
		}
		for i, d := range append([]Document{res.Base}, res.Versions...) {
			derived, err := ToClassic(d.JSON)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			base := name + "." + string(rune('0'+i))
			os.WriteFile(filepath.Join(dir, "in", base+".json"), d.JSON, 0o644)
			os.WriteFile(filepath.Join(dir, "ours", base+".json"), derived, 0o644)
			n++
		}
	}
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		raw, _ := os.ReadFile(in)
		dump("td-"+name, raw, Options{Staging: strings.HasPrefix(name, "staging-")})
	}
	for _, e := range tykClassicCases {
		if e.wantFailure {
			continue
		}
		var input any
		json.Unmarshal([]byte(e.input), &input)
		def := fixtureClassic(toJSONValue(t, input), "f1x7ur3a0000000000000000000000aa", "Fixture", "/fixture/", false)
		dump("fx-"+strings.ReplaceAll(e.name, "/", "_"), mustMarshal(t, def), Options{DBID: "0123456789abcdef01234567"})
	}
	t.Logf("%d documents", n)
}
