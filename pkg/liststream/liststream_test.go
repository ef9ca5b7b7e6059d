package liststream

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestList: a streamed list reads as the envelope marshalled whole with the
// list in place (where the marshaler puts the field, or last when it leaves
// it out), or as the bare array; without a sink a handler is told to answer
// itself; a failure before anything was sent says so.
func TestList(t *testing.T) {
	marshal := func(m proto.Message) ([]byte, error) {
		return protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	}
	items := []proto.Message{structpb.NewStringValue("a"), structpb.NewNumberValue(2)}
	run := func(envelope proto.Message, field string, bare bool) string {
		t.Helper()
		ctx, sink := With(context.Background(), marshal)
		if !Stream(ctx, func(w *Writer) error {
			if err := w.Begin(envelope, field, bare); err != nil {
				return err
			}
			for _, it := range items {
				if err := w.Item(it); err != nil {
					return err
				}
			}
			return w.End()
		}) || !sink.Streaming() {
			t.Fatal("Stream with a sink: not taken")
		}
		var out bytes.Buffer
		if sent, err := sink.Send(&out); err != nil || !sent {
			t.Fatalf("Send: %v %v", sent, err)
		}
		return string(bytes.ReplaceAll(out.Bytes(), []byte(" "), nil))
	}
	envelope := &structpb.Struct{Fields: map[string]*structpb.Value{"pages": structpb.NewNumberValue(1)}}
	if got, want := run(envelope, "logs", false), `{"pages":1,"logs":["a",2]}`; got != want {
		t.Errorf("field left out by the marshaler: %s, want %s", got, want)
	}
	if got, want := run(envelope, "pages", false), `{"pages":["a",2]}`; got != want {
		t.Errorf("field in place: %s, want %s", got, want)
	}
	if got, want := run(envelope, "x", true), `["a",2]`; got != want {
		t.Errorf("bare: %s, want %s", got, want)
	}
	if Stream(context.Background(), func(*Writer) error { return nil }) {
		t.Error("Stream without a sink (a gRPC call) was taken")
	}
	ctx, sink := With(context.Background(), marshal)
	Stream(ctx, func(*Writer) error { return errors.New("store down") })
	if sent, err := sink.Send(&bytes.Buffer{}); sent || err == nil {
		t.Errorf("a failure before anything was sent: sent %v, %v", sent, err)
	}
}

// TestAnswer: Marshal makes the bytes the facade's marshaler would, and
// Answer hands them over as the whole answer, once; without a sink (a gRPC
// call) neither is taken, and a sink holding a streamed answer takes no
// bytes besides.
func TestAnswer(t *testing.T) {
	marshal := func(m proto.Message) ([]byte, error) { return protojson.Marshal(m) }
	m := structpb.NewStringValue("a")
	if _, ok, _ := Marshal(context.Background(), m); ok || Answer(context.Background(), []byte(`"a"`)) {
		t.Fatal("taken without a sink")
	}
	ctx, sink := With(context.Background(), marshal)
	b, ok, err := Marshal(ctx, m)
	if !ok || err != nil || string(b) != `"a"` {
		t.Fatalf("Marshal: %q %v %v", b, ok, err)
	}
	if _, held := sink.Answered(); held {
		t.Fatal("answered before Answer")
	}
	if !Answer(ctx, b) || Answer(ctx, []byte(`"b"`)) || Stream(ctx, func(*Writer) error { return nil }) {
		t.Fatal("Answer: not taken once, or taken twice, or a stream taken after it")
	}
	if got, held := sink.Answered(); !held || string(got) != `"a"` || sink.Streaming() {
		t.Fatalf("Answered: %q %v", got, held)
	}
	ctx, sink = With(context.Background(), marshal)
	Stream(ctx, func(*Writer) error { return nil })
	if Answer(ctx, b) {
		t.Fatal("Answer taken beside a stream")
	}
	if _, held := sink.Answered(); held || !sink.Streaming() {
		t.Fatal("a streaming sink holds bytes")
	}
}
