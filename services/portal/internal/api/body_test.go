package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
)

func TestDecodeBody(t *testing.T) {
	for _, tc := range []struct {
		body     string
		want     *portalv1.TutorialPageInput
		problems []string
	}{
		{`{}`, &portalv1.TutorialPageInput{}, nil},
		{`{"Title":"t","MarkdownEnabled":false,"Categories":[],"Tags":["1","2"],"Other":{"x":[1]}}`, &portalv1.TutorialPageInput{
			Title: proto.String("t"), MarkdownEnabled: proto.Bool(false), Categories: &portalv1.IdList{}, Tags: &portalv1.IdList{Ids: []string{"1", "2"}}}, nil},
		{`{"Title":null,"Tags":null,"MarkdownEnabled":null}`, &portalv1.TutorialPageInput{}, nil},
		{` { "Lede" : "a\u00e9\ud83d\ude00" } `, &portalv1.TutorialPageInput{Lede: proto.String("aé😀")}, nil},
		{`{"Title":"x","Title":"y"}`, nil, []string{"Invalid request body: Title: duplicate key"}}, // ambiguous: refused
		{`{"Status":"bogus"}`, &portalv1.TutorialPageInput{Status: proto.String("bogus")}, nil},    // values are the handler's business
		{``, nil, []string{"Request body is empty: send a JSON object"}},
		{`"x"`, nil, []string{"Request body must be a JSON object"}},
		{`{"Title":1,"MarkdownEnabled":0,"Tags":[null]}`, nil, []string{
			"MarkdownEnabled must be true or false", "Title must be a string", `Tags must be an array of IDs written as strings, such as ["1", "2"]`}},
		{`{"Title":{},"Status":"bogus"}`, nil, []string{"Title must be a string", `Status must be one of published, draft, review; got "bogus"`}},
		{`{"TITLE":"x","Mark-Down-Content":"y"}`, nil, []string{
			`Unknown field "Mark-Down-Content": field names are case-sensitive; did you mean "MarkdownContent"?`,
			`Unknown field "TITLE": field names are case-sensitive; did you mean "Title"?`}},
	} {
		var in *portalv1.TutorialPageInput
		err := DecodeBody([]byte(tc.body), &in)
		var be *BodyError
		switch {
		case tc.problems == nil && err != nil:
			t.Errorf("%s: %v", tc.body, err)
		case tc.problems == nil && !proto.Equal(in, tc.want):
			t.Errorf("%s: got %v, want %v", tc.body, in, tc.want)
		case tc.problems != nil && (!errors.As(err, &be) || !slices.Equal(be.Problems, tc.problems)):
			t.Errorf("%s:\n got %v\nwant %q", tc.body, err, tc.problems)
		}
	}
}

func TestDecodeBodyOtherInputs(t *testing.T) {
	var prod *portalv1.ProductInput
	if err := DecodeBody([]byte(`{"Name":"n","Content":"<p>"}`), &prod); err != nil || prod.GetName() != "n" || prod.GetContent() != "<p>" || prod.Path != nil {
		t.Errorf("product: %v, %v", prod, err)
	}
	tag := &portalv1.TagInput{}
	if err := DecodeBody([]byte(`{"Name":"t"}`), tag); err != nil || tag.GetName() != "t" {
		t.Errorf("tag: %v, %v", tag, err)
	}
	var notProto struct{}
	if err := DecodeBody([]byte(`{}`), &notProto); err == nil {
		t.Error("decoding into a non-message succeeded")
	}
}

func TestRequestError(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		msgs   []string
	}{
		{&BodyError{Problems: []string{"a", "b"}}, 422, []string{"a", "b"}},
		{fmt.Errorf("decode: %w", &BodyError{Problems: []string{"a"}}), 422, []string{"a"}},
		// The text of a BodyError is not one: the facade passes the error itself.
		{status.Errorf(codes.InvalidArgument, "%v", &BodyError{Problems: []string{"a", "b"}}), 400, []string{"Invalid request: a; b"}},
		{status.Errorf(codes.InvalidArgument, "too many values"), 400, []string{"Invalid request: too many values"}},
	} {
		code, msgs := RequestError(nil, tc.err)
		if code != tc.status || !slices.Equal(msgs, tc.msgs) {
			t.Errorf("%v: got %d %q, want %d %q", tc.err, code, msgs, tc.status, tc.msgs)
		}
	}
}

