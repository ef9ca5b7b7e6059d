package jsonstrict

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// page is a shape with a field of each kind and a field under two names
// ("n" and "number" are the same field).
var page = &Shape{Type: Object, Member: func(key string) (*Shape, int) {
	switch key {
	case "title":
		return &Shape{Type: String}, 1
	case "n", "number":
		return &Shape{Type: Integer, Bits: 32, Unsigned: true}, 2
	case "ratio":
		return &Shape{Type: Number, Bits: 32}, 3
	case "on":
		return &Shape{Type: Bool}, 4
	case "tags":
		return &Shape{Type: Array, Elem: &Shape{Type: String}}, 5
	case "labels":
		return &Shape{Type: Map, Elem: &Shape{Type: String}}, 6
	case "kind":
		return &Shape{Type: StringOrNumber}, 7
	case "extra":
		return AnyValue, 8
	}
	return nil, 0
}}

func TestCheckReportsEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []string // each problem's words, in order
	}{
		{`{}`, nil},
		{`{"title":"t","n":1e3,"ratio":1.5,"on":false,"tags":["a"],"labels":{"x":"y"},"kind":2,"extra":[null,{"a":1}],"other":{}}`, nil},
		{`{"title":null,"n":null,"tags":null,"labels":null}`, nil}, // null: absent
		{``, []string{"the request body is empty"}},
		{" \t\n", []string{"the request body is empty"}},
		{"{\"title\":\"\xff\"}", []string{"the request body is not valid UTF-8"}},
		{`null`, []string{"the request body must be a JSON object, not null"}},
		{`[]`, []string{"must be an object, not an array"}},
		{`{"title":1,"n":"1","on":"true","tags":{},"labels":[],"kind":true}`, []string{
			"title: must be a string, not a number", "n: must be a whole number, not a string",
			"on: must be true or false, not a string", "tags: must be an array, not an object",
			"labels: must be an object, not an array", "kind: must be a string, not a boolean"}},
		{`{"n":-1,"ratio":1e39}`, []string{"n: number out of range", "ratio: number out of range"}},
		{`{"n":1.5}`, []string{"n: must be a whole number"}},
		{`{"tags":["a",null,2],"labels":{"k":null}}`, []string{
			"tags[1]: must not be null", "tags[2]: must be a string, not a number", "labels.k: must not be null"}},
		{`{"title":"a","title":"b"}`, []string{"title: duplicate key"}},
		{`{"n":1,"number":2}`, []string{"number: duplicate key (the field is named twice)"}},
		{`{"extra":{"a":1,"a":2},"other":{"b":[{"c":1,"c":1}]}}`, []string{"extra.a: duplicate key", "other.b[0].c: duplicate key"}},
		{`{"title":{"a":1,"a":2}}`, []string{"title: must be a string, not an object", "title.a: duplicate key"}},
		{`{"extra":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `,"n":"x"}`, []string{
			"extra" + strings.Repeat("[0]", MaxDepth-1) + ": nested more than 100 levels deep", "n: must be a whole number, not a string"}},
		{`{"title":1,"n":`, []string{"title: must be a string, not a number", "the request body is not valid JSON: unexpected EOF"}},
		{`{"title":"a"} x`, []string{"the request body is not valid JSON: data after the first JSON value"}},
		{`{"title":"a"}{}`, []string{"the request body is not valid JSON: data after the first JSON value"}},
	} {
		var got []string
		var e *Error
		if err := Check([]byte(tc.body), page); errors.As(err, &e) {
			for _, p := range e.Problems {
				got = append(got, p.Error())
			}
		} else if err != nil {
			t.Fatalf("%s: %v is not an *Error", tc.body, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.body, got, tc.want)
		}
	}
}

func TestCheckProblemFields(t *testing.T) {
	err := Check([]byte(`{"tags":["a",7]}`), page)
	if p := First(err); p == nil || *p != (Problem{Path: "tags[1]", Kind: WrongType, Want: "a string", Got: "a number"}) {
		t.Errorf("got %+v, want tags[1] WrongType", p)
	}
	if First(nil) != nil || First(errors.New("x")) != nil {
		t.Error("First of no *Error is not nil")
	}
}

// The offset of a syntax problem is where encoding/json's Unmarshal puts it.
func TestCheckSyntaxOffset(t *testing.T) {
	for _, body := range []string{`{"a":`, `{"a":1} x`, `{"a":tru}`, `[1,]`, `{"a":1,"a":2,`} {
		var raw json.RawMessage
		var syntax *json.SyntaxError
		if !errors.As(json.Unmarshal([]byte(body), &raw), &syntax) {
			t.Fatalf("%s: encoding/json finds no syntax error", body)
		}
		var e *Error
		if !errors.As(Check([]byte(body), nil), &e) {
			t.Fatalf("%s: accepted", body)
		}
		last := e.Problems[len(e.Problems)-1]
		if (last.Kind != Syntax && last.Kind != Trailing) || last.Offset != syntax.Offset {
			t.Errorf("%s: last problem %+v, want a syntax problem at %d", body, last, syntax.Offset)
		}
	}
}

func TestCheckAnyValue(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"a":1}`: true, `[1,2]`: true, `"x"`: true, `null`: true, `1 2`: false, `{"a":1,"a":2}`: false,
		`{"a":{"b":1,"b":1}}`: false, ``: false, strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth): true,
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1): false,
	} {
		if err := Check([]byte(body), nil); (err == nil) != ok {
			t.Errorf("Check(%.20s, any) = %v, want ok=%v", body, err, ok)
		}
	}
}

