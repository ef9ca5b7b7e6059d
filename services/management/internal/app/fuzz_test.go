package app

import (
	"bytes"
	"testing"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
)

// FuzzRequestDecoder drives the management facade's decoder with the
// messages its routes read: typed bodies (users, categories, migrate) are
// accepted only as one strictly typed JSON value, and verbatim bodies reach
// the handler byte for byte.
func FuzzRequestDecoder(f *testing.F) {
	for _, s := range []string{
		`{"first_name":"a","email_address":"e@x.io","user_permissions":{"apis":"read"}}`, `{"categories":["a"," b "]}`,
		`{"mode":"dryRun","apiIDs":["x"],"all":false}`, `{"mode":"dryRun","all":"true"}`, `{"categories":"a"} {}`, ``,
	} {
		f.Add([]byte(s))
	}
	m := newMarshaler(protojson.MarshalOptions{})
	f.Fuzz(func(t *testing.T, body []byte) {
		var hb *httpbody.HttpBody
		if err := m.NewDecoder(bytes.NewReader(body)).Decode(&hb); err != nil || !bytes.Equal(hb.GetData(), body) {
			t.Fatalf("a verbatim body did not arrive as sent: %v", err)
		}
		var user *managementv1.UserInput
		for _, v := range []any{&user, &managementv1.UpdateAPICategoriesRequest{}, &managementv1.MigrateRequest{}} {
			if err := m.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
				continue
			}
			if err := jsonstrict.Check(body, nil); err != nil {
				t.Fatalf("accepted %q into %T, which is not one plain JSON value: %v", body, v, err)
			}
			if msg, ok := v.(proto.Message); ok {
				if _, err := protojson.Marshal(msg); err != nil {
					t.Fatalf("accepted %q into %T, which does not marshal: %v", body, v, err)
				}
			}
		}
	})
}
