package app

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// FuzzRequestBody drives the studio's REST body decoder (the facade's
// strict JSON codec) with the messages its routes read: whatever it
// accepts is one JSON value without duplicate keys, and decodes to a
// message that survives a protojson round trip.
func FuzzRequestBody(f *testing.F) {
	for _, s := range []string{
		`{"data":{"type":"llm-settings","attributes":{"model_name":"m","max_length":10,"temperature":0.5,"stop_words":["a"],"metadata":{"k":[1,{"x":null}]}}}}`,
		`{"data":{"attributes":{"max_length":"10"}}}`, `{"data":{"attributes":{"top_k":1e3,"seed":-0}}} x`,
		`{"data":{"type":"users","attributes":{"email":"a@b.c","name":"n","is_admin":true}}}`, `{"data":{"attributes":{"metadata":{"a":1,"a":2}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, msg := range []proto.Message{&studiov1.CreateLlmSettingsRequest{}, &studiov1.UpdateLlmSettingsRequest{}, &studiov1.CreateUserRequest{}} {
			if err := restfacade.DecodeJSON(body, msg); err != nil {
				continue
			}
			if err := jsonstrict.Check(body, nil); err != nil {
				t.Fatalf("accepted %q into %T, which is not one plain JSON value: %v", body, msg, err)
			}
			out, err := protojson.Marshal(msg)
			if err != nil {
				t.Fatalf("accepted %q into %T, which does not marshal: %v", body, msg, err)
			}
			back := msg.ProtoReflect().New().Interface()
			if err := protojson.Unmarshal(out, back); err != nil || !proto.Equal(msg, back) {
				t.Fatalf("accepted %q into %T, which does not round-trip: %v", body, msg, err)
			}
		}
	})
}
