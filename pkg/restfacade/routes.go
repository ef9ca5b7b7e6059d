package restfacade

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
	pattern  string   // as the description writes it, such as /api/v1/llm-settings/{id}
	segments []string // "{...}" matches any one segment
	methods  []string
	literals int // segments that are not "{...}": the more, the more specific
	// ints names, by method, the query parameters that are integer fields.
	ints map[string][]string
	// ops names, by method, the gRPC method serving it (the operationId's
	// part after "Service_", without the number the generator appends to an
	// RPC's further bindings: ResetUserKey2 is ResetUserKey's).
	ops map[string]string
}

func parseRoutes(openapi []byte) (routes, error) {
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name   string `json:"name"`
				In     string `json:"in"`
				Type   string `json:"type"`
				Format string `json:"format"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi, &doc); err != nil {
		return nil, err
	}
	var rs routes
	for path, ops := range doc.Paths {
		r := route{pattern: path, segments: strings.Split(strings.Trim(path, "/"), "/"), ops: map[string]string{}}
		for m, op := range ops {
			m = strings.ToUpper(m)
			r.methods = append(r.methods, m)
			_, r.ops[m], _ = strings.Cut(op.OperationID, "_")
			for _, p := range op.Parameters {
				if p.In == "query" && (p.Type == "integer" || p.Format == "int64" || p.Format == "uint64") {
					if r.ints == nil {
						r.ints = map[string][]string{}
					}
					r.ints[m] = append(r.ints[m], p.Name)
				}
			}
		}
		for _, s := range r.segments {
			if !isWild(s) {
				r.literals++
			}
		}
		rs = append(rs, r)
	}
	names := map[string]bool{}
	for _, r := range rs {
		for _, op := range r.ops {
			names[op] = true
		}
	}
	for _, r := range rs {
		for m, op := range r.ops {
			if base := strings.TrimRight(op, "0123456789"); base != op && names[base] {
				r.ops[m] = base
			}
		}
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

// pattern names the documented route that serves method at path — the most
// specific one when several match — or "" when none does. It is the route
// label of metrics and logs: a closed set, never the raw path.
func (rs routes) pattern(method, path string) string {
	if i := rs.find(method, path); i >= 0 {
		return rs[i].pattern
	}
	return ""
}

// intQuery lists the query parameters of the route that serves method at
// path which are integer fields of its request.
func (rs routes) intQuery(method, path string) []string {
	if method == http.MethodHead {
		method = http.MethodGet
	}
	if i := rs.find(method, path); i >= 0 {
		return rs[i].ints[method]
	}
	return nil
}

// find returns the index of the most specific route serving method at path,
// or -1.
func (rs routes) find(method, path string) int {
	path = strings.Trim(path, "/")
	n := strings.Count(path, "/") + 1
	best := -1
	for i, r := range rs {
		if len(r.segments) == n && slices.Contains(r.methods, method) && r.matchesPath(path) && (best < 0 || r.literals > rs[best].literals) {
			best = i
		}
	}
	return best
}

func isWild(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

func (r route) matches(segs []string) bool {
	if len(segs) != len(r.segments) {
		return false
	}
	for i, s := range r.segments {
		wild := isWild(s)
		if !(wild && segs[i] != "") && s != segs[i] {
			return false
		}
	}
	return true
}

// matchesPath is matches for a path without its outer slashes, read
// segment by segment in place.
func (r route) matchesPath(path string) bool {
	rest := path
	for i, s := range r.segments {
		seg, tail, more := strings.Cut(rest, "/")
		if more != (i < len(r.segments)-1) {
			return false
		}
		if !(isWild(s) && seg != "") && s != seg {
			return false
		}
		rest = tail
	}
	return true
}
