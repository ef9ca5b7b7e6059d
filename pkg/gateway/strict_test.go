package gateway

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
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
		{`{"other":` + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + `}`, "nested more than"},
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
	// google.protobuf.Value's number_value is a double; the integer kinds
	// are checked through checkInt directly.
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
	for _, tc := range []struct {
		lit  string
		kind string
		ok   bool
	}{
		{"0", "int32", true}, {"-0", "uint32", true}, {"2147483647", "int32", true}, {"2147483648", "int32", false},
		{"-2147483648", "int32", true}, {"-2147483649", "int32", false}, {"4294967295", "uint32", true},
		{"4294967296", "uint32", false}, {"-1", "uint32", false}, {"1e3", "int32", true}, {"1.5", "int32", false},
		{"1e400", "int32", false}, {"9007199254740993", "int64", true}, {"18446744073709551616", "uint64", false},
		{"18446744073709551615", "uint64", true}, {"9223372036854775808", "int64", false}, {"1.8446744073709552e19", "uint64", false},
		{"9.223372036854775807e18", "int64", false}, {"-9.223372036854775808e18", "int64", true},
	} {
		k := map[string]kindName{"int32": int32K, "uint32": uint32K, "int64": int64K, "uint64": uint64K}[tc.kind]
		if p := checkInt(tc.lit, k.kind()); (p == "") != tc.ok {
			t.Errorf("checkInt(%s, %s) = %q, want ok=%v", tc.lit, tc.kind, p, tc.ok)
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
	var be *BodyError
	if !errors.As(err, &be) || be.Field != "domain" {
		t.Errorf("DecodeJSON with a wrong type: %v, want a BodyError naming domain", err)
	}
	if err := DecodeJSON([]byte(`{}`), 7); err == nil {
		t.Error("DecodeJSON into an int accepted")
	}
}

func TestCheckOneValue(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"a":1}`: true, `[1,2]`: true, `"x"`: true, `1 2`: false, `{"a":1,"a":2}`: false, `{"a":{"b":1,"b":1}}`: false, ``: false,
	} {
		if err := CheckOneValue([]byte(body)); (err == nil) != ok {
			t.Errorf("CheckOneValue(%s) = %v, want ok=%v", body, err, ok)
		}
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
		if CheckJSON(data, md) != nil || CheckOneValue(data) != nil {
			t.Fatalf("accepted %q but the checks refuse it", data)
		}
	})
}

type kindName int

const (
	int32K kindName = iota
	uint32K
	int64K
	uint64K
)

func (k kindName) kind() protoreflect.Kind {
	return [...]protoreflect.Kind{protoreflect.Int32Kind, protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Uint64Kind}[k]
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
