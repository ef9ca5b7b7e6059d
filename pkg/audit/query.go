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
		out, matches = nil, 0
		start := []byte(nil)
		if !q.To.IsZero() {
			start = timeKey(q.To.Add(time.Nanosecond)) // entries at To included
		}
		var stop []byte
		if !q.From.IsZero() {
			stop = timeKey(q.From.Add(-time.Nanosecond))
		}
		first := (q.Page - 1) * q.PageSize
		userNeedle, actionNeedle := needle("user_id", q.UserID), needle("action", q.Action)
		plain := q.UserID == "" && q.Action == "" && start == nil && stop == nil
		total := 0
		if plain {
			var err error
			if total, err = r.Count(Prefix); err != nil {
				return err
			}
		}
		defer func() {
			if plain {
				matches = total
			}
		}()
		return r.Scan(Prefix, start, func(k, v []byte) error {
			if plain && q.Page > 0 && matches >= first+q.PageSize {
				return kv.ErrStop
			}
			if stop != nil && bytes.Compare(k, stop) > 0 {
				return kv.ErrStop
			}
			var e Entry
			decoded := false
			if !bytes.Contains(v, userNeedle) || !bytes.Contains(v, actionNeedle) {
				return nil // entries are written by json.Marshal: a match holds these bytes
			}
			if q.UserID != "" || q.Action != "" {
				if err := json.Unmarshal(v, &e); err != nil {
					return fmt.Errorf("audit entry %q unreadable: %w", k, err)
				}
				if (q.UserID != "" && e.UserID != q.UserID) || (q.Action != "" && e.Action != q.Action) {
					return nil
				}
				decoded = true
			}
			matches++
			if q.Page > 0 && (matches <= first || matches > first+q.PageSize) {
				return nil
			}
			if !decoded {
				if err := json.Unmarshal(v, &e); err != nil {
					return fmt.Errorf("audit entry %q unreadable: %w", k, err)
				}
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	return out, matches, nil
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
