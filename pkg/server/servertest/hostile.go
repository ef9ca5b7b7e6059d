package servertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Hostile sends malformed and hostile REST requests to one service and
// checks, after each, that the answer is not a 5xx and that a refused
// request (4xx) left the store byte for byte as it was: the answers of the
// Snapshot paths, read through the API, are compared before and after. An
// accepted request (2xx) becomes the new baseline.
type Hostile struct {
	T    testing.TB
	Base string
	// Auth is added to every request that does not set Authorization itself.
	Auth string
	// Snapshot lists GET paths whose answers together are the store's state.
	Snapshot []string

	client *http.Client
	before string
	// Sent counts the requests sent; Refused those answered 4xx.
	Sent, Refused int
}

// Request is one request of the suite.
type Request struct {
	Name   string
	Method string
	Path   string // percent-encoded as sent
	Header http.Header
	Body   []byte
	// MustRefuse: the request is wrong and must be answered 4xx.
	MustRefuse bool
	// Want, when set, is the exact status it must get.
	Want int
	// Undo, when set, is called after the request was accepted (2xx), to
	// remove what it created, before the next snapshot is taken.
	Undo func(h *Hostile, header http.Header, body []byte)
}

// Begin takes the first snapshot, after the set-up (Do).
func (h *Hostile) Begin() {
	h.init()
	h.before = h.snapshot()
}

func (h *Hostile) init() {
	if h.client == nil {
		h.client = &http.Client{Timeout: 60 * time.Second}
	}
}

