// Package metricstest reads a service's GET /metrics for tests and checks
// it the same way for every service: the names and labels CONTRACT §5 asks
// for, and that no label value holds an ID, a key or a raw path.
package metricstest

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Sample is one sample line of the exposition, without its value.
type Sample struct {
	Name   string
	Labels map[string]string
}

// Exposition is a scraped /metrics.
type Exposition []Sample

var labelRE = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// Scrape GETs base/metrics without credentials and parses the text format.
func Scrape(tb testing.TB, base string) Exposition {
	tb.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		tb.Fatalf("GET /metrics: %d %s, want 200 text/plain", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var out Exposition
	for line := range strings.Lines(string(body)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := Sample{Labels: map[string]string{}}
		name, rest, hasLabels := strings.Cut(line, "{")
		if !hasLabels {
			name, _, _ = strings.Cut(line, " ")
		} else {
			labels, _, _ := strings.Cut(rest, "} ")
			for _, m := range labelRE.FindAllStringSubmatch(labels, -1) {
				s.Labels[m[1]] = m[2]
			}
		}
		s.Name = name
		out = append(out, s)
	}
	return out
}

// Find returns the samples called name whose labels include every pair of
// match (name, value, name, value, ...).
func (e Exposition) Find(name string, match ...string) []Sample {
	var out []Sample
	for _, s := range e {
		if s.Name != name {
			continue
		}
		ok := true
		for i := 0; i+1 < len(match); i += 2 {
			if s.Labels[match[i]] != match[i+1] {
				ok = false
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// Want fails unless a sample called name with the labels of match exists,
// and every sample called name has exactly the label names labels.
func (e Exposition) Want(tb testing.TB, name string, labels []string, match ...string) {
	tb.Helper()
	found := e.Find(name, match...)
	if len(found) == 0 {
		tb.Errorf("/metrics has no %s with %v", name, match)
	}
	for _, s := range e.Find(name) {
		got := make([]string, 0, len(s.Labels))
		for k := range s.Labels {
			if k != "le" {
				got = append(got, k)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(labels))
		if !slices.Equal(got, want) {
			tb.Errorf("%s has labels %v, want %v", name, got, want)
			return
		}
	}
}

// CheckCommon checks what every service exposes after some REST traffic
// (CONTRACT §5): gRPC calls by method and code with a latency histogram,
// REST requests by route, method and status with a latency histogram, store
// transactions, Go runtime and process collectors. route is a pattern the
// traffic used, such as /api/v1/llm-settings/{id}.
func (e Exposition) CheckCommon(tb testing.TB, route string) {
	tb.Helper()
	e.Want(tb, "grpc_server_handled_total", []string{"grpc_code", "grpc_method", "grpc_service", "grpc_type"}, "grpc_code", "OK")
	e.Want(tb, "grpc_server_handling_seconds_bucket", []string{"grpc_method", "grpc_service", "grpc_type"})
	e.Want(tb, "gatehouse_http_request_duration_seconds_count", []string{"code", "method", "route"}, "route", route, "code", "200")
	e.Want(tb, "gatehouse_http_request_duration_seconds_bucket", []string{"code", "method", "route"}, "route", route)
	e.Want(tb, "gatehouse_http_request_duration_seconds_count", []string{"code", "method", "route"}, "route", "unmatched", "code", "404")
	e.Want(tb, "gatehouse_store_transaction_duration_seconds_count", []string{"kind"}, "kind", "read")
	e.Want(tb, "gatehouse_store_transaction_duration_seconds_count", []string{"kind"}, "kind", "write")
	e.Want(tb, "go_goroutines", nil)
	e.Want(tb, "process_cpu_seconds_total", nil)
}

// CheckNoSecrets fails when a label value contains any of values (the IDs,
// keys and paths the traffic used): label values come from closed sets only.
func (e Exposition) CheckNoSecrets(tb testing.TB, values ...string) {
	tb.Helper()
	for _, s := range e {
		for k, v := range s.Labels {
			for _, bad := range values {
				if bad != "" && strings.Contains(v, bad) {
					tb.Errorf("%s{%s=%q} holds %q: label values must come from closed sets", s.Name, k, v, bad)
				}
			}
		}
	}
}

// CheckRoutes fails unless every route label value is a path of the
// service's /openapi.json (a pattern such as /api/v1/llm-settings/{id}), one
// of the facade's own endpoints, one of extra (plain routes beside the
// description, such as management's gateway routes), or "unmatched": never
// a raw path.
func (e Exposition) CheckRoutes(tb testing.TB, base string, extra ...string) {
	tb.Helper()
	res, err := http.Get(base + "/openapi.json")
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		tb.Fatal(err)
	}
	allowed := map[string]bool{"unmatched": true, "/healthz": true, "/readyz": true, "/metrics": true, "/openapi.json": true}
	for p := range doc.Paths {
		allowed[p] = true
	}
	for _, p := range extra {
		allowed[p] = true
	}
	for _, s := range e {
		if r, ok := s.Labels["route"]; ok && !allowed[r] {
			tb.Errorf("%s{route=%q}: not a documented route pattern", s.Name, r)
		}
	}
}
