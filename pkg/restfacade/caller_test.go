package restfacade

import (
	"context"
	"testing"
)

// TestCaller: the caller the REST door keeps reaches only the call of the
// RPC the request's route maps to; outside a routed REST request (a gRPC
// call, a web UI page's calls) nothing is kept.
func TestCaller(t *testing.T) {
	SetCaller(context.Background(), "u")
	if _, ok := Caller(context.Background(), "GetAPI"); ok {
		t.Fatal("a caller outside a REST request")
	}
	page := context.WithValue(context.Background(), observationKey{}, &observation{route: "/ui/"})
	SetCaller(page, "u")
	if _, ok := Caller(page, ""); ok {
		t.Fatal("a caller kept for a request routed to no RPC")
	}
	routed := context.WithValue(context.Background(), observationKey{}, &observation{method: "GET", operation: "GetAPI"})
	if _, ok := Caller(routed, "GetAPI"); ok {
		t.Fatal("a caller before the door kept one")
	}
	SetCaller(routed, "u")
	if c, ok := Caller(routed, "GetAPI"); !ok || c != "u" {
		t.Fatalf("the routed call: %v %v", c, ok)
	}
	if _, ok := Caller(routed, "DeleteAPI"); ok {
		t.Fatal("another RPC's call took the door's caller")
	}
}
