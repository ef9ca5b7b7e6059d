package jsonesc

import (
	"encoding/json"
	"testing"
)

// TestAppend: every ASCII byte is escaped exactly when encoding/json
// escapes it (HTML escaping aside), with encoding/json's bytes.
func TestAppend(t *testing.T) {
	for c := range byte(0x80) {
		want, _ := json.Marshal(string(rune(c)))
		want = want[1 : len(want)-1]
		if c == '<' || c == '>' || c == '&' {
			continue // HTML escaping, which neither writer does
		}
		if got := Needed(c); got != (len(want) > 1) {
			t.Errorf("%q: Needed %v, encoding/json writes %s", c, got, want)
		}
		if Needed(c) {
			if got := Append(nil, c); string(got) != string(want) {
				t.Errorf("%q: %s, want %s", c, got, want)
			}
		}
	}
}
