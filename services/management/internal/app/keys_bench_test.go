package app

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// BenchmarkKeyCreate issues keys through management (POST /api/keys, the
// gateway double behind it) and, in the same run, straight at the double
// (POST /tyk/keys with the same session): it reports both and
// mgmt-extra-ms, what management adds to the gateway's own answer
// (issue 26 asks for at most 2 ms).
func BenchmarkKeyCreate(b *testing.B) {
	gw := startKeyDouble(b)
	in := startKeys(b, gw.URL)
	api := "4b1e0000000000000000000000000003"
	benchRequest(b, in, "POST", "/api/apis", []byte(classicBody(api, "Bench")), 200)
	session := []byte(`{"alias":"bench","rate":10,"per":1,"access_rights":{"` + api + `":{"api_id":"` + api + `","versions":["Default"]}}}`)
	direct := func() {
		req, _ := http.NewRequest("POST", gw.URL+"/tyk/keys", bytes.NewReader(session))
		req.Header.Set("x-tyk-authorization", gatewaySecret)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("direct: %v", err)
		}
		res.Body.Close()
	}
	var mgmt, gwOnly time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		benchRequest(b, in, "POST", "/api/keys", session, 200)
		t1 := time.Now()
		direct()
		mgmt += t1.Sub(t0)
		gwOnly += time.Since(t1)
		n++
	}
	b.ReportMetric(float64(mgmt.Microseconds())/float64(n)/1000, "mgmt-ms/key")
	b.ReportMetric(float64(gwOnly.Microseconds())/float64(n)/1000, "gateway-ms/key")
	b.ReportMetric(float64((mgmt-gwOnly).Microseconds())/float64(n)/1000, "mgmt-extra-ms")
}
