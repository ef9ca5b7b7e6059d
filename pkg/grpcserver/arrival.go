package grpcserver

import (
	"bufio"
	"context"
	"encoding/binary"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"

	"github.com/gatehouse/gatehouse/pkg/inflight"
)

// A guarded call's message is followed as its bytes arrive, on the
// connection itself: grpc-go shows nothing of a message before it is whole
// and, once the handler asks for it, lets its sender send all the length
// it declares. So each connection the server accepts is read through a
// meter (installed as the transport credentials' handshake, so under TLS it
// sees the plain HTTP/2 frames), which grpc-go reads without a buffer of
// its own (grpc.ReadBufferSize(0)): the meter delivers exactly the frames
// grpc-go asks for, in order, and counts each DATA frame's bytes to its
// stream. The front door's tap runs in the same reader right after a
// stream's HEADERS frame, which is how a call finds its stream's count
// (track). The call is admitted when 64 KiB fit in the in-flight budget
// (waiting for room as a REST request does); then its hold is what has
// arrived and grows with it (inflight.Hold.TryGrow, in the reader, which
// must not wait: bytes that do not fit end the call busy), bytes past what
// the method's limit allows end it ResourceExhausted (wireLimit), and the
// call ends DeadlineExceeded when its message stops arriving
// (inflight.Progress).

// meterCreds wraps the transport credentials (TLS, or none) so that every
// connection is read through a meter.
type meterCreds struct {
	credentials.TransportCredentials
}

func newMeterCreds(base credentials.TransportCredentials) meterCreds {
	if base == nil {
		base = insecure.NewCredentials()
	}
	return meterCreds{base}
}

func (c meterCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		return nil, nil, err
	}
	m := newMeter(conn)
	return m, meteredInfo{AuthInfo: info, meter: m}, nil
}

func (c meterCreds) Clone() credentials.TransportCredentials {
	return meterCreds{c.TransportCredentials.Clone()}
}

// meteredInfo is the connection's AuthInfo (peer.Peer), leading to its
// meter.
type meteredInfo struct {
	credentials.AuthInfo
	meter *meter
}

// frameHeaderLen and the frame types of RFC 9113 the meter follows;
// clientPreface is the length of the connection preface before them.
const (
	frameHeaderLen = 9
	frameData      = 0x0
	frameHeaders   = 0x1
	clientPreface  = 24
	meterBuffer    = 32 << 10 // grpc-go's default read buffer
)

// meter is a connection as grpc-go's reader reads it. Its frame state is
// the reader's alone (one goroutine); streams is shared with the calls.
type meter struct {
	net.Conn
	r *bufio.Reader

	preface int                  // bytes of the client preface still to pass
	head    [frameHeaderLen]byte // the frame header being read
	nhead   int
	left    uint32   // payload bytes of the current frame still to come
	data    *arrival // the current DATA frame's call, nil if none is followed
	headers uint32   // the stream of the last HEADERS frame read

	mu      sync.Mutex
	streams map[uint32]*arrival
}

func newMeter(c net.Conn) *meter {
	return &meter{Conn: c, r: bufio.NewReaderSize(c, meterBuffer), preface: clientPreface, streams: map[uint32]*arrival{}}
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.follow(p[:n])
	return n, err
}

// follow walks the bytes grpc-go has just read: frame headers are parsed,
// DATA payloads counted to their stream's call.
func (m *meter) follow(b []byte) {
	for len(b) > 0 {
		switch {
		case m.preface > 0:
			k := min(m.preface, len(b))
			m.preface -= k
			b = b[k:]
		case m.left > 0:
			k := min(int(m.left), len(b))
			if m.data != nil {
				m.data.arrive(int64(k))
			}
			m.left -= uint32(k)
			b = b[k:]
		default:
			k := copy(m.head[m.nhead:], b)
			m.nhead += k
			b = b[k:]
			if m.nhead == frameHeaderLen {
				m.nhead = 0
				m.frame()
			}
		}
	}
}

