package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSet(t *testing.T) {
	tests := []struct {
		doc, value string
		path       []string
		want       string
	}{
		{`{"a":1}`, `"x"`, []string{"b"}, `{"a":1,"b":"x"}`},
		{`{"a":1,"b":2}`, `3`, []string{"a"}, `{"a":3,"b":2}`},
		{` { "a" : { } } `, `true`, []string{"a", "b"}, ` { "a" : {"b":true} } `},
		{`{"a":{"x":9007199254740993}}`, `"d"`, []string{"a", "y"}, `{"a":{"x":9007199254740993,"y":"d"}}`},
		{`{}`, `1`, []string{"a", "b", "c"}, `{"a":{"b":{"c":1}}}`},
		{`{"z":0}`, `1`, []string{"a", "b"}, `{"z":0,"a":{"b":1}}`},
		{`{"a":"}{\"","b":[1,{"c":2}]}`, `null`, []string{"b"}, `{"a":"}{\"","b":null}`},
		{`{"a":1,"a":2}`, `3`, []string{"a"}, `{"a":1,"a":3}`},
	}
	for _, tt := range tests {
		got, err := Set([]byte(tt.doc), []byte(tt.value), tt.path...)
		if err != nil || string(got) != tt.want {
			t.Errorf("Set(%s, %v, %s) = %s, %v; want %s", tt.doc, tt.path, tt.value, got, err, tt.want)
		}
	}
	if _, err := Set([]byte(`{"a":[1]}`), []byte(`1`), "a", "b"); err == nil {
		t.Error("Set into an array: want an error")
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		doc  string
		path []string
		want string
	}{
		{`{"a":1,"b":2,"c":3}`, []string{"b"}, `{"a":1,"c":3}`},
		{`{"a":1,"b":2}`, []string{"b"}, `{"a":1}`},
		{`{"a":1,"b":2}`, []string{"a"}, `{"b":2}`},
		{`{ "a" : 1 }`, []string{"a"}, `{ }`},
		{"{\n  \"x\": {\"a\": 1},\n  \"y\": 2\n}", []string{"x"}, "{\n  \"y\": 2\n}"},
		{`{"i":{"x":1},"x":2}`, []string{"x"}, `{"i":{"x":1}}`},
		{`{"x":1,"y":2,"x":3}`, []string{"x"}, `{"y":2}`},
		{`{"a":1}`, []string{"nope"}, `{"a":1}`},
	}
	for _, tt := range tests {
		got, _, err := Delete([]byte(tt.doc), tt.path...)
		if err != nil || string(got) != tt.want || !json.Valid(got) {
			t.Errorf("Delete(%s, %v) = %s, %v; want %s", tt.doc, tt.path, got, err, tt.want)
		}
	}
}

func TestLookupAndMembers(t *testing.T) {
	doc := []byte(`{"a":{"b":[1,2],"c":"\u00e9\"}"},"d":-1.5e3}`)
	for path, want := range map[string]string{"a.b": `[1,2]`, "a.c": `"\u00e9\"}"`, "d": `-1.5e3`} {
		got, ok, err := Lookup(doc, splitDots(path)...)
		if !ok || err != nil || string(got) != want {
			t.Errorf("Lookup %s = %s %v %v, want %s", path, got, ok, err, want)
		}
	}
	if s, ok := String([]byte(`"\u00e9\"}"`)); !ok || s != "é\"}" {
		t.Errorf("String: %q %v", s, ok)
	}
	for _, bad := range []string{`[]`, `{"a"}`, `{"a":1,}`, `{"a":1`, `"x"`} {
		if _, err := Members([]byte(bad)); err == nil {
			t.Errorf("Members(%s): want an error", bad)
		}
	}
	if string(Quote("<&>")) != `"<&>"` {
		t.Errorf("Quote escapes HTML: %s", Quote("<&>"))
	}
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// FuzzEdit: on any valid JSON object, Set and Delete give valid JSON that
// holds the edit.
func FuzzEdit(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"x":{"a":[{"b":"}"}]},"a":{}}`, ` {"a" : "\"" } `} {
		f.Add([]byte(s), "a")
	}
	f.Fuzz(func(t *testing.T, doc []byte, key string) {
		if !json.Valid(doc) || !utf8.ValidString(key) {
			return
		}
		if _, err := Members(doc); err != nil {
			return
		}
		set, err := Set(doc, []byte(`"v"`), key, "k")
		if err != nil {
			return // the key holds a non-object
		}
		if !json.Valid(set) {
			t.Fatalf("Set gave invalid JSON: %s", set)
		}
		if v, ok, _ := Lookup(set, key, "k"); !ok || string(v) != `"v"` {
			t.Fatalf("Set then Lookup: %s %v in %s", v, ok, set)
		}
		del, _, err := Delete(set, key)
		if err != nil || !json.Valid(del) {
			t.Fatalf("Delete: %v %s", err, del)
		}
		if _, ok, _ := Lookup(del, key); ok {
			t.Fatalf("Delete left %q in %s", key, del)
		}
	})
}

// TestEach: each member's key (escapes decoded) and value in order; no
// members for another value; fn's error ends the walk.
func TestEach(t *testing.T) {
	var got []string
	err := Each([]byte(` { "a" : 1 , "\u0062":{"c":[2]},"d":"x" } `), func(key, value []byte) error {
		got = append(got, string(key)+"="+string(value))
		return nil
	})
	if want := []string{"a=1", `b={"c":[2]}`, `d="x"`}; err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Each: %q, %v; want %q", got, err, want)
	}
	for _, v := range []string{`[]`, `1`, `{}`, ` `} {
		if err := Each([]byte(v), func(_, _ []byte) error { t.Errorf("%s: a member", v); return nil }); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := Each([]byte(`{"a":1,"b":2}`), func(_, _ []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("stopped: %v after %d members", err, n)
	}
}

// TestAppendQuoteAsEncodingJSON: every byte, alone and amid text, and
// strings of several runes (invalid UTF-8, U+2028) quote as encoding/json's
// encoder without HTML escaping writes them, appended after what dst holds.
func TestAppendQuoteAsEncodingJSON(t *testing.T) {
	var inputs []string
	for c := range 256 {
		inputs = append(inputs, string(rune(c)), string([]byte{byte(c)}), "api-"+string([]byte{byte(c)})+"-1")
	}
	inputs = append(inputs, "", "plain text, (1) #tag <&> ~", "line\u2028sep\u2029", "é", "\xff\xfe", "tab\there", `q"b\s`)
	for _, s := range inputs {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := "x" + strings.TrimSuffix(b.String(), "\n")
		if got := string(AppendQuote([]byte("x"), s)); got != want {
			t.Errorf("AppendQuote(%q) = %s, want %s", s, got, want)
		}
	}
}

