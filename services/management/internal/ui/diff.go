package ui

import (
	"bytes"
	"encoding/json"
	"html"
	"html/template"
	"strings"
)

// diff is a classic definition beside its Tyk OAS document, one line per
// row of each, pretty-printed. The two documents have different shapes,
// so a line is marked when it carries a value (a string or a number) that
// the other document does not hold anywhere: a setting dropped, added or
// changed by the conversion. Values carried over under another name stay
// unmarked.
type diff struct {
	// Classic and OAS are the documents as escaped HTML, a span per line,
	// class "ln chg" when marked (written here rather than by a template
	// loop: a dry run of 100 APIs shows some 20,000 lines).
	Classic, OAS   template.HTML
	Dropped, Added int // marked lines of each side
}

// maxDiffBytes bounds the documents compared; a larger one is shown
// without marks.
const maxDiffBytes = 1 << 20

func compare(classic, oas []byte) *diff {
	l, r := prettyLines(classic), prettyLines(oas)
	mark := len(classic)+len(oas) <= maxDiffBytes
	d := &diff{}
	d.Classic, d.Dropped = markLines(l, valueSet(r), mark)
	d.OAS, d.Added = markLines(r, valueSet(l), mark)
	return d
}

// markLines writes lines as spans, marking those whose value other lacks.
func markLines(lines []string, other map[string]bool, mark bool) (template.HTML, int) {
	var b strings.Builder
	n := 0
	for _, s := range lines {
		v, ok := lineValue(s)
		if ok && mark && !other[v] {
			b.WriteString(`<span class="ln chg">`)
			n++
		} else {
			b.WriteString(`<span class="ln">`)
		}
		b.WriteString(html.EscapeString(s))
		b.WriteString("</span>")
	}
	return template.HTML(b.String()), n
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
		end := stringEnd(s)
		if end < 0 {
			return "", false
		}
		rest := strings.TrimSpace(s[end:])
		if !strings.HasPrefix(rest, ":") {
			return stringValue(s[:end]) // a string in an array
		}
		s = strings.TrimSpace(rest[1:]) // "key": value
	}
	switch {
	case s == "" || s == "true" || s == "false" || s == "null" || strings.ContainsAny(s[:1], "{}[]"):
		return "", false
	case s[0] == '"':
		return stringValue(s)
	}
	return "n:" + s, true
}

// stringEnd is the index just past the JSON string s starts with, -1 when
// it does not end.
func stringEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// stringValue is a JSON string's text ("" strings say nothing); escapes
// are decoded only where there are some.
func stringValue(q string) (string, bool) {
	if len(q) <= 2 {
		return "", false
	}
	if !strings.Contains(q, "\\") {
		return "s:" + q[1:len(q)-1], true
	}
	var v string
	if json.Unmarshal([]byte(q), &v) != nil {
		return "", false
	}
	return "s:" + v, true
}