func TestIntegers(t *testing.T) {
	for _, tc := range []struct {
		lit    string
		bits   int
		signed bool
		want   Kind
	}{
		{"0", 32, true, 0}, {"-0", 32, false, 0}, {"2147483647", 32, true, 0}, {"2147483648", 32, true, OutOfRange},
		{"-2147483648", 32, true, 0}, {"-2147483649", 32, true, OutOfRange}, {"4294967295", 32, false, 0},
		{"4294967296", 32, false, OutOfRange}, {"-1", 32, false, OutOfRange}, {"1e3", 32, true, 0}, {"1.5", 32, true, NotWhole},
		{"1e400", 32, true, OutOfRange}, {"9007199254740993", 64, true, 0}, {"18446744073709551616", 64, false, OutOfRange},
		{"18446744073709551615", 64, false, 0}, {"9223372036854775808", 64, true, OutOfRange},
		{"1.8446744073709552e19", 64, false, OutOfRange}, {"9.223372036854775807e18", 64, true, OutOfRange},
		{"-9.223372036854775808e18", 64, true, 0},
	} {
		if got := checkInt(tc.lit, tc.bits, tc.signed); got != tc.want {
			t.Errorf("checkInt(%s, %d, signed %v) = %d, want %d", tc.lit, tc.bits, tc.signed, got, tc.want)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"title":"a","tags":["b"]}`, `{"n":"1"}`, `{} x`, `{"extra":[[[{}]]]}`, `{"labels":{"k":"a","k":"b"}}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Check(data, page)
		var e *Error
		if err != nil && (!errors.As(err, &e) || len(e.Problems) == 0) {
			t.Fatalf("%q: %v is not an *Error with problems", data, err)
		}
		if err == nil && (!json.Valid(data) || Check(data, nil) != nil) {
			t.Fatalf("accepted %q, which is not one valid JSON value", data)
		}
		if Check(data, nil) == nil && !json.Valid(data) {
			t.Fatalf("any value: accepted %q, which is not JSON", data)
		}
	})
}

func TestBounds(t *testing.T) {
	free := &Shape{Type: Object, Member: func(key string) (*Shape, int) {
		if key == "metadata" {
			return &Shape{Type: Object, FreeForm: true}, 1
		}
		return nil, 0
	}}
	members := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%d":[]`, i)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	for _, c := range []struct {
		name, doc string
		shape     *Shape
		want      Kind // 0: no problem
		path      string
	}{
		{"1,000 members", `{"metadata":` + members(MaxFreeMembers) + `}`, free, 0, ""},
		{"1,001 members", `{"metadata":` + members(MaxFreeMembers+1) + `}`, free, FreeTooLarge, "metadata"},
		{"nested members count", `{"metadata":{"a":[` + strings.Repeat(`1,`, MaxFreeMembers-1) + `1]}}`, free, FreeTooLarge, "metadata"},
		{"64 KiB", `{"metadata":{"s":"` + strings.Repeat("x", MaxFreeBytes-8) + `"}}`, free, 0, ""},
		{"over 64 KiB", `{"metadata":{"s":"` + strings.Repeat("x", MaxFreeBytes) + `"}}`, free, FreeTooLarge, "metadata"},
		{"not free-form", `{"other":` + members(MaxFreeMembers+1) + `}`, free, 0, ""},
		{"1,000,000 values", "[" + strings.Repeat("1,", MaxValues-2) + "1]", nil, 0, ""},
		{"1,000,001 values", "[" + strings.Repeat("1,", MaxValues-1) + "1]", nil, TooManyValues, ""},
	} {
		p := First(Check([]byte(c.doc), c.shape))
		switch {
		case c.want == 0 && p != nil:
			t.Errorf("%s: %v, want no problem", c.name, p)
		case c.want != 0 && (p == nil || p.Kind != c.want || p.Path != c.path):
			t.Errorf("%s: %+v, want kind %d at %q", c.name, p, c.want, c.path)
		}
	}
	p := First(Check([]byte(`{"metadata":`+members(MaxFreeMembers+1)+`}`), free))
	if got, want := p.Error(), "metadata: too large: at most 1000 members and elements in all, and 64 KiB"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