// frame starts the frame whose header has just been read.
func (m *meter) frame() {
	m.left = uint32(m.head[0])<<16 | uint32(m.head[1])<<8 | uint32(m.head[2])
	stream := binary.BigEndian.Uint32(m.head[5:]) & (1<<31 - 1)
	m.data = nil
	switch m.head[3] {
	case frameHeaders:
		m.headers = stream
	case frameData:
		m.mu.Lock()
		m.data = m.streams[stream]
		m.mu.Unlock()
	}
}

// OpenStreamBytes is what a stream of a method that needs no credentials
// (gRPC health, server reflection: small requests) may send in all; past
// it the stream's connection is closed, since nothing else ends such a
// stream while grpc-go reads a message of up to MaxRecvMsgSize for it.
const OpenStreamBytes = 64 << 10

// track follows the call whose stream's HEADERS frame the connection has
// just read (the tap runs in the reader, before the next frame), until the
// stream ends; a guarded call finds it with arrivalOf. A stream that is
// not guarded (open) may send OpenStreamBytes, then its connection is
// closed. A stream on a connection without a meter is not followed.
func track(ctx context.Context, open bool) context.Context {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ctx
	}
	info, ok := p.AuthInfo.(meteredInfo)
	if !ok {
		return ctx
	}
	m, id := info.meter, info.meter.headers
	a := newArrival()
	if open {
		a.max, a.overflow = OpenStreamBytes, func() { m.Conn.Close() }
	}
	m.mu.Lock()
	m.streams[id] = a
	m.mu.Unlock()
	context.AfterFunc(ctx, func() {
		m.mu.Lock()
		delete(m.streams, id)
		m.mu.Unlock()
	})
	return context.WithValue(ctx, arrivalKey{}, a)
}

type arrivalKey struct{}

func arrivalOf(ctx context.Context) *arrival {
	a, _ := ctx.Value(arrivalKey{}).(*arrival)
	return a
}

// arrival is what has arrived of one call's message.
type arrival struct {
	mu       sync.Mutex
	arrived  int64
	progress inflight.Progress
	hold     *inflight.Hold // once the call is admitted
	reserved int64          // what hold holds for the message
	whole    bool           // the message is read: the hold no longer grows
	max      int64          // the most the message may take on the wire
	failed   chan struct{}  // closed when the call fails: err says why
	err      error
	overflow func() // when set, runs as the call fails (an open stream's)
}

func newArrival() *arrival {
	return &arrival{progress: inflight.NewProgress(time.Now()), max: MaxRecvMsgSize + 5, failed: make(chan struct{})}
}

// arrive counts n more bytes of the call's stream and grows its hold by
// them; when they do not fit, the call fails (failed is closed).
func (a *arrival) arrive(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.arrived += n
	a.progress.Arrived(a.arrived)
	a.cover()
}

// cover refuses a message that went past its method's limit, and grows
// the hold to cover what has arrived (exactly: a call's hold is its bytes,
// so a client's small calls beside its large one hold little of its key's
// share). a.mu is held.
func (a *arrival) cover() {
	if a.whole || a.isFailed() {
		return
	}
	if a.arrived > a.max {
		a.fail(errTooLarge())
		return
	}
	if a.hold == nil || a.arrived <= a.reserved {
		return
	}
	grow := a.arrived - a.reserved
	if err := a.hold.TryGrow(grow); err != nil {
		a.fail(err)
		return
	}
	a.reserved += grow
}

// fail ends the call with err. a.mu is held.
func (a *arrival) fail(err error) {
	a.err = err
	close(a.failed)
	if a.overflow != nil {
		a.overflow()
	}
}

func (a *arrival) isFailed() bool {
	select {
	case <-a.failed:
		return true
	default:
		return false
	}
}

// admit gives the call's hold, admitted with reserved bytes, to cover the
// message as it arrives: it keeps what has arrived so far.
func (a *arrival) admit(hold *inflight.Hold, reserved int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hold, a.reserved = hold, min(reserved, a.arrived)
	hold.Shrink(a.reserved)
	a.cover()
}

// limit sets the most the message may take on the wire (wireLimit).
func (a *arrival) limit(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.max = n
	a.cover()
}

// read marks the message read: its hold no longer grows.
func (a *arrival) read() {
	a.mu.Lock()
	a.whole = true
	a.mu.Unlock()
}

// deadline is when the message's next bytes must have arrived.
func (a *arrival) deadline() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.progress.Deadline()
}
