package restfacade

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestDropCommaSpaces holds dropCommaSpaces to json.Compact on single-line
// protojson shapes with and without the spaces, strings with commas,
// spaces, quotes and escapes included.
func TestDropCommaSpaces(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"a":1, "b":[1, 2, {"c":"x, y"}], "d":"q\", r", "e":"\\", "f":"\u00e9, \n"}`,
		`{"a":1,"b":[1,2,{"c":"x, y"}],"d":"q\", r","e":"\\","f":"\u00e9, \n"}`,
		`["a, b", "\\\\", ", ", ",  ,"]`,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatal(err)
		}
		if got := dropCommaSpaces([]byte(in)); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("dropCommaSpaces(%s) = %s, want %s", in, got, want.Bytes())
		}
	}
}

// TestCompactJSONMarshal: a message is written compact, byte for byte what
// json.Compact makes of protojson's output, whichever way this binary's
// protojson spaces.
func TestCompactJSONMarshal(t *testing.T) {
	msg, err := structpb.NewStruct(map[string]any{"name": `a, "b", c\d`, "list": []any{1, "x, y", map[string]any{"k": true}}, "n": nil})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protojson.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, raw); err != nil {
		t.Fatal(err)
	}
	got, err := CompactJSON{&runtime.JSONPb{}}.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("Marshal = %s, want %s", got, want.Bytes())
	}
	if commaSpaces == bytes.Equal(raw, want.Bytes()) {
		t.Errorf("commaSpaces = %v, but protojson wrote %s", commaSpaces, raw)
	}
}
