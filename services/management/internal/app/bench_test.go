package app

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// benchRequest sends one admin request and drains the answer.
func benchRequest(b *testing.B, in *instance, method, path string, body []byte, want int) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, in.base+path, rd)
	req.Header.Set("Authorization", adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("%s %s: %d", method, path, res.StatusCode)
	}
}

// BenchmarkCategoriesRoundTrip is PUT then GET of an OAS API's categories over REST.
func BenchmarkCategoriesRoundTrip(b *testing.B) {
	in := start(b, "")
	id := "0123456789abcdef0123456789abcdef"
	benchRequest(b, in, "POST", "/api/apis/oas", []byte(oasDoc(id, "Bench", "/bench/")), 200)
	path := "/api/apis/oas/" + id + "/categories"
	body := []byte(`{"categories":["alpha"," beta ","gamma","alpha"]}`)
	b.ReportAllocs()
	for b.Loop() {
		benchRequest(b, in, "PUT", path, body, 200)
		benchRequest(b, in, "GET", path, nil, 200)
	}
}

// BenchmarkCategoriesGet is GET /api/apis/categories over 16 APIs, one
// request at a time over one keep-alive connection to the service in this
// process: its allocations and time are the client's and the server's
// together (the client's stay the same from one build to the next), a
// steadier figure of the REST path's own work than BenchmarkREST32.
func BenchmarkCategoriesGet(b *testing.B) {
	in := start(b, "")
	for i := range 16 {
		benchRequest(b, in, "POST", "/api/apis", fmt.Appendf(nil,
			`{"api_definition":{"api_id":"bench%d","name":"Bench #team%d","use_keyless":true,"proxy":{"listen_path":"/bench-%d/","target_url":"http://upstream.test"},"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}}}}`,
			i, i%4, i), 200)
	}
	b.ReportAllocs()
	for b.Loop() {
		benchRequest(b, in, "GET", "/api/apis/categories", nil, 200)
	}
}

// BenchmarkCategoriesGet32 drives GET of an OAS API's categories from 32
// keep-alive clients, and in the same run a bare net/http server on loopback
// that writes the same status, content type and bytes, in this process like
// the service. It reports both throughputs and the service's share of the
// bare one (issue 12 asks for at least 50 %).
func BenchmarkCategoriesGet32(b *testing.B) {
	in := start(b, "")
	id := "0123456789abcdef0123456789abcdef"
	benchRequest(b, in, "POST", "/api/apis/oas", []byte(oasDoc(id, "Bench", "/bench/")), 200)
	path := "/api/apis/oas/" + id + "/categories"
	benchRequest(b, in, "PUT", path, []byte(`{"categories":["alpha","beta"]}`), 200)
	req, _ := http.NewRequest("GET", in.base+path, nil)
	req.Header.Set("Authorization", adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	contentType := res.Header.Get("Content-Type")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bare := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	})}
	go bare.Serve(l)
	defer bare.Close()

	get := func(int) servertest.Request { return servertest.Request{Method: "GET", Path: path, Want: 200} }
	service := strings.TrimPrefix(in.base, "http://")
	var bareTime, serviceTime time.Duration
	b.ResetTimer()
	for range 2 { // alternate, so that both see the same machine
		bareTime += servertest.Load(b, l.Addr().String(), adminToken, 32, b.N/2+1, get).Elapsed
		serviceTime += servertest.Load(b, service, adminToken, 32, b.N/2+1, get).Elapsed
	}
	b.StopTimer()
	n := float64(2 * (b.N/2 + 1))
	b.ReportMetric(n/serviceTime.Seconds(), "req/s")
	b.ReportMetric(n/bareTime.Seconds(), "bare-req/s")
	b.ReportMetric(100*bareTime.Seconds()/serviceTime.Seconds(), "%-of-bare")
}

// BenchmarkClassicCreate is one POST /api/apis over REST (each an fsynced transaction).
func BenchmarkClassicCreate(b *testing.B) {
	in := start(b, "")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		benchRequest(b, in, "POST", "/api/apis", []byte(fmt.Sprintf(`{"api_definition":{"name":"Bench %d #b","proxy":{"listen_path":"/b%d/"},"n":9007199254740993}}`, i, i)), 200)
	}
}

// BenchmarkOASCreate is one POST /api/apis/oas over REST, without and with
// the node secret: with it, the write also derives the classic definition
// the record keeps for gateways (the cost /system/apis no longer pays).
func BenchmarkOASCreate(b *testing.B) {
	for _, gw := range []bool{false, true} {
		b.Run(fmt.Sprintf("gateways=%v", gw), func(b *testing.B) {
			var in *instance
			if gw {
				in = startGateways(b, "", "")
			} else {
				in = start(b, "")
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				benchRequest(b, in, "POST", "/api/apis/oas", []byte(oasDoc(fmt.Sprintf("%032x", i), fmt.Sprintf("Bench %d", i), fmt.Sprintf("/b%d/", i))), 200)
			}
		})
	}
}
