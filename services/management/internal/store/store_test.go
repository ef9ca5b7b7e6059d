package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/kvtest"
	"github.com/gatehouse/gatehouse/services/management/internal/category"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
)

var bg = context.Background()

// openAt opens the store on the bbolt engine at path.
func openAt(t testing.TB, path string) *Store {
	t.Helper()
	e, err := boltkv.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(bg, kvtest.Twice(e))
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	return s
}

// open gives a store on a fresh file, checked for consistency at cleanup.
func open(t testing.TB) *Store {
	t.Helper()
	s := openAt(t, filepath.Join(t.TempDir(), "m.db"))
	t.Cleanup(func() {
		if err := s.Check(bg); err != nil {
			t.Errorf("consistency: %v", err)
		}
		s.Close()
	})
	return s
}

// classic and oas make records as their writers do (PutAPI trusts them):
// the name read from the document, the categories normalised, an OAS
// document stamped with its db id.
func classic(id, dbID, name string) API {
	return API{ID: id, DBID: dbID, Kind: Classic, Name: name, Categories: category.FromName(name),
		Doc: []byte(fmt.Sprintf(`{"api_id":%q,"name":%q,"n":9007199254740993}`, id, name))}
}

func oas(id, dbID string, cats ...string) API {
	return API{ID: id, DBID: dbID, Kind: OAS, Name: "N " + id, Categories: category.Normalize(cats),
		Doc: []byte(`{"openapi":"3.0.3","x-tyk-api-gateway":{"info":{"id":"` + id + `","name":"N ` + id + `","dbId":"` + dbID + `"}},"z":1.50}`)}
}

func db(n int) string { return fmt.Sprintf("%024x", n) }

