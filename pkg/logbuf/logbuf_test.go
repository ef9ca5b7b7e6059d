package logbuf_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/logbuf"
)

// sink is an io.Writer that counts its writes.
type sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.buf.Write(p)
}

func (s *sink) state() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String(), s.writes
}

// Lines written together reach the writer in few writes (one, unless the
// machine stalls the writer for Delay), soon, in their order.
func TestDelay(t *testing.T) {
	var s sink
	w := logbuf.New(&s)
	for i := range 100 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, writes := s.state()
		if out == lines(0, 100) {
			if writes > 10 {
				t.Fatalf("%d writes for 100 lines written together", writes)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing written 10 s after the lines")
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Fprint(w, "later\n") // a new timer for the next lines
	time.Sleep(logbuf.Delay)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out, _ := s.state(); out != lines(0, 100)+"later\n" {
		t.Fatalf("after a later line: %q", out)
	}
}

// A line after Delay without any is written at once (the first line naming
// a process's addresses is read by whoever started it); the lines that follow
// it closely wait.
func TestQuietLineAtOnce(t *testing.T) {
	var s sink
	w := logbuf.New(&s)
	fmt.Fprint(w, "first\n")
	fmt.Fprint(w, "second\n")
	if out, writes := s.state(); out != "first\n" || writes != 1 {
		t.Fatalf("after two lines: %d writes of %q, want the first line alone", writes, out)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(logbuf.Delay + 10*time.Millisecond)
	fmt.Fprint(w, "after a pause\n")
	if out, writes := s.state(); out != "first\nsecond\nafter a pause\n" || writes != 3 {
		t.Fatalf("a line after a pause: %d writes of %q", writes, out)
	}
}

// Close writes what waits, and later lines go straight through.
func TestClose(t *testing.T) {
	var s sink
	w := logbuf.New(&s)
	fmt.Fprint(w, "a\n")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out, _ := s.state(); out != "a\n" {
		t.Fatalf("after Close: %q", out)
	}
	fmt.Fprint(w, "b\n")
	if out, writes := s.state(); out != "a\nb\n" || writes != 2 {
		t.Fatalf("a line after Close: %d writes of %q", writes, out)
	}
}

// At Limit bytes the waiting lines are written at once: memory stays
// bounded whatever the rate.
func TestLimit(t *testing.T) {
	var s sink
	w := logbuf.New(&s)
	line := strings.Repeat("x", 1023) + "\n"
	w.Write([]byte(line)) // at once: the writer was quiet
	for range logbuf.Limit / len(line) {
		w.Write([]byte(line))
	}
	if out, writes := s.state(); len(out) != len(line)+logbuf.Limit || writes != 2 {
		t.Fatalf("%d writes of %d bytes at the limit, want the first line and one of %d", writes, len(out), logbuf.Limit)
	}
}

// Concurrent writers' lines arrive whole (go test -race checks the rest).
func TestConcurrent(t *testing.T) {
	var s sink
	w := logbuf.New(&s)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				fmt.Fprintf(w, "g%d %d\n", g, i)
			}
		})
	}
	wg.Wait()
	w.Close()
	out, _ := s.state()
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(got) != 8000 {
		t.Fatalf("%d lines, want 8000", len(got))
	}
	next := map[string]int{}
	for _, l := range got {
		var g string
		var i int
		if _, err := fmt.Sscanf(l, "%s %d", &g, &i); err != nil || i != next[g] {
			t.Fatalf("line %q out of order or torn (want %s %d)", l, g, next[g])
		}
		next[g]++
	}
}

func lines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}