// FuzzAppendQuote holds AppendQuote to encoding/json's encoder without
// HTML escaping, byte for byte, for any string (invalid UTF-8 included).
func FuzzAppendQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "é\u2028\u2029\x7f\x00\x1f", "\xff\xfe\xe2\x80", `q"b\s` + "\t\b\f\r\n", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := string(AppendQuote([]byte("x"), s)), "x"+strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Errorf("AppendQuote(%q) = %s, want %s", s, got, want)
		}
	})
}

// FuzzFind holds Find to encoding/json: in a valid object it finds the
// member a decoder keeps (the last of its name, escapes decoded) and
// nothing else.
func FuzzFind(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":[2]}`, `{"\u0061":{"b":"}"},"é":1}`, ` {"a\"" : "\"" } `} {
		f.Add([]byte(s), "a")
	}
	f.Fuzz(func(t *testing.T, doc []byte, key string) {
		var want map[string]json.RawMessage
		if !utf8.Valid(doc) || json.Unmarshal(doc, &want) != nil || want == nil {
			return
		}
		m, found, err := Find(doc, key)
		v, ok := want[key]
		if err != nil || found != ok {
			t.Fatalf("Find(%s, %q): found %v, %v; encoding/json %v", doc, key, found, err, ok)
		}
		if found && (m.Key != key || !bytes.Equal(doc[m.ValueStart:m.ValueEnd], bytes.TrimSpace(v))) {
			t.Fatalf("Find(%s, %q): %+v (%s), encoding/json %s", doc, key, m, doc[m.ValueStart:m.ValueEnd], v)
		}
	})
}

// setInTurn is SetMembers' reference: Set for each key in turn.
func setInTurn(doc []byte, keys []string, values [][]byte) ([]byte, error) {
	var err error
	for i, k := range keys {
		if doc, err = Set(doc, values[i], k); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// TestSetMembers: the same bytes as Set of each key in turn, for present,
// repeated, escaped and absent keys, in any order, and the same errors.
func TestSetMembers(t *testing.T) {
	keys := []string{"api_id", "id", "is_oas"}
	values := [][]byte{[]byte(`"a1"`), []byte(`"5f0c"`), []byte(`true`)}
	for _, doc := range []string{
		`{}`, ` { } `, `{"name":"x"}`, `{"id":1,"name":"x","api_id":"old"}`,
		`{"api_id":"old","x":{"id":2},"is_oas":false,"api_id":"twice"}`,
		"{\n  \"is_oas\" : false ,\n  \"b\": [1, {\"api_id\": 3}]\n}\n",
		`{"\u0069d":"escaped","is_oas":null}`, `{"id":{"deep":[1,2,{"id":3}]}}`,
		`[]`, `"s"`, `{"a":}`, `{"a":1`,
	} {
		for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}, {1}} {
			var ks []string
			var vs [][]byte
			for _, i := range order {
				ks, vs = append(ks, keys[i]), append(vs, values[i])
			}
			want, wantErr := setInTurn([]byte(doc), ks, vs)
			got, err := SetMembers([]byte(doc), ks, vs)
			if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
				t.Errorf("%s, keys %q:\n got %s (%v)\nwant %s (%v)", doc, ks, got, err, want, wantErr)
			}
		}
	}
}

func FuzzSetMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"b":{"a":[{"b":"}"}]},"a":{}}`, ` {"a" : "\"" , "c":2, "a":3} `} {
		f.Add([]byte(s), "a", "b", "c")
	}
	f.Fuzz(func(t *testing.T, doc []byte, k1, k2, k3 string) {
		if !json.Valid(doc) || k1 == k2 || k2 == k3 || k1 == k3 {
			return
		}
		keys := []string{k1, k2, k3}
		values := [][]byte{[]byte(`"v1"`), []byte(`2`), []byte(`{"v":3}`)}
		want, wantErr := setInTurn(doc, keys, values)
		got, err := SetMembers(doc, keys, values)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%s, keys %q:\n got %s (%v)\nwant %s (%v)", doc, keys, got, err, want, wantErr)
		}
	})
}
