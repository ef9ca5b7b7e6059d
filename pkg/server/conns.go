package server

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// capListener lets at most max connections be open at once. A connection
// over the cap is answered (when refuse is set) with a ready-made response
// — for HTTP a 503 in the service's error shape — and closed, by at most
// maxRefusers goroutines at a time; beyond those it is closed at once.
type capListener struct {
	net.Listener
	max      int64
	open     atomic.Int64
	refuse   []byte
	refusing chan struct{}
}

const (
	maxRefusers = 64
	// refuseLinger is how long a refused connection is read from after the
	// answer, so that closing it does not reset the answer away.
	refuseLinger = time.Second
)

func newCapListener(l net.Listener, max int, refuse []byte) *capListener {
	return &capListener{Listener: l, max: int64(max), refuse: refuse, refusing: make(chan struct{}, maxRefusers)}
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &cappedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.refuseConn(c)
	}
}

func (l *capListener) refuseConn(c net.Conn) {
	if l.refuse == nil {
		c.Close()
		return
	}
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		c.SetDeadline(time.Now().Add(refuseLinger))
		if _, err := c.Write(l.refuse); err != nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

type cappedConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// rawResponse is a whole HTTP/1.1 response that closes the connection.
func rawResponse(status int, header http.Header, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	header.Write(&b)
	fmt.Fprintf(&b, "Content-Length: %d\r\nConnection: close\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}
