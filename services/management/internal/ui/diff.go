package ui

import (
	"bytes"
	"encoding/json"
	"strings"
)

// diff is a classic definition beside its Tyk OAS document, one line per
// row of each, pretty-printed. The two documents have different shapes,
// so a line is marked when it carries a value (a string or a number) that
// the other document does not hold anywhere: a setting dropped, added or
// changed by the conversion. Values carried over under another name stay
// unmarked.
type diff struct {
	Classic, OAS   []diffLine
	Dropped, Added int // marked lines of each side
}

type diffLine struct {
	Text   string
	Marked bool
}

// maxDiffBytes bounds the documents compared; a larger one is shown
// without marks.
const maxDiffBytes = 1 << 20

func compare(classic, oas []byte) *diff {
	l, r := prettyLines(classic), prettyLines(oas)
	d := &diff{Classic: make([]diffLine, len(l)), OAS: make([]diffLine, len(r))}
	mark := len(classic)+len(oas) <= maxDiffBytes
	lv, rv := valueSet(l), valueSet(r)
	for i, s := range l {
		d.Classic[i].Text = s
		if v, ok := lineValue(s); ok && mark && !rv[v] {
			d.Classic[i].Marked = true
			d.Dropped++
		}
	}
	for i, s := range r {
		d.OAS[i].Text = s
		if v, ok := lineValue(s); ok && mark && !lv[v] {
			d.OAS[i].Marked = true
			d.Added++
		}
	}
	return d
}

func prettyLines(b []byte) []string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return strings.Split(string(b), "\n")
	}
	return strings.Split(out.String(), "\n")
}

func valueSet(lines []string) map[string]bool {
	set := make(map[string]bool, len(lines))
	for _, s := range lines {
		if v, ok := lineValue(s); ok {
			set[v] = true
		}
	}
	return set
}

// lineValue is the scalar a pretty-printed line carries: a string (its
// text) or a number; ok is false for structure, booleans and null, which
// say too little to compare.
func lineValue(line string) (string, bool) {
	s := strings.TrimSuffix(strings.TrimSpace(line), ",")
	if strings.HasPrefix(s, `"`) {
		// "key": value, or a string in an array
		var key string
		dec := json.NewDecoder(strings.NewReader(s))
		if err := dec.Decode(&key); err != nil {
			return "", false
		}
		rest := strings.TrimSpace(s[dec.InputOffset():])
		if !strings.HasPrefix(rest, ":") {
			return "s:" + key, true
		}
		s = strings.TrimSpace(rest[1:])
	}
	switch {
	case s == "" || s == "true" || s == "false" || s == "null" || strings.ContainsAny(s[:1], "{}[]"):
		return "", false
	case strings.HasPrefix(s, `"`):
		var v string
		if json.Unmarshal([]byte(s), &v) != nil || v == "" {
			return "", false
		}
		return "s:" + v, true
	}
	return "n:" + s, true
}
