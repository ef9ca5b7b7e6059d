// Package restfacadetest compares the answers of the REST facade's direct
// path (restfacade's direct.go) with grpc-gateway's, for the services'
// TestDirect.
package restfacadetest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// Ways are the two ways each request is answered, by name: the facade's
// direct path, then grpc-gateway. Names of the same length, so that an
// object named after its way has answers of the same length either way.
var Ways = [2]string{"direct", "grpcgw"}

// Request is one request Compare sends both ways.
type Request struct {
	Pattern      string // the route it reaches, as restfacade.DirectRoutes names it
	Method, Path string // Path may hold Vars' placeholders
	Key          string // the Authorization header, none when ""
	Headers      []string
	Body         string
}

// Service describes the service under test.
type Service struct {
	Base string // the REST address, http://host:port
	Name string // the gRPC service's full name
	// Vars are placeholders of paths with their value each way (the way's
	// own object for a write); where a value stands as a whole JSON string,
	// or a path segment in one, in the answer or audit entry of a request
	// whose path holds its placeholder, the placeholder is put back.
	Vars map[string][2]string
	// Mask matches what differs by nature between two answers (a new
	// key), replaced by "…" in both.
	Mask *regexp.Regexp
	// Audit, when set, returns the newest audit entry as JSON, without its
	// id and time, read after each request.
	Audit func() string
}

type answer struct {
	status int
	header http.Header
	body   []byte
	audit  string
	counts map[string]float64
}

// Compare sends every request once with the direct path on and once off
// and fails unless status, headers (Date aside), body, the newest audit
// entry and the counts the request moved in /metrics are the same; and
// unless every route the direct path serves has a request.
func Compare(t *testing.T, s Service, requests []Request) {
	t.Helper()
	served, err := restfacade.DirectRoutes(s.Name)
	if err != nil {
		t.Fatal(err)
	}
	tried := map[string]bool{}
	for _, r := range requests {
		tried[r.Pattern] = true
	}
	if missing := slices.DeleteFunc(served, func(p string) bool { return tried[p] }); len(missing) > 0 {
		t.Errorf("direct routes without a request: %v", missing)
	}
	defer restfacade.SetDirect(true)
	for _, r := range requests {
		var answers [2]answer
		for i := range Ways {
			restfacade.SetDirect(i == 0)
			var used []string // placeholder, value pairs
			for name, vals := range s.Vars {
				if strings.Contains(r.Path, name) {
					used = append(used, name, vals[i])
				}
			}
			path := strings.NewReplacer(used...).Replace(r.Path)
			before := counts(t, s.Base)
			a := do(t, s.Base, r.Method, path, r.Key, r.Body, r.Headers...)
			a.counts = delta(before, counts(t, s.Base))
			if s.Audit != nil {
				a.audit = s.Audit()
			}
			for j := 0; j < len(used); j += 2 {
				// as a whole JSON string, or a path's segment in one
				for _, f := range []string{`"%s"`, `/%s"`, `/%s/`} {
					name, value := fmt.Sprintf(f, used[j]), fmt.Sprintf(f, used[j+1])
					a.body = bytes.ReplaceAll(a.body, []byte(value), []byte(name))
					a.audit = strings.ReplaceAll(a.audit, value, name)
				}
			}
			if s.Mask != nil {
				a.body = s.Mask.ReplaceAll(a.body, []byte("…"))
			}
			answers[i] = a
		}
		d, g := answers[0], answers[1]
		what := r.Method + " " + r.Path
		if d.status != g.status || !bytes.Equal(d.body, g.body) || !maps.EqualFunc(d.header, g.header, slices.Equal) {
			t.Errorf("%s (key %q, headers %q):\ndirect       %d %v %s\ngrpc-gateway %d %v %s", what, r.Key, r.Headers, d.status, d.header, d.body, g.status, g.header, g.body)
		}
		if d.audit != g.audit || !maps.Equal(d.counts, g.counts) {
			t.Errorf("%s: audit entry and counts\ndirect       %q %v\ngrpc-gateway %q %v", what, d.audit, d.counts, g.audit, g.counts)
		}
		if len(d.counts) == 0 {
			t.Errorf("%s: no count moved", what)
		}
	}
}

func do(t *testing.T, base, method, path, key, body string, headers ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	res.Header.Del("Date")
	return answer{status: res.StatusCode, header: res.Header, body: b}
}

// counts reads the service's counters and histogram counts: the series a
// request moves by whole numbers.
func counts(t *testing.T, base string) map[string]float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		series, value, ok := strings.Cut(line, " ")
		name, _, _ := strings.Cut(series, "{")
		if !ok || strings.HasPrefix(line, "#") || !(strings.HasSuffix(name, "_total") || strings.HasSuffix(name, "_count")) {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[series] = v
		}
	}
	return out
}

// delta is what moved between two readings, leaving out the scrape of
// /metrics itself, the runtime's series, and the store's transactions
// (how many reads a request makes depends on what an earlier one left in
// memory).
func delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v == before[k] || strings.Contains(k, `"/metrics"`) || strings.HasPrefix(k, "go_") || strings.HasPrefix(k, "process_") ||
			strings.HasPrefix(k, "gatehouse_store_transaction") {
			continue
		}
		d[k] = v - before[k]
	}
	return d
}
