package restfacade

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
)

// The messages below are well-known ones with the field kinds the services
// use: errdetails.ErrorInfo (strings and a map of strings),
// errdetails.RetryInfo (a Duration), errdetails.QuotaFailure (a list of
// messages), structpb (Struct, Value, ListValue) and errdetails.BadRequest.

func TestCheckJSONRefuses(t *testing.T) {
	info := (&errdetails.ErrorInfo{}).ProtoReflect().Descriptor()
	for _, tc := range []struct {
		body, want string
	}{
		{``, "the request body is empty"},
		{" \n\t", "the request body is empty"},
		{`{"reason":"a"} x`, "data after the first JSON value"},
		{`{"reason":"a"}{"reason":"b"}`, "data after the first JSON value"},
		{`{"reason":"a"`, "not valid JSON"},
		{`null`, "must be a JSON object, not null"},
		{`[]`, "must be an object, not an array"},
		{`{"reason":1}`, "reason: must be a string, not a number"},
		{`{"reason":true}`, "reason: must be a string, not a boolean"},
		{`{"reason":"a","reason":"b"}`, "reason: duplicate key"},
		{`{"reason":"a","Reason":"b"}`, ""}, // Reason is unknown: ignored
		{`{"metadata":[]}`, "metadata: must be an object, not an array"},
		{`{"metadata":{"k":1}}`, "metadata.k: must be a string, not a number"},
		{`{"metadata":{"k":null}}`, "metadata.k: must not be null"},
		{`{"metadata":{"k":"a","k":"b"}}`, "metadata.k: duplicate key"},
		{`{"other":` + strings.Repeat("[", jsonstrict.MaxDepth+1) + strings.Repeat("]", jsonstrict.MaxDepth+1) + `}`, "nested more than"},
		{"{\"reason\":\"\xff\"}", "not valid UTF-8"},
		{`{"reason":"a"}`, ""},
		{`{"reason":null,"metadata":null,"other":{"x":[1,"2",{"y":null}]}}`, ""},
	} {
		err := CheckJSON([]byte(tc.body), info)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want accepted", tc.body, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error saying %q", tc.body, err, tc.want)
		}
	}
}

func TestCheckJSONNumbers(t *testing.T) {
	// The integer kinds' bounds are jsonstrict's (TestIntegers there).
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"retryDelay":"1s"}`, true},
		{`{"retryDelay":1}`, false},
	} {
		err := CheckJSON([]byte(tc.body), (&errdetails.RetryInfo{}).ProtoReflect().Descriptor())
		if (err == nil) != tc.ok {
			t.Errorf("RetryInfo %s: %v, want ok=%v", tc.body, err, tc.ok)
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	var s *structpb.Struct
	if err := DecodeJSON([]byte(`{"a":[1,"x",null]}`), &s); err != nil || s.GetFields()["a"].GetListValue().GetValues()[1].GetStringValue() != "x" {
		t.Errorf("DecodeJSON into **Struct: %v, %v", s, err)
	}
	var bad errdetails.ErrorInfo
	err := DecodeJSON([]byte(`{"domain":7}`), &bad)
	var p *jsonstrict.Problem
	if !errors.As(err, &p) || p.Path != "domain" || p.Kind != jsonstrict.WrongType {
		t.Errorf("DecodeJSON with a wrong type: %v, want a jsonstrict.Problem naming domain", err)
	}
	if err := DecodeJSON([]byte(`{}`), 7); err == nil {
		t.Error("DecodeJSON into an int accepted")
	}
}

func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"reason":"a","metadata":{"k":"v"}}`, `{"reason":1}`, `{} x`, `{"other":[[[{}]]]}`, `{"metadata":{"k":"a","k":"b"}}`} {
		f.Add([]byte(s))
	}
	md := (&errdetails.ErrorInfo{}).ProtoReflect().Descriptor()
	f.Fuzz(func(t *testing.T, data []byte) {
		var got errdetails.ErrorInfo
		if err := DecodeJSON(data, &got); err != nil {
			return
		}
		// Whatever the strict pass lets through, protojson decodes, and it
		// is one JSON value.
		if CheckJSON(data, md) != nil || jsonstrict.Check(data, nil) != nil {
			t.Fatalf("accepted %q but the checks refuse it", data)
		}
	})
}

func FuzzValidQuery(f *testing.F) {
	for _, s := range []string{"p=1", "p=%FF", "%FF%FE=x&a=b", "a=%", "x=%C0%AF&x=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest("GET", "/x", nil)
		r.URL.RawQuery = raw
		validQuery(r)
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return // left to grpc-gateway, which answers 400
		}
		for k, vs := range q {
			for _, v := range append(vs, k) {
				if !utf8.ValidString(v) {
					t.Fatalf("%q: still invalid UTF-8 after validQuery: %q", raw, r.URL.RawQuery)
				}
			}
		}
	})
}