func (h *Hostile) snapshot() string {
	var b strings.Builder
	for _, p := range h.Snapshot {
		req, _ := http.NewRequest(http.MethodGet, h.Base+p, nil)
		req.Header.Set("Authorization", h.Auth)
		res, err := h.client.Do(req)
		if err != nil {
			h.T.Fatalf("snapshot %s: %v", p, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			h.T.Fatalf("snapshot %s: %d %s", p, res.StatusCode, body)
		}
		fmt.Fprintf(&b, "%s %s %s\n%s\n", p, res.Header.Get("X-Total-Count"), res.Header.Get("X-Total-Pages"), body)
	}
	return b.String()
}

// Send sends r and checks the answer and the store; it returns the status
// and body.
func (h *Hostile) Send(r Request) (int, []byte) {
	h.T.Helper()
	req, err := http.NewRequest(r.Method, h.Base+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		h.T.Fatalf("%s: %v", r.Name, err)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	if req.Header.Get("Authorization") == "" && h.Auth != "" {
		req.Header.Set("Authorization", h.Auth)
	}
	h.Sent++
	res, err := h.client.Do(req)
	if err != nil {
		h.T.Errorf("%s %s %s: %v", r.Name, r.Method, r.Path, err)
		return 0, nil
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	show := body
	if len(show) > 300 {
		show = append(show[:300:300], "..."...)
	}
	h.judge(r, res.StatusCode, show)
	if res.StatusCode < 300 && r.Undo != nil {
		r.Undo(h, res.Header, body)
	}
	after := h.snapshot()
	if res.StatusCode >= 400 {
		h.Refused++
		if after != h.before {
			h.T.Errorf("%s: %s %s was refused (%d %s) but the store changed", r.Name, r.Method, r.Path, res.StatusCode, show)
		}
	}
	h.before = after
	return res.StatusCode, body
}

// judge fails the test when the answer breaks r's expectations.
func (h *Hostile) judge(r Request, code int, show []byte) {
	h.T.Helper()
	switch {
	case code >= 500:
		h.T.Errorf("%s: %s %s answered %d %s", r.Name, r.Method, r.Path, code, show)
	case r.Want != 0 && code != r.Want:
		h.T.Errorf("%s: %s %s answered %d %s, want %d", r.Name, r.Method, r.Path, code, show, r.Want)
	case r.MustRefuse && code < 400:
		h.T.Errorf("%s: %s %s was accepted (%d %s), want a 4xx", r.Name, r.Method, r.Path, code, show)
	}
}

// Do sends a request without the checks, for set-up and undoing; it fails
// the test unless the answer is a 2xx.
func (h *Hostile) Do(method, path string, body []byte) []byte {
	h.T.Helper()
	h.init()
	req, _ := http.NewRequest(method, h.Base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", h.Auth)
	res, err := h.client.Do(req)
	if err != nil {
		h.T.Fatalf("%s %s: %v", method, path, err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode >= 300 {
		h.T.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return b
}

// Mutation is a body derived from a valid one.
type Mutation struct {
	Name string
	Body []byte
	// Wrong: the body breaks a rule every body follows (one JSON value,
	// the types of the fields the service reads) and must be refused.
	Wrong bool
}

// Mutations derives hostile bodies from valid, a JSON object: each member
// in turn given every other JSON type, numbers at and past every bound,
// trailing data, duplicate keys, deep nesting, huge arrays and strings,
// invalid UTF-8. Members under a free path (stored verbatim, such as
// "api_definition") may take any type, so changing them is not Wrong.
func Mutations(valid string, free ...string) []Mutation {
	root, err := parse([]byte(valid))
	if err != nil {
		panic(fmt.Sprintf("Mutations: %v", err))
	}
	isFree := func(path string) bool { return under(path, free) }
	out := wholeBodyMutations(valid)
	add := func(name string, body []byte, wrong bool) {
		out = append(out, Mutation{Name: name, Body: body, Wrong: wrong})
	}
	walk(root, "", func(path string, v any, set func(any)) {
		wrongType := !isFree(path)
		name := func(what string) string { return fmt.Sprintf("%s %s", orRoot(path), what) }
		render := func(nv any) []byte {
			if path == "" {
				return marshal(nv)
			}
			set(nv)
			defer set(v)
			return marshal(root)
		}
		for _, alt := range alternatives(v) {
			if path != "" { // the body as a whole is above
				add(name("as "+describe(alt)), render(alt), wrongType)
			}
		}
		if obj, ok := v.(object); ok && len(obj) > 0 {
			dup := append(object{obj[0]}, obj...)
			add(name("with duplicate key "+strconv.Quote(obj[0].k)), render(dup), !isFree(path) || path == "")
		}
		switch v := v.(type) {
		case json.Number:
			for _, n := range []string{"-0", "-1", "0.5", "1e3", "1e400", "2147483648", "9007199254740993", "18446744073709551616"} {
				add(name("= "+n), render(json.Number(n)), false)
			}
		case string:
			add(name("with invalid UTF-8"), render(rawJSON("\"\xff\xfe\"")), true)
			add(name("with NUL and controls"), render("a\u0000b\u001f"), false)
		case []any:
			if len(v) > 0 {
				add(name("with a null element"), render(append([]any{nil}, v...)), wrongType)
			}
		}
	})
	return out
}

func orRoot(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// alternatives are the values of other JSON types than v's.
func alternatives(v any) []any {
	all := map[string]any{"string": "10", "number": json.Number("10"), "boolean": true, "object": object{}, "array": []any{}}
	mine := describe(v)
	var out []any
	for _, k := range []string{"string", "number", "boolean", "object", "array"} {
		if k == mine {
			continue
		}
		alt := all[k]
		if k == "string" && mine == "boolean" {
			alt = "true"
		}
		out = append(out, alt)
	}
	return out
}

func describe(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case object:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return "raw"
}

// object is a JSON object in its members' order.
type object []member

type member struct {
	k string
	v any
}

type rawJSON string

func parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return parseValue(dec)
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, member{k.(string), v})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

// walk calls fn for every value under v (v included), with a setter that
// replaces it in place.
func walk(v any, path string, fn func(path string, v any, set func(any))) {
	var rec func(v any, path string, set func(any))
	rec = func(v any, path string, set func(any)) {
		fn(path, v, set)
		switch v := v.(type) {
		case object:
			for i := range v {
				p := v[i].k
				if path != "" {
					p = path + "." + p
				}
				rec(v[i].v, p, func(nv any) { v[i].v = nv })
			}
		case []any:
			for i := range v {
				rec(v[i], path+"["+strconv.Itoa(i)+"]", func(nv any) { v[i] = nv })
			}
		}
	}
	rec(v, path, func(any) {})
}

func marshal(v any) []byte {
	var b bytes.Buffer
	var rec func(v any)
	rec = func(v any) {
		switch v := v.(type) {
		case object:
			b.WriteByte('{')
			for i, m := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				k, _ := json.Marshal(m.k)
				b.Write(k)
				b.WriteByte(':')
				rec(m.v)
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				rec(e)
			}
			b.WriteByte(']')
		case rawJSON:
			b.WriteString(string(v))
		case json.Number:
			b.WriteString(string(v))
		default:
			enc, _ := json.Marshal(v)
			b.Write(enc)
		}
	}
	rec(v)
	return b.Bytes()
}

// BadPathSegments are path segments that are not valid UTF-8 or not of any
// documented form, percent-encoded.
var BadPathSegments = []string{"%FF", "%FF%FE", "%C0%AF", "%ED%A0%80", "a%00b", "%E2%82", "-0", "1e3", "18446744073709551616", "%20", strings.Repeat("9", 4000)}

// BadQueryValues are query values that are not valid UTF-8 or not numbers.
var BadQueryValues = []string{"%FF", "%FF%FE", "-0", "1e400", "18446744073709551616", "%00", "%", "a%ZZ"}

// BadHeaders are header values a client may send that are not printable
// ASCII or not of the expected form.
var BadHeaders = []http.Header{
	{"Content-Type": {"application/json; charset=\xff"}},
	{"Content-Type": {"\xff\xfe"}},
	{"Accept": {"\xff"}},
	{"Accept": {"application/x-yaml\xc3\xa9"}},
	{"User-Agent": {"caf\xc3\xa9 \xff"}},
	{"X-Request-Id": {"\xff\xfe"}},
	{"Grpc-Metadata-Foo": {"\xff"}},
	{"Grpc-Metadata-Bad!key": {"x"}},
	{"Grpc-Timeout": {"1n"}},
	{"Content-Type": {"application/x-www-form-urlencoded"}},
}

// SortedKeys returns a map's keys in order, for stable test names.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// under reports whether path is one of paths or inside one.
func under(path string, paths []string) bool {
	for _, f := range paths {
		if path == f || strings.HasPrefix(path, f+".") || strings.HasPrefix(path, f+"[") {
			return true
		}
	}
	return false
}

// wholeBodyMutations are the bodies that break valid as a whole, and those
// that hide trouble in an unknown member of it.
func wholeBodyMutations(valid string) []Mutation {
	var out []Mutation
	add := func(name string, body []byte, wrong bool) {
		out = append(out, Mutation{Name: name, Body: body, Wrong: wrong})
	}
	whole := map[string]string{
		"empty": "", "white space": " \r\n\t ", "null": "null", "array": "[]", "string": `"x"`, "number": "1",
		"truncated": valid[:len(valid)/2], "trailing garbage": valid + " garbage", "two values": valid + valid,
		"trailing comma": strings.TrimSuffix(strings.TrimSpace(valid), "}") + ",}", "single quotes": strings.ReplaceAll(valid, `"`, `'`),
		"comment": "/* c */" + valid, "BOM": "\ufeff" + valid, "NaN literal": `{"x":NaN}`,
	}
	if !strings.Contains(valid, `"`) {
		delete(whole, "single quotes")
	}
	for _, name := range SortedKeys(whole) {
		add("body "+name, []byte(whole[name]), true)
	}
	if strings.HasPrefix(valid, "{") {
		add("invalid UTF-8 in an unknown member", []byte(`{"zz_unknown":"\xff\xfe",`+valid[1:]), true)
		add("deep nesting in an unknown member", []byte(`{"zz_unknown":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+","+valid[1:]), true)
		add("moderate nesting in an unknown member", []byte(`{"zz_unknown":`+strings.Repeat(`{"a":`, 50)+"1"+strings.Repeat("}", 50)+","+valid[1:]), false)
		add("huge array in an unknown member", []byte(`{"zz_unknown":[`+strings.Repeat("1,", 20000)+"1],"+valid[1:]), false)
		add("huge string in an unknown member", []byte(`{"zz_unknown":"`+strings.Repeat("x", 1<<20)+`",`+valid[1:]), false)
	}

	return out
}
