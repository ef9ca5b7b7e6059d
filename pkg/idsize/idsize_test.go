package idsize

import (
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestCheck(t *testing.T) {
	long := strings.Repeat("x", Max+1)
	if err := Check(&errdetails.RequestInfo{RequestId: strings.Repeat("x", Max), ServingData: long}); err != nil {
		t.Errorf("an id of %d bytes and a long non-id field: %v, want nil", Max, err)
	}
	err := Check(&errdetails.RequestInfo{RequestId: long})
	if got, want := status.Convert(err).Message(), "request_id must be at most 256 bytes"; got != want {
		t.Errorf("an id of %d bytes: %q, want %q", Max+1, got, want)
	}
	short := &errdetails.RequestInfo{RequestId: "abc", ServingData: long}
	if n := testing.AllocsPerRun(100, func() { Check(short) }); n != 0 {
		t.Errorf("checking a request whose ids are short made %v allocations, want none", n)
	}
	doc, _ := structpb.NewStruct(map[string]any{"api_id": long})
	if err := Check(doc); err != nil {
		t.Errorf("a document's own api_id is not a request's id: %v", err)
	}
}

func TestCut(t *testing.T) {
	for _, s := range []string{strings.Repeat("a", 1000), strings.Repeat("é", 300), "a" + strings.Repeat("€", 100), "short"} {
		got := Cut(s)
		if len(got) > Max || !utf8.ValidString(got) || !strings.HasPrefix(s, got) || len(got) < min(len(s), Max-3) {
			t.Errorf("Cut(%d bytes) = %d bytes, valid UTF-8 %v", len(s), len(got), utf8.ValidString(got))
		}
	}
}