// FuzzDecodeBody checks the PUT body decoder on any input: it never panics;
// a refusal lists one-line sentences that survive the trip through the
// facade; an acceptance means a JSON object whose exact-named members of the
// right types are exactly the fields set.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"Title":"t","Content":"<p>ü</p>","MarkdownEnabled":true,"Status":"review","Lede":"l","Path":"p",` +
			`"Categories":["1"],"Tags":["2","2"],"MarkdownContent":"m","PreviewContent":"v"}`,
		`{"Title":5}`, `{"Title":`, `[]`, `null`, `{"title":"x"}`, `{"Tags":"1"}`, `{"Categories":[1]}`,
		`{"Status":"bogus","Categories":["999"],"Tags":["abc"]}`, "{\"Title\":\"\xff\"}", `{"Title":"\u0000\n"}`,
		`{"Title":null}`, `{"a":{"b":[{"c":null}]}}`, `{"Title":"a"} x`, ``, `   `,
	} {
		f.Add([]byte(seed))
	}
	fields := []string{"Content", "Status", "Title", "Lede", "Path", "MarkdownContent", "PreviewContent"}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in *portalv1.TutorialPageInput
		err := DecodeBody(data, &in)
		if err != nil {
			var be *BodyError
			if !errors.As(err, &be) || len(be.Problems) == 0 {
				t.Fatalf("error %v is not a BodyError with problems", err)
			}
			for _, p := range be.Problems {
				if p == "" || strings.Contains(p, "\n") || !utf8.ValidString(p) {
					t.Fatalf("problem %q is not a one-line sentence", p)
				}
			}
			code, msgs := RequestError(nil, err)
			if code != 422 || !slices.Equal(msgs, be.Problems) {
				t.Fatalf("through the facade: %d %q, want 422 %q", code, msgs, be.Problems)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil || obj == nil || !utf8.Valid(data) {
			t.Fatalf("accepted %q, which is not a JSON object (%v)", data, err)
		}
		m := in.ProtoReflect()
		for _, name := range fields {
			fd := m.Descriptor().Fields().ByJSONName(name)
			v, isString := obj[name].(string)
			if m.Has(fd) != isString || (isString && m.Get(fd).String() != v) {
				t.Fatalf("%s: JSON %#v, decoded %v (set %v)", name, obj[name], m.Get(fd), m.Has(fd))
			}
		}
		if b, isBool := obj["MarkdownEnabled"].(bool); (in.MarkdownEnabled != nil) != isBool || (isBool && in.GetMarkdownEnabled() != b) {
			t.Fatalf("MarkdownEnabled: JSON %#v, decoded %v", obj["MarkdownEnabled"], in.MarkdownEnabled)
		}
		for name, list := range map[string]*portalv1.IdList{"Categories": in.GetCategories(), "Tags": in.GetTags()} {
			arr, isArr := obj[name].([]any)
			if (list != nil) != isArr || (isArr && len(arr) != len(list.GetIds())) {
				t.Fatalf("%s: JSON %#v, decoded %v", name, obj[name], list)
			}
		}
	})
}

func FuzzDecodeOrder(f *testing.F) {
	for _, seed := range []string{`[]`, `[1,2,3]`, `["1","2"]`, `[1.5,-1,0,1e3]`, `[true,{},null]`, `{}`, `[`, ``, "[\"\xff\"]", `[99999999999]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var order *portalv1.DocOrder
		err := DecodeBody(data, &order)
		if err == nil {
			for _, id := range order.GetDocIds() {
				if !utf8.ValidString(id) {
					t.Fatalf("ID %q is not UTF-8", id)
				}
			}
			// The handler's check must answer every decoded list.
			if _, err := checkOrder(order.GetDocIds(), []uint32{1, 2, 3}); err != nil && status.Code(err) != codes.InvalidArgument {
				t.Fatalf("checkOrder: %v", err)
			}
			return
		}
		var be *BodyError
		if !errors.As(err, &be) || len(be.Problems) == 0 {
			t.Fatalf("error %v is not a BodyError with problems", err)
		}
		for _, p := range be.Problems {
			if p == "" || strings.Contains(p, "\n") || !utf8.ValidString(p) {
				t.Fatalf("problem %q is not a one-line sentence", p)
			}
		}
	})
}
