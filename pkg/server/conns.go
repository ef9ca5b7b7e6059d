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

// capListener lets at most max connections be open at once, and at most
// perIP of one remote address. A connection over a cap is answered (when
// its refusal is set) with a ready-made response — for HTTP a 503 in the
// service's error shape — and closed, by at most maxRefusers goroutines at
// a time; beyond those it is closed at once. Other addresses keep being
// served while one is at its cap.
type capListener struct {
	net.Listener
	max      int64
	open     atomic.Int64
	refuse   []byte
	refusing chan struct{}

	perIP      int
	refuseIP   []byte
	mu         sync.Mutex
	openFromIP map[string]int
}

const (
	maxRefusers = 64
	// refuseLinger is how long a refused connection is read from after the
	// answer, so that closing it does not reset the answer away.
	refuseLinger = time.Second
)

func newCapListener(l net.Listener, max, perIP int, refuse, refuseIP []byte) *capListener {
	return &capListener{Listener: l, max: int64(max), refuse: refuse, refusing: make(chan struct{}, maxRefusers),
		perIP: perIP, refuseIP: refuseIP, openFromIP: map[string]int{}}
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c)
		if !l.takeIP(ip) {
			l.refuseConn(c, l.refuseIP)
			continue
		}
		if l.open.Add(1) <= l.max {
			return &cappedConn{Conn: c, l: l, ip: ip}, nil
		}
		l.open.Add(-1)
		l.dropIP(ip)
		l.refuseConn(c, l.refuse)
	}
}

func remoteIP(c net.Conn) string {
	addr := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// takeIP counts one more connection of ip unless it is at its cap.
func (l *capListener) takeIP(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.openFromIP[ip] >= l.perIP {
		return false
	}
	l.openFromIP[ip]++
	return true
}

func (l *capListener) dropIP(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.openFromIP[ip]--; l.openFromIP[ip] <= 0 {
		delete(l.openFromIP, ip)
	}
}

func (l *capListener) refuseConn(c net.Conn, refuse []byte) {
	if refuse == nil {
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
		if _, err := c.Write(refuse); err != nil {
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
	ip   string
	once sync.Once
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		c.l.dropIP(c.ip)
	})
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
