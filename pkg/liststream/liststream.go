// Package liststream lets a list handler answer a REST request with every
// record without holding the answer: the handler, called in-process by the
// REST facade, hands over a function that writes the answer from one store
// snapshot (Stream), and the facade runs it into the response once the
// handler has returned (CONTRACT §0 "Resource bounds": a list answer holds
// at most its buffer, whatever the store holds). A gRPC call, whose answer
// is one message, gets no sink: its handler builds the answer as before.
//
// The facade makes a Sink per request (With) and, when the handler used it,
// writes the answer with Sink.Send instead of marshalling the handler's
// (empty) response; what reaches the client first is Buffer bytes, so a
// store failure before them is still an error status, one after them ends
// the answer early.
//
// A handler may instead answer with bytes it kept of an earlier answer to
// the same question (Marshal, then Answer): the facade writes them as it
// would have written the marshalled message.
package liststream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"
)

// Buffer is how much of an answer is gathered before it goes out.
const Buffer = 64 << 10

type sinkKey struct{}

// Sink carries one request's streamed answer from its handler to the
// facade.
type Sink struct {
	marshal func(proto.Message) ([]byte, error)
	write   func(w *Writer) error
	answer  []byte // prebuilt (Answer)
}

// With returns ctx carrying a new Sink whose Writer marshals messages with
// marshal (the facade's marshaler, so a streamed answer reads exactly as a
// whole one would). With marshal nil the sink takes nothing (Stream
// reports false) until Offer gives it one: the facade makes the sink as a
// request arrives and offers it once the request is routed to an RPC.
func With(ctx context.Context, marshal func(proto.Message) ([]byte, error)) (context.Context, *Sink) {
	s := &Sink{marshal: marshal}
	return context.WithValue(ctx, sinkKey{}, s), s
}

// Key is the context key With puts a sink under. A context of a caller's
// own that answers Value(Key) with a *Sink it keeps (the REST facade's
// one record per request, instead of a context node and a sink of their
// own) carries that sink as With's would; a zero Sink takes nothing until
// offered.
var Key any = sinkKey{}

// Offer makes s take an answer, marshalling its messages with marshal.
func (s *Sink) Offer(marshal func(proto.Message) ([]byte, error)) { s.marshal = marshal }

// Stream, in a handler, hands write over to the REST facade, which runs it
// into the response after the handler returns; the handler then returns an
// empty response. It reports false when ctx has no sink offered (a gRPC
// call, a web UI page's call): the
// handler answers in full itself. write must read the store in one snapshot
// (a View) and write as it reads.
func Stream(ctx context.Context, write func(w *Writer) error) bool {
	s, _ := ctx.Value(sinkKey{}).(*Sink)
	if s == nil || s.marshal == nil || s.write != nil || s.answer != nil {
		return false
	}
	s.write = write
	return true
}

// Streaming reports whether the handler handed a write function over.
func (s *Sink) Streaming() bool { return s != nil && s.write != nil }

// Marshal, in a handler, returns the bytes the REST facade would write of
// m as the request's answer; ok is false when ctx has no sink offered (a
// gRPC call, a web UI page's call). A handler whose answer is a pure
// function of something it can name (a store revision) keeps them and
// answers a later request with them (Answer) instead of a message to be
// marshalled again.
func Marshal(ctx context.Context, m proto.Message) (b []byte, ok bool, err error) {
	s, _ := ctx.Value(sinkKey{}).(*Sink)
	if s == nil || s.marshal == nil {
		return nil, false, nil
	}
	b, err = s.marshal(m)
	return b, true, err
}

// Answer, in a handler, hands b over as the request's whole answer: bytes
// Marshal made of an answer to the same question, which are never changed
// afterwards (they may be written to many requests at once). The handler
// then returns an empty response. It reports false when ctx has no sink
// offered or the handler handed an answer over already.
func Answer(ctx context.Context, b []byte) bool {
	s, _ := ctx.Value(sinkKey{}).(*Sink)
	if s == nil || s.marshal == nil || s.write != nil || s.answer != nil || b == nil {
		return false
	}
	s.answer = b
	return true
}

// Answered returns the bytes the handler handed over with Answer.
func (s *Sink) Answered() ([]byte, bool) {
	if s == nil || s.answer == nil {
		return nil, false
	}
	return s.answer, true
}

// Send runs the handed-over write into out through a Buffer-sized
// buffer. It returns whether anything reached out (an error after that
// cannot be answered with a status) and write's error.
func (s *Sink) Send(out io.Writer) (sent bool, err error) {
	cw := &countingWriter{w: out}
	bw := bufio.NewWriterSize(cw, Buffer)
	if err := s.write(&Writer{w: bw, marshal: s.marshal}); err != nil {
		return cw.n > 0, err
	}
	if err := bw.Flush(); err != nil {
		return true, err
	}
	return true, nil
}

type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// Writer is where a handed-over answer is written.
type Writer struct {
	w       *bufio.Writer
	marshal func(proto.Message) ([]byte, error)
	// a list between Begin and End: the envelope's members after it, and
	// whether an item was written
	rest        []member
	bare, items bool
}

// Write writes raw bytes of the answer (an HttpBody answer's, say).
func (w *Writer) Write(p []byte) (int, error) { return w.w.Write(p) }

// Begin starts a list answer: envelope (a response message, its list field
// left empty) as the facade marshals it, up to the JSON member named field,
// whose array the Items that follow fill; End writes the rest. With bare
// set the answer is the array alone (a method whose HTTP response body is
// the list).
func (w *Writer) Begin(envelope proto.Message, field string, bare bool) error {
	w.bare, w.items, w.rest = bare, false, nil
	if bare {
		return w.w.WriteByte('[')
	}
	raw, err := w.marshal(envelope)
	if err != nil {
		return err
	}
	members, err := objectMembers(raw)
	if err != nil {
		return err
	}
	w.w.WriteByte('{')
	at := len(members) // the list goes last when the envelope leaves it out
	for i, m := range members {
		if m.key == field {
			at = i
			break
		}
	}
	for _, m := range members[:at] {
		w.w.Write(m.raw)
		w.w.WriteByte(',')
	}
	if at < len(members) {
		w.rest = members[at+1:]
	}
	key, _ := json.Marshal(field)
	w.w.Write(key)
	_, err = w.w.WriteString(":[")
	return err
}

// Item writes one item of the list as the facade marshals it.
func (w *Writer) Item(m proto.Message) error {
	b, err := w.marshal(m)
	if err != nil {
		return err
	}
	if w.items {
		w.w.WriteByte(',')
	}
	w.items = true
	_, err = w.w.Write(b)
	return err
}

// End closes the list and the envelope.
func (w *Writer) End() error {
	w.w.WriteByte(']')
	if w.bare {
		return nil
	}
	for _, m := range w.rest {
		w.w.WriteByte(',')
		w.w.Write(m.raw)
	}
	return w.w.WriteByte('}')
}

// member is one member of a JSON object: its key and its raw `"key":value`.
type member struct {
	key string
	raw []byte
}

// objectMembers splits a (small) JSON object into its members, in order.
func objectMembers(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("liststream: the envelope is not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		k, _ := json.Marshal(key)
		out = append(out, member{key: key, raw: append(append(k, ':'), v...)})
	}
	return out, nil
}
