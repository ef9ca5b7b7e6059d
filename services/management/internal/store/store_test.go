package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// open gives a store on a fresh file, checked for consistency at cleanup.
func open(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("consistency: %v", err)
		}
		s.Close()
	})
	return s
}

func classic(id, dbID, name string) API {
	return API{ID: id, DBID: dbID, Kind: Classic, Doc: []byte(fmt.Sprintf(`{"api_id":%q,"name":%q,"n":9007199254740993}`, id, name))}
}

func oas(id, dbID string, cats ...string) API {
	return API{ID: id, DBID: dbID, Kind: OAS, Categories: cats,
		Doc: []byte(`{"openapi":"3.0.3","x-tyk-api-gateway":{"info":{"id":"` + id + `","name":"N ` + id + `"}},"z":1.50}`)}
}

func db(n int) string { return fmt.Sprintf("%024x", n) }

func put(t *testing.T, s *Store, apis ...API) {
	t.Helper()
	if err := s.Update(func(tx *Tx) error {
		for _, a := range apis {
			if err := tx.PutAPI(a); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, s *Store, id string) (API, error) {
	t.Helper()
	var a API
	err := s.View(func(tx *Tx) (err error) { a, err = tx.API(id); return err })
	return a, err
}

func TestPutAndGet(t *testing.T) {
	s := open(t)
	put(t, s, classic("c1", db(1), "Pets #animals #shop #animals"), oas("o1", db(2), " b ", "a", "", "b"))
	c, err := get(t, s, "c1")
	if err != nil || c.Name != "Pets #animals #shop #animals" || !slices.Equal(c.Categories, []string{"animals", "shop"}) ||
		!strings.Contains(string(c.Doc), "9007199254740993") {
		t.Fatalf("classic: %+v %v", c, err)
	}
	o, err := get(t, s, "o1")
	want := `{"openapi":"3.0.3","x-tyk-api-gateway":{"info":{"id":"o1","name":"N o1","dbId":"` + db(2) + `"}},"z":1.50}`
	if err != nil || string(o.Doc) != want || o.Name != "N o1" || !slices.Equal(o.Categories, []string{"b", "a"}) {
		t.Fatalf("oas: %+v %v\nwant doc %s", o, err, want)
	}
	if _, err := get(t, s, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	// a db id held by another API is refused, and nothing changes
	err = s.Update(func(tx *Tx) error { return tx.PutAPI(classic("c2", db(1), "x")) })
	if !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("db id taken: %v", err)
	}
	for _, bad := range []API{{ID: "", DBID: db(3), Kind: Classic}, {ID: "x", DBID: "short", Kind: Classic}, {ID: "x", DBID: db(3)}} {
		if err := s.Update(func(tx *Tx) error { return tx.PutAPI(bad) }); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
}

func TestCategoriesIndex(t *testing.T) {
	s := open(t)
	put(t, s, classic("c1", db(1), "A #x #y"), classic("c2", db(2), "B #y"), oas("o1", db(3), "x", "z"))
	counts := func() string {
		var out []string
		s.View(func(tx *Tx) error {
			for _, c := range tx.Categories() {
				out = append(out, fmt.Sprintf("%s=%d", c.Name, c.Count))
			}
			return nil
		})
		return strings.Join(out, ",")
	}
	if got := counts(); got != "x=2,y=2,z=1" {
		t.Fatalf("counts %s", got)
	}
	// replacing and deleting move the counts
	put(t, s, classic("c1", db(1), "A renamed #z"))
	if got := counts(); got != "x=1,y=1,z=2" {
		t.Fatalf("after rename: %s", got)
	}
	s.Update(func(tx *Tx) error { return tx.DeleteAPI("o1") })
	if got := counts(); got != "y=1,z=1" {
		t.Fatalf("after delete: %s", got)
	}
	list := func(cats []string, offset, limit int) ([]string, int) {
		var ids []string
		var total int
		s.View(func(tx *Tx) error {
			apis, n, err := tx.List(cats, offset, limit)
			for _, a := range apis {
				ids = append(ids, a.ID)
			}
			total = n
			return err
		})
		return ids, total
	}
	if ids, n := list([]string{"y", "z"}, 0, -1); !slices.Equal(ids, []string{"c1", "c2"}) || n != 2 {
		t.Fatalf("y or z: %v %d", ids, n)
	}
	if ids, n := list(nil, 1, 1); !slices.Equal(ids, []string{"c2"}) || n != 2 {
		t.Fatalf("page: %v %d", ids, n)
	}
	if ids, n := list([]string{"none"}, 0, 10); len(ids) != 0 || n != 0 {
		t.Fatalf("none: %v %d", ids, n)
	}
}

func TestVersionsStagingAndKindChange(t *testing.T) {
	s := open(t)
	base := oas("base", db(1))
	v1, v2 := oas("base-v1", db(2)), oas("base-v2", db(3))
	v1.BaseID, v2.BaseID = "base", "base"
	staged := oas("staging-c", db(4))
	staged.StagedFrom = "c"
	put(t, s, classic("c", db(5), "C"), base, v1, v2, staged, oas("other", db(6)))
	s.View(func(tx *Tx) error {
		if got := tx.Children("base"); !slices.Equal(got, []string{"base-v1", "base-v2"}) {
			t.Errorf("children %v", got)
		}
		if id, ok := tx.StagedCopy("c"); !ok || id != "staging-c" {
			t.Errorf("staged copy %q %v", id, ok)
		}
		if got := tx.IDs(Classic); !slices.Equal(got, []string{"c"}) {
			t.Errorf("classic IDs %v", got)
		}
		if got := tx.StagedClassicIDs(); !slices.Equal(got, []string{"c"}) {
			t.Errorf("staged classic IDs %v", got)
		}
		return nil
	})
	var removed []string
	s.Update(func(tx *Tx) (err error) { removed, err = tx.DeleteAPIWithVersions("base"); return err })
	if !slices.Equal(removed, []string{"base", "base-v1", "base-v2"}) {
		t.Fatalf("removed %v", removed)
	}
	// promote: the staged copy replaces the classic API, keeping its db id, in one transaction
	err := s.Update(func(tx *Tx) error {
		st, err := tx.API("staging-c")
		if err != nil {
			return err
		}
		c, err := tx.API("c")
		if err != nil {
			return err
		}
		if err := tx.DeleteAPI("staging-c"); err != nil {
			return err
		}
		return tx.PutAPI(API{ID: "c", DBID: c.DBID, Kind: OAS, Doc: st.Doc, Categories: []string{"k"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := get(t, s, "c")
	if c.Kind != OAS || c.DBID != db(5) || !strings.Contains(string(c.Doc), `"dbId":"`+db(5)+`"`) {
		t.Fatalf("promoted: %+v %s", c, c.Doc)
	}
	s.View(func(tx *Tx) error {
		if _, ok := tx.StagedCopy("c"); ok {
			t.Error("staged link survived")
		}
		return nil
	})
	// a failing batch leaves nothing behind
	err = s.Update(func(tx *Tx) error {
		if err := tx.PutAPI(oas("x1", db(7))); err != nil {
			return err
		}
		return errors.New("abort")
	})
	if _, gerr := get(t, s, "x1"); err == nil || !errors.Is(gerr, ErrNotFound) {
		t.Fatalf("rolled back batch: %v %v", err, gerr)
	}
}

func TestCorruptRecord(t *testing.T) {
	s := open(t)
	put(t, s, oas("o", db(1), "a"))
	s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(apisBucket).Put([]byte("bad"), []byte{1, 3, '{', '{', '{'})
	})
	if _, err := get(t, s, "bad"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt record: %v", err)
	}
	s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(apisBucket).Delete([]byte("bad")) })
}

func TestUsers(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, User{Email: "A@x.test", KeyHash: []byte("h1"), Permissions: map[string]string{"apis": "read"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, User{Email: "a@X.test", KeyHash: []byte("h2")}); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate email: %v", err)
	}
	if got, err := s.UserByKeyHash(ctx, []byte("h1")); err != nil || got.ID != u.ID {
		t.Fatalf("by key: %v %v", got, err)
	}
	if _, err := s.UpdateUser(ctx, u.ID, func(u *User) error { u.KeyHash = []byte("h3"); u.Email = "b@x.test"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByKeyHash(ctx, []byte("h1")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old key: %v", err)
	}
	if _, err := s.CreateUser(ctx, User{Email: "a@x.test", KeyHash: []byte("h4"), Permissions: map[string]string{"users": "read"}}); err != nil {
		t.Fatalf("freed email: %v", err)
	}
	if has, _ := s.HasAdmin(ctx); has {
		t.Fatal("no admin yet")
	}
	for range 2 {
		if err := s.EnsureAdmin(ctx, []byte("0123456789admin")); err != nil {
			t.Fatal(err)
		}
	}
	users, total, _ := s.ListUsers(ctx, 0, -1)
	if has, _ := s.HasAdmin(ctx); !has || total != 3 || len(users) != 3 {
		t.Fatalf("admin: %v users %d", has, total)
	}
	if err := s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByKeyHash(ctx, []byte("h3")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted user's key: %v", err)
	}
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, oas("o", db(1), "kept"))
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if a, err := get(t, s, "o"); err != nil || !slices.Equal(a.Categories, []string{"kept"}) {
		t.Fatalf("after reopen: %+v %v", a, err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkMigrateBatch measures what a migration of 10,000 APIs costs the
// store: per API a read, an OAS write with categories and a child version,
// in transactions of 1,000 APIs.
func BenchmarkMigrateBatch(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s, err := Open(filepath.Join(b.TempDir(), "m.db"))
		if err != nil {
			b.Fatal(err)
		}
		const n = 10000
		s.Update(func(tx *Tx) error {
			for i := range n {
				tx.PutAPI(classic(fmt.Sprintf("c%05d", i), db(i), fmt.Sprintf("API %d #team%d", i, i%10)))
			}
			return nil
		})
		b.StartTimer()
		for start := 0; start < n; start += 1000 {
			err := s.Update(func(tx *Tx) error {
				for i := start; i < start+1000; i++ {
					id := fmt.Sprintf("c%05d", i)
					c, err := tx.API(id)
					if err != nil {
						return err
					}
					base := oas(id, c.DBID, c.Categories...)
					if err := tx.PutAPI(base); err != nil {
						return err
					}
					child := oas(id+"-v2", tx.NewDBID())
					child.BaseID = id
					if err := tx.PutAPI(child); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}
