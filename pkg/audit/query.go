package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Query selects entries: those of UserID and of Action when set, with
// From <= time <= To when set; a page of PageSize (Page 1 is the newest;
// Page <= 0 means every match).
type Query struct {
	Page, PageSize int
	UserID, Action string
	From, To       time.Time
}

// List returns q's page of entries, newest first, and the number of
// matches, from one snapshot. Without filters the count is the store's
// and the scan stops after the page; with them every entry in the time
// range is read, to count the matches.
func (l *Log) List(ctx context.Context, q Query) ([]Entry, int, error) {
	if q.PageSize <= 0 {
		q.PageSize = 10
	}
	var out []Entry
	var matches int
	err := l.e.View(ctx, func(r kv.ReadTx) error {
		ls := newListing(q)
		var start []byte
		if !q.To.IsZero() {
			start = timeKey(q.To.Add(time.Nanosecond)) // entries at To included
		}
		total := 0
		if ls.plain = ls.plain && start == nil; ls.plain {
			var err error
			if total, err = r.Count(Prefix); err != nil {
				return err
			}
		}
		err := r.Scan(Prefix, start, ls.visit)
		if ls.plain {
			ls.matches = total
		}
		out, matches = ls.out, ls.matches
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return out, matches, nil
}

// Each calls fn with every entry q matches (q.Page is ignored), newest
// first, from one snapshot, keeping none: a list of everything is written
// as it is read (pkg/liststream). begin is called first, with the number of
// matches (a count of the store, or a scan of the time range with filters).
func (l *Log) Each(ctx context.Context, q Query, begin func(matches int) error, fn func(Entry) error) error {
	q.Page = 0
	return l.e.View(ctx, func(r kv.ReadTx) error {
		var start []byte
		if !q.To.IsZero() {
			start = timeKey(q.To.Add(time.Nanosecond)) // entries at To included
		}
		count := newListing(q)
		var matches int
		if count.plain && start == nil {
			var err error
			if matches, err = r.Count(Prefix); err != nil {
				return err
			}
		} else {
			count.keep = false
			if err := r.Scan(Prefix, start, count.visit); err != nil {
				return err
			}
			matches = count.matches
		}
		if err := begin(matches); err != nil {
			return err
		}
		ls := newListing(q)
		ls.each = fn
		return r.Scan(Prefix, start, ls.visit)
	})
}

// listing is one List's scan: the query, and the page and count so far.
type listing struct {
	q                        Query
	first                    int    // matches before the page
	stop                     []byte // the key after the last one to read (From), or nil
	userNeedle, actionNeedle []byte
	plain                    bool // no filter: the count is the store's
	out                      []Entry
	matches                  int
	keep                     bool              // keep the page's entries in out (else only count)
	each                     func(Entry) error // when set, each matching entry goes there instead
}

func newListing(q Query) *listing {
	ls := &listing{q: q, first: (q.Page - 1) * q.PageSize,
		userNeedle: needle("user_id", q.UserID), actionNeedle: needle("action", q.Action),
		plain: q.UserID == "" && q.Action == "" && q.From.IsZero(), keep: true}
	if !q.From.IsZero() {
		ls.stop = timeKey(q.From.Add(-time.Nanosecond))
	}
	return ls
}

// visit reads one entry of the scan: counted when it matches, kept when it
// is on the page.
func (ls *listing) visit(k, v []byte) error {
	if ls.plain && ls.q.Page > 0 && ls.matches >= ls.first+ls.q.PageSize {
		return kv.ErrStop
	}
	if ls.stop != nil && bytes.Compare(k, ls.stop) > 0 {
		return kv.ErrStop
	}
	e, ok, err := ls.match(k, v)
	if err != nil || !ok {
		return err
	}
	ls.matches++
	if ls.q.Page > 0 && (ls.matches <= ls.first || ls.matches > ls.first+ls.q.PageSize) {
		return nil
	}
	if !ls.keep && ls.each == nil {
		return nil
	}
	if e == nil {
		e = &Entry{}
		if err := decodeEntry(k, v, e); err != nil {
			return err
		}
	}
	if ls.each != nil {
		return ls.each(*e)
	}
	ls.out = append(ls.out, *e)
	return nil
}

// match reports whether the entry matches the query's user and action; it
// returns the entry when it had to decode it to tell.
func (ls *listing) match(k, v []byte) (*Entry, bool, error) {
	if !bytes.Contains(v, ls.userNeedle) || !bytes.Contains(v, ls.actionNeedle) {
		return nil, false, nil // entries are written by json.Marshal: a match holds these bytes
	}
	if ls.q.UserID == "" && ls.q.Action == "" {
		return nil, true, nil
	}
	var e Entry
	if err := decodeEntry(k, v, &e); err != nil {
		return nil, false, err
	}
	if (ls.q.UserID != "" && e.UserID != ls.q.UserID) || (ls.q.Action != "" && e.Action != ls.q.Action) {
		return nil, false, nil
	}
	return &e, true, nil
}

func decodeEntry(k, v []byte, e *Entry) error {
	if err := json.Unmarshal(v, e); err != nil {
		return fmt.Errorf("audit entry %q unreadable: %w", k, err)
	}
	return nil
}

// NewQuery is the Query of a list request's filters (from and to as
// ParseTime reads them); its error names the field, for a 400.
func NewQuery(page, size int, userID, action, from, to string) (Query, error) {
	q := Query{Page: page, PageSize: size, UserID: userID, Action: action}
	var err error
	if q.From, err = ParseTime(from); err != nil {
		return Query{}, fmt.Errorf("from: %w", err)
	}
	if q.To, err = ParseTime(to); err != nil {
		return Query{}, fmt.Errorf("to: %w", err)
	}
	return q, nil
}

// needle is the bytes json.Marshal writes for a field with this value
// ("" when the filter is unset: every entry holds it).
func needle(field, value string) []byte {
	if value == "" {
		return nil
	}
	v, _ := json.Marshal(value)
	return append([]byte(`"`+field+`":`), v...)
}

// ParseTime reads a from or to filter: RFC 3339 or Unix seconds; "" is
// the zero time (no bound).
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n < 1<<40 {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor Unix seconds", s)
}

// Timestamp is how an entry's time is answered: RFC 3339 UTC with nanoseconds.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
