package gateway

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// routes is the facade's route table as its OpenAPI description lists it:
// the source of the methods an Allow header names.
type routes []route

type route struct {
	segments []string // "{...}" matches any one segment
	methods  []string
}

func parseRoutes(openapi []byte) (routes, error) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi, &doc); err != nil {
		return nil, err
	}
	var rs routes
	for path, ops := range doc.Paths {
		r := route{segments: strings.Split(strings.Trim(path, "/"), "/")}
		for m := range ops {
			r.methods = append(r.methods, strings.ToUpper(m))
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// allowed lists the methods served at path, HEAD included wherever GET is.
func (rs routes) allowed(path string) []string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var out []string
	for _, r := range rs {
		if r.matches(segs) {
			out = append(out, r.methods...)
		}
	}
	if slices.Contains(out, http.MethodGet) {
		out = append(out, http.MethodHead)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (r route) matches(segs []string) bool {
	if len(segs) != len(r.segments) {
		return false
	}
	for i, s := range r.segments {
		wild := strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}")
		if !(wild && segs[i] != "") && s != segs[i] {
			return false
		}
	}
	return true
}

// owns reports whether path lies under the first segment of one of the
// routes: the part of the URL space the API answers, unknown paths included.
func (rs routes) owns(path string) bool {
	first, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	for _, r := range rs {
		if len(r.segments) > 0 && r.segments[0] == first && !strings.HasPrefix(first, "{") {
			return true
		}
	}
	return false
}
