// Package redistest runs a real Redis server (Debian's redis-server, which
// the Makefile installs when missing) on a free loopback port for one test,
// without persistence.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/freeport"
)

// Server is one running redis-server.
type Server struct {
	Addr string // host:port
	cmd  *exec.Cmd
}

// Binary is the redis-server the tests run.
const Binary = "redis-server"

// Start runs redis-server on 127.0.0.1 and a free port until the test ends;
// the test fails when the binary is missing (make test installs it).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath(Binary)
	if err != nil {
		t.Fatalf("%s not found: make test installs it (apt-get install -y redis-server): %v", Binary, err)
	}
	for range 5 {
		port := freeport.Port(t)
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port)}
		s.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no", "--protected-mode", "yes")
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if s.wait(5 * time.Second) {
			t.Cleanup(s.Stop)
			return s
		}
		s.Stop() // the port was taken meanwhile: try another
	}
	t.Fatal("redis-server did not start")
	return nil
}

// Stop kills the server (idempotent); a test stops it early to see what a
// client does while Redis is down.
func (s *Server) Stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// Restart starts the server again on the same port.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	_, port, _ := net.SplitHostPort(s.Addr)
	s.cmd = exec.Command(s.cmd.Path, s.cmd.Args[1:]...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !s.wait(5 * time.Second) {
		t.Fatalf("redis-server did not start again on port %s", port)
	}
}

// wait pings the server until it answers PONG.
func (s *Server) wait(within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if s.ping() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func (s *Server) ping() bool {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}
