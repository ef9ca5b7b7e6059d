package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/credential"
)

// openTemp opens a store in a temp folder and checks its consistency at cleanup.
func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nested", "studio.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.check(); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		s.Close()
	})
	return s, path
}

func TestLlmSettingsLifecycle(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	attrs := &studiov1.LlmSettingsAttributes{ModelName: "m", MaxTokens: 5, StopWords: []string{"a"}}
	id, err := s.CreateLlmSettings(ctx, attrs)
	if err != nil || id != 1 {
		t.Fatalf("create: id %d, err %v; want 1, nil", id, err)
	}
	got, err := s.GetLlmSettings(ctx, id)
	if err != nil || !proto.Equal(got, attrs) {
		t.Fatalf("get: %v, %v; want %v", got, err, attrs)
	}
	got, err = s.UpdateLlmSettings(ctx, id, func(a *studiov1.LlmSettingsAttributes) error { a.Seed = 9; return nil })
	if err != nil || got.GetSeed() != 9 || got.GetModelName() != "m" {
		t.Fatalf("update: %v, %v", got, err)
	}
	refused := errors.New("refused")
	if _, err := s.UpdateLlmSettings(ctx, id, func(a *studiov1.LlmSettingsAttributes) error { a.Seed = 1; return refused }); !errors.Is(err, refused) {
		t.Fatalf("update whose func fails: err %v, want %v", err, refused)
	}
	if got, _ := s.GetLlmSettings(ctx, id); got.GetSeed() != 9 {
		t.Fatalf("a failed update changed the record: seed %d, want 9", got.GetSeed())
	}
	if err := s.DeleteLlmSettings(ctx, id); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"get":    func() error { _, err := s.GetLlmSettings(ctx, id); return err }(),
		"delete": s.DeleteLlmSettings(ctx, id),
		"update": func() error {
			_, err := s.UpdateLlmSettings(ctx, id, func(*studiov1.LlmSettingsAttributes) error { return nil })
			return err
		}(),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s after delete: %v, want ErrNotFound", name, err)
		}
	}
	next, _ := s.CreateLlmSettings(ctx, attrs)
	if next != 2 {
		t.Fatalf("id after a delete: %d, want 2 (ids are never reused)", next)
	}
}

func TestListPages(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	for range 7 {
		if _, err := s.CreateLlmSettings(ctx, &studiov1.LlmSettingsAttributes{ModelName: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	s.DeleteLlmSettings(ctx, 3)
	tests := []struct {
		offset, limit int
		want          []uint32
	}{{0, 10, []uint32{1, 2, 4, 5, 6, 7}}, {0, 2, []uint32{1, 2}}, {2, 2, []uint32{4, 5}}, {5, 2, []uint32{7}}, {6, 2, nil}}
	for _, tt := range tests {
		recs, total, err := s.ListLlmSettings(ctx, tt.offset, tt.limit)
		if err != nil || total != 6 {
			t.Fatalf("list(%d,%d): total %d, err %v; want 6", tt.offset, tt.limit, total, err)
		}
		var got []uint32
		for _, r := range recs {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("list(%d,%d) = %v, want %v", tt.offset, tt.limit, got, tt.want)
		}
	}
}

func TestUsersAndKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if has, _ := s.HasAdmin(ctx); has {
		t.Fatal("an empty store has an admin")
	}
	u, err := s.CreateUser(ctx, User{Email: "a@x", Name: "A", KeyHash: credential.Hash("k1")})
	if err != nil {
		t.Fatal(err)
	}
	if has, _ := s.HasAdmin(ctx); has {
		t.Fatal("a non-admin user counts as an admin")
	}
	got, err := s.UserByKeyHash(ctx, credential.Hash("k1"))
	if err != nil || got.ID != u.ID || got.Email != "a@x" {
		t.Fatalf("by key: %+v, %v", got, err)
	}
	if err := s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByKeyHash(ctx, credential.Hash("k1")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("key of a deleted user: %v, want ErrNotFound", err)
	}
	if err := s.DeleteUser(ctx, u.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v, want ErrNotFound", err)
	}
}

func TestEnsureAdminIsIdempotentAndSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "studio.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.EnsureAdmin(ctx, credential.Hash("token")); err != nil {
			t.Fatal(err)
		}
	}
	users, _ := s.ListUsers(ctx)
	if len(users) != 1 || !users[0].IsAdmin {
		t.Fatalf("after two EnsureAdmin calls: %+v, want one admin", users)
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if u, err := s.UserByKeyHash(ctx, credential.Hash("token")); err != nil || !u.IsAdmin {
		t.Fatalf("after reopening: %+v, %v", u, err)
	}
}
