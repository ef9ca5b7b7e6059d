package app

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
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

// BenchmarkCategoriesGet is one GET of an OAS API's categories over REST.
func BenchmarkCategoriesGet(b *testing.B) {
	in := start(b, "")
	id := "0123456789abcdef0123456789abcdef"
	benchRequest(b, in, "POST", "/api/apis/oas", []byte(oasDoc(id, "Bench", "/bench/")), 200)
	path := "/api/apis/oas/" + id + "/categories"
	benchRequest(b, in, "PUT", path, []byte(`{"categories":["alpha","beta"]}`), 200)
	b.ReportAllocs()
	for b.Loop() {
		benchRequest(b, in, "GET", path, nil, 200)
	}
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
