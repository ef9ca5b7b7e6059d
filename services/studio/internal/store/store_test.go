package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/kvtest"
)

var ctx = context.Background()

// openTemp opens a store on a bbolt engine in a temp folder; at cleanup the
// indexes must agree with the records and the file must pass bbolt's check.
func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nested", "studio.db")
	return openAt(t, path), path
}

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	e, err := boltkv.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every update function runs twice, as an engine retrying on conflict may run it.
	s, err := Open(ctx, kvtest.Twice(e))
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.checkIndexes(); err != nil {
			t.Errorf("indexes: %v", err)
		}
		if err := e.Check(); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		e.Close()
	})
	return s
}

// checkIndexes verifies, in one snapshot, that userkey/ and admin/ hold
// exactly the entries the user records call for.
func (s *Store) checkIndexes() error {
	return s.kv.View(ctx, func(tx kv.ReadTx) error {
		wantKeys, wantAdmins := map[string]uint32{}, map[uint32]bool{}
		err := tx.Scan(userPrefix, nil, func(k, v []byte) error {
			var u User
			if err := decode(v, &u, "user"); err != nil {
				return err
			}
			id := idOf(k, userPrefix)
			wantKeys[string(u.KeyHash)] = id
			if u.IsAdmin {
				wantAdmins[id] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		gotKeys, gotAdmins := map[string]uint32{}, map[uint32]bool{}
		if err := tx.Scan(userKeyPrefix, nil, func(k, v []byte) error {
			gotKeys[string(k[len(userKeyPrefix):])] = idOf(v, nil)
			return nil
		}); err != nil {
			return err
		}
		if err := tx.Scan(adminPrefix, nil, func(k, _ []byte) error { gotAdmins[idOf(k, adminPrefix)] = true; return nil }); err != nil {
			return err
		}
		if fmt.Sprint(gotKeys) != fmt.Sprint(wantKeys) || fmt.Sprint(gotAdmins) != fmt.Sprint(wantAdmins) {
			return fmt.Errorf("key index %v and admin index %v, want %v and %v", gotKeys, gotAdmins, wantKeys, wantAdmins)
		}
		return nil
	})
}

func TestLlmSettingsLifecycle(t *testing.T) {
	s, _ := openTemp(t)
	testLlmSettingsLifecycle(t, s)
}

func testLlmSettingsLifecycle(t *testing.T, s *Store) {
	rec := LlmSettings{ModelName: "m", MaxTokens: 5, StopWords: []string{"a"}, Metadata: []byte(`{"k":"v"}`)}
	created, err := s.CreateLlmSettings(ctx, rec)
	if err != nil || created.ID != 1 {
		t.Fatalf("create: %+v, %v; want id 1", created, err)
	}
	got, err := s.GetLlmSettings(ctx, 1)
	if rec.ID = 1; err != nil || fmt.Sprint(got) != fmt.Sprint(rec) {
		t.Fatalf("get: %+v, %v; want %+v", got, err, rec)
	}
	got, err = s.UpdateLlmSettings(ctx, 1, func(a *LlmSettings) error { a.Seed = 9; return nil })
	if err != nil || got.Seed != 9 || got.ModelName != "m" || got.ID != 1 {
		t.Fatalf("update: %+v, %v", got, err)
	}
	refused := errors.New("refused")
	if _, err := s.UpdateLlmSettings(ctx, 1, func(a *LlmSettings) error { a.Seed = 1; return refused }); !errors.Is(err, refused) {
		t.Fatalf("update whose func fails: err %v, want %v", err, refused)
	}
	if got, _ := s.GetLlmSettings(ctx, 1); got.Seed != 9 {
		t.Fatalf("a failed update changed the record: seed %d, want 9", got.Seed)
	}
	if err := s.DeleteLlmSettings(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"get":    func() error { _, err := s.GetLlmSettings(ctx, 1); return err }(),
		"delete": s.DeleteLlmSettings(ctx, 1),
		"update": func() error {
			_, err := s.UpdateLlmSettings(ctx, 1, func(*LlmSettings) error { return nil })
			return err
		}(),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s after delete: %v, want ErrNotFound", name, err)
		}
	}
	if next, _ := s.CreateLlmSettings(ctx, rec); next.ID != 2 {
		t.Fatalf("id after a delete: %d, want 2 (ids are never reused)", next.ID)
	}
}

func TestListPages(t *testing.T) {
	s, _ := openTemp(t)
	testListPages(t, s)
}

func testListPages(t *testing.T, s *Store) {
	for range 7 {
		if _, err := s.CreateLlmSettings(ctx, LlmSettings{ModelName: "m"}); err != nil {
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
	s, _ := openTemp(t)
	testUsersAndKeys(t, s)
}

func testUsersAndKeys(t *testing.T, s *Store) {
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
	if _, err := s.CreateUser(ctx, User{Email: "b@x", KeyHash: credential.Hash("k1")}); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("a second user with the same key hash: %v, want ErrAlreadyExists", err)
	}
	got, err := s.UserByKeyHash(ctx, credential.Hash("k1"))
	if err != nil || got.ID != u.ID || got.Email != "a@x" {
		t.Fatalf("by key: %+v, %v", got, err)
	}
	admin, err := s.CreateUser(ctx, User{Email: "root@x", IsAdmin: true, KeyHash: credential.Hash("k2")})
	if has, _ := s.HasAdmin(ctx); err != nil || !has {
		t.Fatalf("after creating an admin: HasAdmin false (%v)", err)
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
	if err := s.DeleteUser(ctx, admin.ID); err != nil {
		t.Fatal(err)
	}
	if has, _ := s.HasAdmin(ctx); has {
		t.Fatal("HasAdmin after the only admin was deleted: true")
	}
}

func TestEnsureAdminIsIdempotentAndSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "studio.db")
	e, err := boltkv.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if created, err := s.EnsureAdmin(ctx, credential.Hash("token"), false); err != nil || created != (i == 0) {
			t.Fatalf("EnsureAdmin #%d: created %v, %v", i+1, created, err)
		}
	}
	if created, err := s.EnsureAdmin(ctx, credential.Hash("other"), true); err != nil || created {
		t.Fatalf("EnsureAdmin(onlyFirst) with an admin present: created %v, %v; want false", created, err)
	}
	users, _ := s.ListUsers(ctx)
	if len(users) != 1 || !users[0].IsAdmin {
		t.Fatalf("after the EnsureAdmin calls: %+v, want one admin", users)
	}
	e.Close()
	s = openAt(t, path)
	if u, err := s.UserByKeyHash(ctx, credential.Hash("token")); err != nil || !u.IsAdmin {
		t.Fatalf("after reopening: %+v, %v", u, err)
	}
}

// TestConcurrentFirstAdmin: replicas bootstrapping at once create one admin.
func TestConcurrentFirstAdmin(t *testing.T) {
	s, _ := openTemp(t)
	testConcurrentFirstAdmin(t, s)
}

func testConcurrentFirstAdmin(t *testing.T, s *Store) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := range 16 {
		wg.Go(func() {
			ok, err := s.EnsureAdmin(ctx, credential.Hash(fmt.Sprint("secret", i)), true)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				created++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if users, _ := s.ListUsers(ctx); created != 1 || len(users) != 1 {
		t.Fatalf("16 concurrent first-admin bootstraps: %d reported created, %d users; want 1 and 1", created, len(users))
	}
}

// TestUpgradesVersion1File opens a file written by the bbolt store before
// the kv seam (testdata/v1.db: LLM settings 1 and 3, 2 deleted, the first
// with metadata; the bootstrap admin 1 with key "admin-token", Ana 2 with
// "ana-key", user 3 deleted): records, indexes and sequences carry over.
func TestUpgradesVersion1File(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "v1.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "studio.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path)
	recs, total, err := s.ListLlmSettings(ctx, 0, 10)
	if err != nil || total != 2 || len(recs) != 2 {
		t.Fatalf("LLM settings after the upgrade: %+v (total %d), %v", recs, total, err)
	}
	want := LlmSettings{ID: 1, ModelName: "m1", MaxTokens: 10, Temperature: 0.5, StopWords: []string{"END"}, SystemPrompt: "be brief", Metadata: []byte(`{"n":2,"team":"a"}`)}
	if recs[0].Metadata = bytes.ReplaceAll(recs[0].Metadata, []byte(" "), nil); fmt.Sprint(recs[0]) != fmt.Sprint(want) || recs[1].ID != 3 || recs[1].ModelName != "m3" {
		t.Fatalf("records after the upgrade: %+v, want %+v and m3 with id 3", recs, want)
	}
	for key, want := range map[string]string{"admin-token": "bootstrap-admin@gatehouse.invalid", "ana-key": "ana@example.com"} {
		if u, err := s.UserByKeyHash(ctx, credential.Hash(key)); err != nil || u.Email != want {
			t.Errorf("user with key %s: %+v, %v; want %s", key, u, err, want)
		}
	}
	if _, err := s.UserByKeyHash(ctx, credential.Hash("gone-key")); !errors.Is(err, ErrNotFound) {
		t.Errorf("the deleted user's key: %v, want ErrNotFound", err)
	}
	if has, _ := s.HasAdmin(ctx); !has {
		t.Error("no admin after the upgrade")
	}
	if rec, _ := s.CreateLlmSettings(ctx, LlmSettings{ModelName: "m4"}); rec.ID != 4 {
		t.Errorf("next LLM settings id: %d, want 4 (the version-1 sequence carries over)", rec.ID)
	}
	if u, _ := s.CreateUser(ctx, User{Email: "new@x", KeyHash: credential.Hash("new")}); u.ID != 4 {
		t.Errorf("next user id: %d, want 4", u.ID)
	}
	var legacy int
	s.kv.View(ctx, func(tx kv.ReadTx) (err error) { legacy, err = tx.Count([]byte("legacy/")); return err })
	if legacy != 0 {
		t.Errorf("%d legacy keys left after the upgrade, want 0", legacy)
	}
}