func put(t *testing.T, s *Store, apis ...API) {
	t.Helper()
	if err := s.Update(bg, func(tx *Tx) error {
		for _, a := range apis {
			if err := tx.PutAPI(a, AnyRevision); err != nil {
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
	err := s.View(bg, func(tx *Tx) (err error) { a, err = tx.API(id); return err })
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
	err = s.Update(bg, func(tx *Tx) error { return tx.PutAPI(classic("c2", db(1), "x"), AnyRevision) })
	if !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("db id taken: %v", err)
	}
	for _, bad := range []API{{ID: "", DBID: db(3), Kind: Classic}, {ID: "x", DBID: "short", Kind: Classic}, {ID: "x", DBID: db(3)}} {
		if err := s.Update(bg, func(tx *Tx) error { return tx.PutAPI(bad, AnyRevision) }); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
}

func TestCategoriesIndex(t *testing.T) {
	s := open(t)
	put(t, s, classic("c1", db(1), "A #x #y"), classic("c2", db(2), "B #y"), oas("o1", db(3), "x", "z"))
	counts := func() string {
		var out []string
		s.View(bg, func(tx *Tx) error {
			cats, err := tx.Categories()
			if err != nil {
				t.Error(err)
			}
			for _, c := range cats {
				out = append(out, fmt.Sprintf("%s=%d", c.Name, c.Count))
			}
			return nil
		})
		// CategoryCounts answers the same, from its memo while nothing
		// was written, and a caller's change to its answer is its own
		for range 2 {
			cats, err := s.CategoryCounts(bg)
			var memo []string
			for _, c := range cats {
				memo = append(memo, fmt.Sprintf("%s=%d", c.Name, c.Count))
			}
			if err != nil || !slices.Equal(memo, out) {
				t.Fatalf("CategoryCounts %v %v, the index scanned %v", memo, err, out)
			}
			if len(cats) > 0 {
				cats[0].Count = -1
			}
		}
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
	s.Update(bg, func(tx *Tx) error { return tx.DeleteAPI("o1") })
	if got := counts(); got != "y=1,z=1" {
		t.Fatalf("after delete: %s", got)
	}
	list := func(cats []string, offset, limit int) ([]string, int) {
		var ids []string
		var total int
		s.View(bg, func(tx *Tx) error {
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
	s.View(bg, func(tx *Tx) error {
		if got, _ := tx.Children("base"); !slices.Equal(got, []string{"base-v1", "base-v2"}) {
			t.Errorf("children %v", got)
		}
		if id, ok, _ := tx.StagedCopy("c"); !ok || id != "staging-c" {
			t.Errorf("staged copy %q %v", id, ok)
		}
		if got, _ := tx.IDs(Classic); !slices.Equal(got, []string{"c"}) {
			t.Errorf("classic IDs %v", got)
		}
		if got, _ := tx.StagedClassicIDs(); !slices.Equal(got, []string{"c"}) {
			t.Errorf("staged classic IDs %v", got)
		}
		return nil
	})
	var removed []string
	s.Update(bg, func(tx *Tx) (err error) { removed, err = tx.DeleteAPIWithVersions("base"); return err })
	if !slices.Equal(removed, []string{"base", "base-v1", "base-v2"}) {
		t.Fatalf("removed %v", removed)
	}
	// promote: the staged copy replaces the classic API, keeping its db id, in one transaction
	err := s.Update(bg, func(tx *Tx) error {
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
		doc, err := oasdoc.Stamp(st.Doc, c.DBID)
		if err != nil {
			return err
		}
		return tx.PutAPI(API{ID: "c", DBID: c.DBID, Kind: OAS, Doc: doc, Categories: []string{"k"}}, AnyRevision)
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := get(t, s, "c")
	if c.Kind != OAS || c.DBID != db(5) || !strings.Contains(string(c.Doc), `"dbId":"`+db(5)+`"`) {
		t.Fatalf("promoted: %+v %s", c, c.Doc)
	}
	s.View(bg, func(tx *Tx) error {
		if _, ok, _ := tx.StagedCopy("c"); ok {
			t.Error("staged link survived")
		}
		return nil
	})
	// a failing batch leaves nothing behind
	err = s.Update(bg, func(tx *Tx) error {
		if err := tx.PutAPI(oas("x1", db(7)), AnyRevision); err != nil {
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
	for _, bad := range [][]byte{{1, 3, '{', '{', '{'}, {recordVersion, byte(OAS), 9, 'x'}, {recordVersion}} {
		s.e.Update(bg, func(w kv.WriteTx) error { return w.Put(key(apiPrefix, "bad"), bad) })
		if _, err := get(t, s, "bad"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("corrupt record %q: %v", bad, err)
		}
	}
	s.e.Update(bg, func(w kv.WriteTx) error { return w.Delete(key(apiPrefix, "bad")) })
}

// TestHeaderTruncated decodes every prefix of a record: one cut inside its
// header strings (db id, name, staged from, base id, categories, derived
// by) is ErrCorrupt, never a panic or a shorter field; one cut after them
// reads the whole header.
func TestHeaderTruncated(t *testing.T) {
	a := oas("o", db(1), "a", "bb")
	a.StagedFrom, a.BaseID, a.DerivedBy, a.Derived, a.Revision = "c1", "b1", "t1", []byte(`{}`), 300
	v := encodeAPI(a)
	whole, _, err := decodeHeader("o", v)
	if err != nil {
		t.Fatal(err)
	}
	if whole.DBID != a.DBID || whole.Name != a.Name || whole.StagedFrom != "c1" || whole.BaseID != "b1" ||
		!slices.Equal(whole.Categories, a.Categories) || whole.DerivedBy != "t1" || whole.Revision != 300 {
		t.Fatalf("decoded %+v from %+v", whole, a)
	}
	for i := range len(v) {
		h, _, err := decodeHeader("o", v[:i])
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("cut at %d: %v", i, err)
			}
			continue
		}
		if h.DBID != whole.DBID || h.Name != whole.Name || !slices.Equal(h.Categories, whole.Categories) || h.DerivedBy != whole.DerivedBy {
			t.Fatalf("cut at %d decoded %+v", i, h)
		}
	}
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
		if _, err := s.EnsureAdmin(ctx, []byte("0123456789admin"), false); err != nil {
			t.Fatal(err)
		}
	}
	users, total, _ := s.ListUsers(ctx, 0, -1)
	if has, _ := s.HasAdmin(ctx); !has || total != 3 || len(users) != 3 {
		t.Fatalf("admin: %v users %d", has, total)
	}
	if err := s.DeleteUser(ctx, u.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByKeyHash(ctx, []byte("h3")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted user's key: %v", err)
	}
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	put(t, s, oas("o", db(1), "kept"))
	s.Close()
	s = openAt(t, path)
	defer s.Close()
	if a, err := get(t, s, "o"); err != nil || !slices.Equal(a.Categories, []string{"kept"}) {
		t.Fatalf("after reopen: %+v %v", a, err)
	}
	if err := s.Check(bg); err != nil {
		t.Fatal(err)
	}
}

// TestLegacyFile opens a file of the bucket-per-index layout (version 1,
// before the kv seam) and finds every record, with its indexes rebuilt and
// the old buckets gone.
func TestLegacyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	old := []string{"apis", "api_db_ids", "api_categories", "category_counts", "api_staged", "api_children", "users", "user_keys", "user_emails"}
	var names [][]byte
	for _, n := range old {
		names = append(names, []byte(n))
	}
	// that layout: a bucket per record kind and index, and meta/schema_version 1
	file, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	record := func(meta, doc string) []byte {
		return append(append([]byte{1, byte(len(meta))}, meta...), doc...)
	}
	err = file.Update(func(tx *bolt.Tx) error {
		for _, name := range append(names, []byte("meta")) {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := tx.Bucket([]byte("meta")).Put([]byte("schema_version"), []byte("1")); err != nil {
			return err
		}
		apis := tx.Bucket([]byte("apis"))
		apis.Put([]byte("c"), record(`{"k":1,"db":"`+db(1)+`","n":"C #x","c":["x"]}`, `{"api_id":"c","name":"C #x"}`))
		apis.Put([]byte("staging-c"), record(`{"k":2,"db":"`+db(2)+`","n":"S","c":["y"],"sf":"c"}`, `{"openapi":"3.0.3"}`))
		apis.Put([]byte("v"), record(`{"k":2,"db":"`+db(3)+`","n":"V","b":"staging-c"}`, `{"openapi":"3.0.3"}`))
		tx.Bucket([]byte("category_counts")).Put([]byte("stale"), []byte{0, 0, 0, 0, 0, 0, 0, 9})
		return tx.Bucket([]byte("users")).Put([]byte("u1"), []byte(`{"id":"u1","email_address":"A@x.test","key_hash":"aDE=","user_permissions":{}}`))
	})
	file.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path)
	defer s.Close()
	if err := s.Check(bg); err != nil {
		t.Fatal(err)
	}
	err = s.View(bg, func(tx *Tx) error {
		if a, err := tx.API("c"); err != nil || a.Kind != Classic || a.DBID != db(1) || string(a.Doc) != `{"api_id":"c","name":"C #x"}` {
			t.Errorf("classic: %+v %v", a, err)
		}
		if id, ok, _ := tx.StagedCopy("c"); !ok || id != "staging-c" {
			t.Errorf("staged link: %q %v", id, ok)
		}
		if got, _ := tx.Children("staging-c"); !slices.Equal(got, []string{"v"}) {
			t.Errorf("children: %v", got)
		}
		if cats, _ := tx.Categories(); len(cats) != 2 || cats[0] != (CategoryCount{"x", 1}) || cats[1] != (CategoryCount{"y", 1}) {
			t.Errorf("categories: %v", cats)
		}
		n, err := tx.r.Count([]byte("legacy/"))
		if n != 0 || err != nil {
			t.Errorf("%d legacy keys left (%v)", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := s.UserByKeyHash(bg, []byte("h1")); err != nil || u.ID != "u1" {
		t.Errorf("legacy user by key: %+v %v", u, err)
	}
}

// BenchmarkMigrateAPIs measures what a migration of 10,000 APIs costs the
// store: per API one transaction with a read, an OAS write with categories
// and a child version, 64 transactions in flight as the migration engine
// issues them.
func BenchmarkMigrateAPIs(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		e, err := boltkv.Open(filepath.Join(b.TempDir(), "m.db"))
		if err != nil {
			b.Fatal(err)
		}
		s, err := Open(bg, e)
		if err != nil {
			b.Fatal(err)
		}
		const n = 10000
		s.Update(bg, func(tx *Tx) error {
			for i := range n {
				tx.PutAPI(classic(fmt.Sprintf("c%05d", i), db(i), fmt.Sprintf("API %d #team%d", i, i%10)), AnyRevision)
			}
			return nil
		})
		b.StartTimer()
		var wg sync.WaitGroup
		slots := make(chan struct{}, 64)
		for i := range n {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				id := fmt.Sprintf("c%05d", i)
				err := s.Update(bg, func(tx *Tx) error {
					c, err := tx.API(id)
					if err != nil {
						return err
					}
					base := oas(id, c.DBID, c.Categories...)
					if err := tx.PutAPI(base, AnyRevision); err != nil {
						return err
					}
					child := oas(id+"-v2", NewDBID())
					child.BaseID = id
					return tx.PutAPI(child, AnyRevision)
				})
				if err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkDeleteAPIs is the store's part of DELETE /api/apis/{id} (the
// app's BenchmarkREST32/delete, without REST and audit): b.N classic APIs
// in 16 categories, created in batches of 32 before the timer as the REST
// creates are, then deleted in that order by 32 concurrent writers, each
// delete in its own durable transaction with the key-reference check of
// the handler (no keys: an empty index range).
func BenchmarkDeleteAPIs(b *testing.B) {
	e, err := boltkv.Open(filepath.Join(b.TempDir(), "d.db"))
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(bg, e)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id := func(i int) string { return fmt.Sprintf("bench%08d", i) }
	for i := 0; i < b.N; i += 32 {
		err := s.Update(bg, func(tx *Tx) error {
			for j := i; j < min(i+32, b.N); j++ {
				if err := tx.PutAPI(classic(id(j), NewDBID(), fmt.Sprintf("Bench %d #team%d", j, j%16)), NotStored); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	inUse := func(tx *Tx, a API) error {
		return tx.EachKeyHashByAPI(a.ID, nil, func(string) error { return errors.New("in use") })
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
				if err := s.DeleteAPI(bg, id(i), 0, inUse); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deletes/s")
}

// TestNewDBIDAscends: db ids are 24 hex and one process's ascend, but
// where the 3-byte counter wraps (at most once in 1,000).
func TestNewDBIDAscends(t *testing.T) {
	prev, descents := NewDBID(), 0
	for range 1000 {
		id := NewDBID()
		if !IsDBID(id) {
			t.Fatalf("NewDBID() = %q, want 24 lowercase hex", id)
		}
		if id <= prev {
			descents++
		}
		prev = id
	}
	if descents > 1 {
		t.Fatalf("1,000 db ids descended %d times, want at most once (the counter's wrap)", descents)
	}
}

func TestResolve(t *testing.T) {
	s := open(t)
	// An API ID may look like a db id as long as no API holds it as one.
	put(t, s, classic("c1", db(0xab), "C"), oas("o1", db(2)), classic(db(1+1000), db(3), "Looks like a db id"))
	for _, c := range []struct {
		ref, want string
	}{
		{"c1", "c1"},
		{db(0xab), "c1"},
		{"o1", "o1"},
		{db(3), db(1 + 1000)},
		{db(1 + 1000), db(1 + 1000)},
		{db(2), "o1"},
		{db(9), ""},
		{"C1", ""},
		{strings.ToUpper(db(0xab)), ""},
		{"", ""},
	} {
		var got API
		err := s.View(bg, func(tx *Tx) (err error) { got, err = tx.Resolve(c.ref); return err })
		switch {
		case c.want == "" && !errors.Is(err, ErrNotFound):
			t.Errorf("Resolve(%q) = %q, %v; want ErrNotFound", c.ref, got.ID, err)
		case c.want != "" && (err != nil || got.ID != c.want):
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.ref, got.ID, err, c.want)
		}
	}
}

// TestIDNamespace: API IDs and db ids are one namespace, so an address
// never names two APIs: an API ID that is another API's db id, or a db id
// that is another API's API ID, is refused on every write path.
func TestIDNamespace(t *testing.T) {
	s := open(t)
	put(t, s, oas("o1", db(2)), classic(db(7), db(8), "Its ID looks like a db id"))
	for _, c := range []struct {
		name string
		a    API
	}{
		{"API ID = another's db id", classic(db(2), db(4), "Shadow")},
		{"db id = another's API ID", classic("c2", db(7), "Shadow")},
		{"OAS, API ID = another's db id", oas(db(2), db(5))},
		{"OAS, db id = another's API ID", oas("o2", db(7))},
	} {
		err := s.Update(bg, func(tx *Tx) error { return tx.PutAPI(c.a, AnyRevision) })
		if !errors.Is(err, ErrAlreadyExists) {
			t.Errorf("%s: %v, want ErrAlreadyExists", c.name, err)
		}
	}
	// An API may keep its own db id equal to its API ID, and be replaced.
	put(t, s, classic(db(9), db(9), "Self"), classic(db(9), db(9), "Self again"))
}

// FuzzIsDBID holds IsDBID to the db id's expression, ^[0-9a-f]{24}$.
func FuzzIsDBID(f *testing.F) {
	pattern := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, s := range []string{"", NewDBID(), "0123456789abcdef01234567", "0123456789ABCDEF01234567", "0123456789abcdef0123456",
		"0123456789abcdef012345678", "0123456789abcdeg01234567", "0123456789abcdef0123456\n", "0123456789abcdef012345é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsDBID(s), pattern.MatchString(s); got != want {
			t.Errorf("IsDBID(%q) = %v, want %v", s, got, want)
		}
	})
}

func TestOrgIDCreatedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	first := s.OrgID()
	s.Close()
	if !IsDBID(first) {
		t.Fatalf("org id %q, want 24 lowercase hex", first)
	}
	s = openAt(t, path)
	defer s.Close()
	if got := s.OrgID(); got != first {
		t.Fatalf("org id after reopen %q, want %q", got, first)
	}
	if err := s.Check(bg); err != nil {
		t.Fatal(err)
	}
	other := open(t)
	if other.OrgID() == first {
		t.Fatalf("two installations share org id %q", first)
	}
}

func TestCompareClassic(t *testing.T) {
	s := open(t)
	put(t, s, classic("c", db(1), "C"), oas("o", db(2)))
	read, _ := get(t, s, "c")
	put(t, s, classic("c", db(1), "C")) // the same bytes again: another write all the same
	now, _ := get(t, s, "c")
	for _, tc := range []struct {
		id, dbID string
		rev      uint64
		want     Compared
	}{
		{"c", db(1), now.Revision, Same},
		{"c", db(1), AnyRevision, Same},
		{"c", db(1), read.Revision, Changed},
		{"c", db(3), AnyRevision, Changed},
		{"o", db(2), AnyRevision, NotClassic},
		{"nope", db(1), AnyRevision, Missing},
	} {
		var got Compared
		err := s.View(bg, func(tx *Tx) (err error) { got, err = tx.CompareClassic(tc.id, tc.dbID, tc.rev); return err })
		if err != nil || got != tc.want {
			t.Errorf("CompareClassic(%s, %s, %d) = %v, %v; want %v", tc.id, tc.dbID, tc.rev, got, err, tc.want)
		}
	}
}

// TestRevisions: a new record gets a random revision, each write one more;
// a record created again does not come back to its old revision; a record
// written before revisions reads as revision 0 and is rewritten with one.
func TestRevisions(t *testing.T) {
	s := open(t)
	put(t, s, classic("c", db(1), "C"), classic("d", db(2), "D"))
	c1, _ := get(t, s, "c")
	d1, _ := get(t, s, "d")
	if c1.Revision == 0 || c1.Revision == d1.Revision {
		t.Fatalf("new records' revisions %d and %d, want random and non-zero", c1.Revision, d1.Revision)
	}
	put(t, s, classic("c", db(1), "C #x"))
	if c2, _ := get(t, s, "c"); c2.Revision != c1.Revision+1 || c2.Name != "C #x" {
		t.Fatalf("replaced: revision %d, want %d", c2.Revision, c1.Revision+1)
	}
	if err := s.Update(bg, func(tx *Tx) error { return tx.DeleteAPI("c") }); err != nil {
		t.Fatal(err)
	}
	put(t, s, classic("c", db(1), "C"))
	if c3, _ := get(t, s, "c"); c3.Revision == c1.Revision || c3.Revision == c1.Revision+1 {
		t.Fatalf("created again with revision %d, an earlier one", c3.Revision)
	}
	// the layout before revisions: version 2, no revision after the kind
	// (nor a derived definition before the document)
	oldAPI := classic("old", db(3), "Old #o")
	v4 := encodeAPI(oldAPI)
	v2 := slices.Concat([]byte{noRevisionVersion, v4[1]}, v4[3:len(v4)-len(oldAPI.Doc)-1], oldAPI.Doc)
	s.e.Update(bg, func(w kv.WriteTx) error {
		if err := w.Put(key(apiPrefix, "old"), v2); err != nil {
			return err
		}
		if err := w.Put(key(dbIDPrefix, db(3)), []byte("old")); err != nil {
			return err
		}
		return w.Put(pairKey(categoryPrefix, "o", "old"), nil)
	})
	old, err := get(t, s, "old")
	if err != nil || old.Revision != 0 || old.Name != "Old #o" || !slices.Equal(old.Categories, []string{"o"}) || old.DBID != db(3) {
		t.Fatalf("a record without revision: %+v %v", old, err)
	}
	put(t, s, classic("old", db(3), "Old #o"))
	if old, _ = get(t, s, "old"); old.Revision != 1 {
		t.Fatalf("rewritten: revision %d, want 1", old.Revision)
	}
}

// TestDerived: an OAS record keeps the derived definition and its tag as
// its maker gave them (EachAPI shows them, API() leaves them out), a classic
// one nothing; a record of the layout before Derived reads with none.
func TestDerived(t *testing.T) {
	s := open(t)
	derived := func() map[string]string {
		got := map[string]string{}
		s.View(bg, func(tx *Tx) error {
			return tx.EachAPI(func(a API) error {
				got[a.ID] = a.DerivedBy + ":" + string(a.Derived)
				return nil
			})
		})
		return got
	}
	o := oas("o", db(1), "x")
	o.Derived, o.DerivedBy = []byte(`{"made":"outside"}`), "t1"
	c := classic("c", db(2), "C")
	c.Derived, c.DerivedBy = []byte(`{"not":"kept"}`), "t1"
	put(t, s, o, c, oas("p", db(3)))
	first, _ := get(t, s, "o")
	if got := derived(); got["o"] != `t1:{"made":"outside"}` || got["c"] != ":" || got["p"] != ":" || first.Derived != nil {
		t.Fatalf("derived %q (API() leaves it out: %q)", got, first.Derived)
	}
	// the layout before Derived: version 3, no derived definition
	o = oas("o", db(1), "x")
	v4 := encodeAPI(API{ID: "o", DBID: db(1), Kind: OAS, Name: o.Name, Categories: o.Categories, Revision: 7, Doc: o.Doc})
	v3 := slices.Concat([]byte{noDerivedVersion}, v4[1:len(v4)-len(o.Doc)-2], o.Doc)
	s.e.Update(bg, func(w kv.WriteTx) error { return w.Put(key(apiPrefix, "o"), v3) })
	if got, err := get(t, s, "o"); err != nil || got.Revision != 7 || !bytes.Equal(got.Doc, o.Doc) || derived()["o"] != ":" {
		t.Fatalf("a record without derived definition: %+v %v", got, err)
	}
}

// TestPutAPIRevision: PutAPI writes only over the revision its writer read
// (NotStored: over nothing), so a record made outside the transaction never
// replaces a write it did not see.
func TestPutAPIRevision(t *testing.T) {
	s := open(t)
	putAt := func(a API, expect uint64) error {
		return s.Update(bg, func(tx *Tx) error { return tx.PutAPI(a, expect) })
	}
	c := classic("c", db(1), "C")
	if err := putAt(c, NotStored); err != nil {
		t.Fatal(err)
	}
	if err := putAt(c, NotStored); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("create over an API: %v, want ErrAlreadyExists", err)
	}
	read, _ := get(t, s, "c")
	if err := putAt(c, read.Revision+1); !errors.Is(err, ErrRevisionMoved) || !errors.Is(err, kv.ErrConflict) {
		t.Fatalf("write over another revision: %v, want ErrRevisionMoved (a kv.ErrConflict)", err)
	}
	if err := putAt(classic("gone", db(2), "G"), 5); !errors.Is(err, ErrRevisionMoved) {
		t.Fatalf("write over a missing record: %v, want ErrRevisionMoved", err)
	}
	if err := putAt(c, read.Revision); err != nil {
		t.Fatalf("write over the revision read: %v", err)
	}
	if now, _ := get(t, s, "c"); now.Revision != read.Revision+1 {
		t.Fatalf("revision %d, want %d", now.Revision, read.Revision+1)
	}
}

func TestOperations(t *testing.T) {
	s := open(t)
	classicDoc := func(id, dbID string) API {
		return API{ID: id, DBID: dbID, Kind: Classic, Doc: []byte(fmt.Sprintf(`{"api_id":%q,"id":%q,"name":"C #k"}`, id, dbID)), Name: "C #k", Categories: []string{"k"}}
	}
	c := classicDoc("c1", db(1))
	if err := s.CreateAPI(bg, c); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPI(bg, classicDoc(c.ID, db(2))); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("create on a taken ID: %v", err)
	}
	// one namespace rule: a given db id that addresses another API is refused, not replaced
	if err := s.CreateAPI(bg, oas("o", c.DBID)); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("create OAS with a taken db id: %v", err)
	}
	if err := s.CreateAPI(bg, oas(db(3)+"", db(4))); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPI(bg, oas("x", db(3))); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("create with a db id that is another API's ID: %v", err)
	}
	o := oas("o", db(5))
	if err := s.CreateAPI(bg, o); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetAPI(bg, o.DBID); err != nil || got.ID != "o" {
		t.Fatalf("get by db id: %+v %v", got, err)
	}
	for _, tc := range []struct {
		ref  string
		kind Kind
		want error
	}{{"o", Classic, ErrNotClassic}, {c.ID, OAS, ErrNotOAS}, {"nope", OAS, ErrNotFound}} {
		if err := s.UpdateAPI(bg, tc.ref, tc.kind, func(a API) (API, error) { return a, nil }); !errors.Is(err, tc.want) {
			t.Errorf("update %s as kind %d: %v, want %v", tc.ref, tc.kind, err, tc.want)
		}
		if err := s.DeleteAPI(bg, tc.ref, tc.kind, nil); !errors.Is(err, tc.want) {
			t.Errorf("delete %s as kind %d: %v, want %v", tc.ref, tc.kind, err, tc.want)
		}
	}
	// an edit made while another writer changes the API is made again from
	// what that writer stored (GuaranteedUpdate)
	edits := 0
	err := s.UpdateAPI(bg, o.DBID, OAS, func(a API) (API, error) {
		if edits++; edits == 1 {
			w := a
			w.Categories = []string{"meanwhile"}
			if err := s.Update(bg, func(tx *Tx) error { return tx.PutAPI(w, a.Revision) }); err != nil {
				t.Fatal(err)
			}
		}
		a.ID, a.Categories = "moved", append(a.Categories, "x")
		return a, nil
	})
	if got, _ := s.GetAPI(bg, "o"); err != nil || edits != 2 || !slices.Equal(got.Categories, []string{"meanwhile", "x"}) {
		t.Fatalf("update keeps the ID and edits what was stored last: %+v %v (%d edits)", got, err, edits)
	}
	if cats, err := s.CategoryCounts(bg); err != nil || len(cats) != 3 {
		t.Fatalf("category counts: %v %v", cats, err)
	}
	if err := s.DeleteAPI(bg, c.DBID, 0, nil); err != nil {
		t.Fatal(err)
	}
	if apis, total, err := s.ListAPIs(bg, nil, 0, -1); err != nil || total != 2 || apis[1].ID != "o" {
		t.Fatalf("list after delete: %v %d %v", apis, total, err)
	}
}

// TestCheckReachesTheEngine: the store's tests open it through kvtest.Twice,
// and Check still runs bbolt's own consistency check of the file.
func TestCheckReachesTheEngine(t *testing.T) {
	s := open(t)
	c, ok := kv.CheckerOf(s.e)
	if _, isBolt := c.(*boltkv.Engine); !ok || !isBolt {
		t.Fatalf("the store's Check finds %T (%v), want bbolt's engine under the test wrapper", c, ok)
	}
}

// TestSearch: EachFound asks match about every API's header (of the
// categories, when given) with a view of its document, counts the matches
// and decodes only the page's; SearchAPIs copies them out of the
// transaction.
func TestSearch(t *testing.T) {
	s := open(t)
	put(t, s, classic("c1", db(1), "Orders #shop"), classic("c2", db(2), "Stock #shop"), oas("o1", db(3), "shop"),
		classic("c3", db(4), "Old orders"))
	asked := map[string]bool{}
	byName := func(part string) func(API) bool {
		return func(a API) bool {
			if a.Derived != nil || !strings.Contains(string(a.Doc), `"`+a.ID+`"`) {
				t.Errorf("match got %s without its document view or with its derived definition", a.ID)
			}
			asked[a.ID] = true
			return strings.Contains(strings.ToLower(a.Name), part)
		}
	}
	for _, c := range []struct {
		cats           []string
		part           string
		offset, limit  int
		want, askedFor string
		total          int
	}{
		{nil, "orders", 0, -1, "c1,c3", "c1,c2,c3,o1", 2},
		{nil, "orders", 1, 10, "c3", "c1,c2,c3,o1", 2},
		{nil, "", 1, 2, "c2,c3", "c1,c2,c3,o1", 4},
		{nil, "orders", 2, 10, "", "c1,c2,c3,o1", 2},
		{[]string{"shop"}, "", 0, -1, "c1,c2,o1", "c1,c2,o1", 3},
		{[]string{"shop", "none"}, "orders", 0, -1, "c1", "c1,c2,o1", 1},
	} {
		clear(asked)
		apis, total, err := s.SearchAPIs(bg, c.cats, byName(c.part), c.offset, c.limit)
		var ids []string
		for _, a := range apis {
			ids = append(ids, a.ID)
			if want, _ := get(t, s, a.ID); string(a.Doc) != string(want.Doc) || a.Name != want.Name {
				t.Errorf("%s: %+v, stored %+v", a.ID, a, want)
			}
		}
		var seen []string
		for id := range asked {
			seen = append(seen, id)
		}
		slices.Sort(seen)
		if err != nil || strings.Join(ids, ",") != c.want || total != c.total || strings.Join(seen, ",") != c.askedFor {
			t.Errorf("%v %q [%d:%d]: %v of %d (%v), asked about %v; want %s of %d, asked about %s",
				c.cats, c.part, c.offset, c.limit, ids, total, err, seen, c.want, c.total, c.askedFor)
		}
	}
}

// TestUserByKeyHashMemo: the decoded users UserByKeyHash remembers answer
// only for the stored bytes they came from: a deactivation or a change of
// permissions is seen by the next lookup, and changing what one lookup
// returned changes nothing the next one returns.
func TestUserByKeyHashMemo(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, User{Email: "m@x.test", KeyHash: []byte("hm"), Permissions: map[string]string{"apis": "read"}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.UserByKeyHash(ctx, []byte("hm"))
	if err != nil {
		t.Fatal(err)
	}
	first.Permissions["apis"] = "write"
	first.KeyHash[0] = 'X'
	if got, err := s.UserByKeyHash(ctx, []byte("hm")); err != nil || got.Permissions["apis"] != "read" || string(got.KeyHash) != "hm" {
		t.Fatalf("after changing a returned user: %+v, %v; want the stored one", got, err)
	}
	if _, err := s.UpdateUser(ctx, u.ID, func(u *User) error { u.Permissions["apis"] = "write"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.UserByKeyHash(ctx, []byte("hm")); got.Permissions["apis"] != "write" {
		t.Fatalf("after a permission change: %v, want write", got.Permissions)
	}
	if _, err := s.UpdateUser(ctx, u.ID, func(u *User) error { u.Inactive = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.UserByKeyHash(ctx, []byte("hm")); !got.Inactive {
		t.Fatal("after a deactivation: the user is still active")
	}
}
