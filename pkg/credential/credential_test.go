package credential

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

type memStore struct{ admins [][]byte }

func (m *memStore) HasAdmin(context.Context) (bool, error) { return len(m.admins) > 0, nil }
func (m *memStore) EnsureAdmin(_ context.Context, h []byte) error {
	for _, a := range m.admins {
		if Equal(a, h) {
			return nil
		}
	}
	m.admins = append(m.admins, h)
	return nil
}

func TestBootstrapWithToken(t *testing.T) {
	var log bytes.Buffer
	s := &memStore{}
	for range 2 {
		if err := Bootstrap(context.Background(), s, "tok", slog.New(slog.NewTextHandler(&log, nil))); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.admins) != 1 || !Equal(s.admins[0], Hash("tok")) {
		t.Fatalf("admins %x, want one with the token's hash", s.admins)
	}
	if strings.Contains(log.String(), "tok") {
		t.Fatalf("the given token was logged: %s", log.String())
	}
}

func TestBootstrapGeneratesOnceAndLogsIt(t *testing.T) {
	var log bytes.Buffer
	s := &memStore{}
	lg := slog.New(slog.NewTextHandler(&log, nil))
	if err := Bootstrap(context.Background(), s, "", lg); err != nil {
		t.Fatal(err)
	}
	first := log.String()
	if err := Bootstrap(context.Background(), s, "", lg); err != nil {
		t.Fatal(err)
	}
	if len(s.admins) != 1 {
		t.Fatalf("%d admins after two starts, want 1", len(s.admins))
	}
	if log.String() != first {
		t.Fatalf("a second start logged again: %s", log.String()[len(first):])
	}
	_, secret, _ := strings.Cut(first, "admin_secret=")
	secret = strings.TrimSpace(secret)
	if len(secret) < 43 || !Equal(Hash(secret), s.admins[0]) {
		t.Fatalf("logged secret %q does not match the stored hash", secret)
	}
}

func TestNewSecretIsRandom(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b || len(a) != 43 {
		t.Fatalf("NewSecret gave %q and %q", a, b)
	}
}
