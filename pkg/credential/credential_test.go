package credential

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
)

// kvStore keeps admin hashes under admin/ in a real bbolt engine.
type kvStore struct{ e kv.Engine }

func newStore(t *testing.T) *kvStore {
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &kvStore{e}
}

func (s *kvStore) EnsureAdmin(ctx context.Context, h []byte, onlyFirst bool) (created bool, err error) {
	err = s.e.Update(ctx, func(tx kv.WriteTx) error {
		created = false
		if v, err := tx.Get(append([]byte("admin/"), h...)); err != nil || v != nil {
			return err
		}
		if n, err := tx.Count([]byte("admin/")); err != nil || (onlyFirst && n > 0) {
			return err
		}
		created = true
		return tx.Put(append([]byte("admin/"), h...), []byte("1"))
	})
	return created, err
}

func (s *kvStore) RetireBootstrap(ctx context.Context, h []byte) (retired string, err error) {
	err = s.e.Update(ctx, func(tx kv.WriteTx) error {
		retired = ""
		prev, err := tx.Get([]byte("bootstrap"))
		if err != nil || prev == nil || bytes.Equal(prev, h) {
			if err == nil && prev == nil {
				err = tx.Put([]byte("bootstrap"), bytes.Clone(h))
			}
			return err
		}
		if err := tx.Delete(append([]byte("admin/"), prev...)); err != nil {
			return err
		}
		retired = "old"
		return tx.Put([]byte("bootstrap"), bytes.Clone(h))
	})
	return retired, err
}

func (s *kvStore) admins(t *testing.T) [][]byte {
	var out [][]byte
	err := s.e.View(context.Background(), func(tx kv.ReadTx) error {
		return tx.Scan([]byte("admin/"), nil, func(k, _ []byte) error { out = append(out, bytes.Clone(k[len("admin/"):])); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBootstrapRotation: a new token retires the previous one's
// credential, reported once; the same token again retires nothing.
func TestBootstrapRotation(t *testing.T) {
	s := newStore(t)
	var retired []string
	note := func(_ context.Context, id string) { retired = append(retired, id) }
	for _, token := range []string{"first-token-0123456789", "first-token-0123456789", "second-token-0123456789"} {
		if err := Bootstrap(context.Background(), s, token, slog.New(slog.DiscardHandler), note); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.admins(t); len(got) != 1 || !bytes.Equal(got[0], Hash("second-token-0123456789")) {
		t.Errorf("admins after a rotation: %d, want only the new token's", len(got))
	}
	if len(retired) != 1 {
		t.Errorf("retired reported %v, want once", retired)
	}
}

func TestBootstrapWithToken(t *testing.T) {
	var log bytes.Buffer
	s := newStore(t)
	for range 2 {
		if err := Bootstrap(context.Background(), s, "Zq7", slog.New(slog.NewTextHandler(&log, nil)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if admins := s.admins(t); len(admins) != 1 || !Equal(admins[0], Hash("Zq7")) {
		t.Fatalf("admins %x, want one with the token's hash", admins)
	}
	if strings.Contains(log.String(), "Zq7") {
		t.Fatalf("the given token was logged: %s", log.String())
	}
	if !strings.Contains(log.String(), "the bootstrap token is short") {
		t.Fatalf("no warning for a 3-byte token: %s", log.String())
	}
}

func TestLongTokenNoWarning(t *testing.T) {
	var log bytes.Buffer
	if err := Bootstrap(context.Background(), newStore(t), "0123456789abcdef", slog.New(slog.NewTextHandler(&log, nil)), nil); err != nil {
		t.Fatal(err)
	}
	if log.Len() != 0 {
		t.Fatalf("a 16-byte token logged: %s", log.String())
	}
}

func TestBootstrapGeneratesOnceAndLogsIt(t *testing.T) {
	var log bytes.Buffer
	s := newStore(t)
	lg := slog.New(slog.NewTextHandler(&log, nil))
	if err := Bootstrap(context.Background(), s, "", lg, nil); err != nil {
		t.Fatal(err)
	}
	first := log.String()
	if err := Bootstrap(context.Background(), s, "", lg, nil); err != nil {
		t.Fatal(err)
	}
	admins := s.admins(t)
	if len(admins) != 1 {
		t.Fatalf("%d admins after two starts, want 1", len(admins))
	}
	if log.String() != first {
		t.Fatalf("a second start logged again: %s", log.String()[len(first):])
	}
	_, secret, _ := strings.Cut(first, "admin_secret=")
	secret = strings.TrimSpace(secret)
	if len(secret) < 43 || !Equal(Hash(secret), admins[0]) {
		t.Fatalf("logged secret %q does not match the stored hash", secret)
	}
}

// TestConcurrentBootstrapCreatesOne: replicas starting together create one
// admin, and only the one that created it logs the secret.
func TestConcurrentBootstrapCreatesOne(t *testing.T) {
	s := newStore(t)
	var mu sync.Mutex
	var log bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&lockedWriter{&mu, &log}, nil))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := Bootstrap(context.Background(), s, "", lg, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(s.admins(t)); n != 1 {
		t.Fatalf("%d admins after 8 concurrent starts, want 1", n)
	}
	if n := strings.Count(log.String(), "admin_secret="); n != 1 {
		t.Fatalf("the secret was logged %d times, want once:\n%s", n, log.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestNewSecretIsRandom(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b || len(a) != 43 {
		t.Fatalf("NewSecret gave %q and %q", a, b)
	}
}

func TestLookupMemo(t *testing.T) {
	calls := 0
	find := func(answer string, err error) func() (string, error) {
		return func() (string, error) { calls++; return answer, err }
	}
	a, b := Hash("key-a"), Hash("key-b")

	// Without a memo every lookup reads.
	for range 2 {
		if v, _ := Lookup(context.Background(), a, find("alice", nil)); v != "alice" {
			t.Fatalf("lookup without a memo: %q", v)
		}
	}
	if calls != 2 {
		t.Errorf("%d reads without a memo, want 2", calls)
	}

	calls = 0
	ctx := WithLookupMemo(context.Background())
	failed := errors.New("store unavailable")
	if _, err := Lookup(ctx, a, find("", failed)); err != failed {
		t.Fatalf("a failed lookup: %v", err)
	}
	for range 2 {
		if v, err := Lookup(ctx, a, find("alice", nil)); v != "alice" || err != nil {
			t.Fatalf("lookup a: %q %v", v, err)
		}
	}
	if v, _ := Lookup(ctx, b, find("bob", nil)); v != "bob" {
		t.Errorf("another key's lookup answered %q, want bob", v)
	}
	if calls != 3 {
		t.Errorf("%d reads, want 3 (the failure is not remembered; a's second lookup is; b is another key)", calls)
	}
	if v, _ := Lookup(WithLookupMemo(context.Background()), b, find("bob again", nil)); v != "bob again" {
		t.Errorf("a new request's memo answered %q, want a fresh read", v)
	}
}
