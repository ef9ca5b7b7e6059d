package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	const doc = `{"paths":{"/a/b":{"post":{"parameters":[{"in":"body"},{"in":"query"}]}}},"definitions":{"x":{"type":"object"}}}`
	for _, c := range []struct {
		name, op, path, value, want, err string
	}{
		{"replace a member", "replace", "/definitions/x", `{"type":"array"}`, `"x":{"type":"array"}`, ""},
		{"add a member", "add", "/definitions/y", `1`, `"y":1`, ""},
		{"escaped pointer", "replace", "/paths/~1a~1b/post/parameters/0", `{"in":"path"}`, `[{"in":"path"},{"in":"query"}]`, ""},
		{"append", "add", "/paths/~1a~1b/post/parameters/-", `{"in":"header"}`, `{"in":"query"},{"in":"header"}]`, ""},
		{"remove an element", "remove", "/paths/~1a~1b/post/parameters/0", ``, `"parameters":[{"in":"query"}]`, ""},
		{"remove a member", "remove", "/definitions/x", ``, `"definitions":{}`, ""},
		{"replace needs a target", "replace", "/definitions/missing", `1`, "", "no member"},
		{"remove needs a target", "remove", "/definitions/missing", ``, "", "no member"},
		{"parent must exist", "add", "/nope/x", `1`, "", "no member"},
		{"index out of range", "replace", "/paths/~1a~1b/post/parameters/5", `1`, "", "no element"},
		{"not a pointer", "add", "definitions/x", `1`, "", "does not start with /"},
	} {
		var v any
		json.Unmarshal([]byte(doc), &v)
		got, err := apply(v, op{Op: c.op, Path: c.path, Value: json.RawMessage(c.value)})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if b, _ := json.Marshal(got); !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %s, want it to contain %s", c.name, b, c.want)
		}
	}
}
