package audit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// awkward are field values whose JSON needs every kind of escape
// encoding/json writes.
var awkward = []string{
	"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "ünïcödé ✓ 🙂", "line\u2028sep\u2029par", "bad \xff\xfe utf-8 \xc3", "\xe2\x80",
	"ana@example.test", "DELETE /api/apis/{api_id}", strings.Repeat("x", 300),
}

// TestAppendEntry: an entry's JSON is json.Marshal's, byte for byte
// (List's filters match those bytes), and its keys are Prefix+id and
// OldestPrefix with the time inverted.
func TestAppendEntry(t *testing.T) {
	times := []time.Time{
		{}, time.Date(2026, 11, 28, 13, 31, 11, 123456789, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.FixedZone("x", 5*3600+1800)), time.Now(), time.Now().UTC(),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, at := range times {
		for _, s := range awkward {
			e := Entry{ID: newID(time.Now()), Time: at, UserID: s, UserEmail: s, Action: s, ObjectID: s, Status: 409, RemoteAddr: s}
			sameAsMarshal(t, e)
		}
	}
	now := time.Now()
	e := Entry{ID: newID(now), Time: now, Status: 200}
	p, err := encodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(e.ID)
	for i := range 8 { // the time part, MaxUint64 - ns, read back as ns
		raw[i] = ^raw[i]
	}
	if want := "auditold/" + hex.EncodeToString(raw); string(p.oldest) != want {
		t.Errorf("oldest key %q, want %q", p.oldest, want)
	}
	if string(p.key) != "audit/"+e.ID || string(p.id) != e.ID {
		t.Errorf("key %q and id %q, want audit/%s and %[3]s", p.key, p.id, e.ID)
	}
	for _, id := range []string{"", "abc", strings.Repeat("g", 24), strings.Repeat("0", 23)} {
		if _, err := encodeEntry(Entry{ID: id}); err == nil {
			t.Errorf("id %q: no error", id)
		}
	}
}

func sameAsMarshal(t *testing.T, e Entry) {
	t.Helper()
	want, werr := json.Marshal(e)
	got, gerr := appendEntry([]byte("prefix"), e)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%+v: error %v, json.Marshal's %v", e, gerr, werr)
	}
	if werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%+v:\n got %s\nwant prefix%s", e, got, want)
	}
}

func FuzzAppendEntry(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, int64(1764336671123456789), 200)
	}
	f.Fuzz(func(t *testing.T, s string, ns int64, status int) {
		sameAsMarshal(t, Entry{ID: s, Time: time.Unix(0, ns).UTC(), UserID: s, UserEmail: s + "@x", Action: "PUT " + s, ObjectID: s, Status: status, RemoteAddr: s})
	})
}

// BenchmarkEncodeEntry is the encoding of one entry, keys included, as a
// DELETE's transaction writes it.
func BenchmarkEncodeEntry(b *testing.B) {
	now := time.Now().UTC()
	e := Entry{ID: newID(now), Time: now, UserID: "6b074d359dba20c5c8e1d480", UserEmail: "ana@example.test",
		Action: "DELETE /api/apis/{api_id}", ObjectID: "bench00001234", Status: 200, RemoteAddr: "127.0.0.1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeEntry(e); err != nil {
			b.Fatal(err)
		}
	}
}
