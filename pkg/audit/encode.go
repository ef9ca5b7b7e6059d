package audit

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/pkg/jsonesc"
)

// An entry is written once per audited write, inside the write's
// transaction on the engine's single committer, so its encoding is written
// out by hand (appendEntry) instead of encoding/json's reflection; the bytes
// are json.Marshal's (TestAppendEntry, FuzzAppendEntry), which List's
// filters match byte for byte (needle).

var errEntryID = errors.New("audit: entry id is not 24 hex digits")

// entryPuts is what putEntry writes for one entry: its key under Prefix with
// the JSON, and its key under OldestPrefix with the id, all slices of one
// buffer.
type entryPuts struct {
	key, value, oldest, id []byte
}

// encodeEntry lays out e's two keys and its JSON in one allocation.
func encodeEntry(e Entry) (entryPuts, error) {
	var raw [12]byte
	if len(e.ID) != 24 {
		return entryPuts{}, errEntryID
	}
	if _, err := hex.Decode(raw[:], []byte(e.ID)); err != nil {
		return entryPuts{}, errEntryID
	}
	binary.BigEndian.PutUint64(raw[:], math.MaxUint64-binary.BigEndian.Uint64(raw[:]))
	n := len(Prefix) + 24 + len(OldestPrefix) + 24
	buf := make([]byte, 0, n+entrySize(e))
	buf = append(append(buf, Prefix...), e.ID...)
	key := buf[:len(buf):len(buf)]
	buf = append(buf, OldestPrefix...)
	buf = hex.AppendEncode(buf, raw[:])
	oldest := buf[len(key):len(buf):len(buf)]
	buf, err := appendEntry(buf, e)
	if err != nil {
		return entryPuts{}, err
	}
	return entryPuts{key: key, value: buf[n:], oldest: oldest, id: key[len(Prefix):]}, nil
}

// entrySize is about how long e's JSON is (exact for ASCII fields without
// escapes and a time of nanosecond precision).
func entrySize(e Entry) int {
	return len(`{"id":"","time":"","user_id":"","user_email":"","action":"","object_id":"","status":,"remote_addr":""}`) +
		len(e.ID) + len("2006-01-02T15:04:05.999999999Z07:00") + len(e.UserID) + len(e.UserEmail) + len(e.Action) +
		len(e.ObjectID) + 20 + len(e.RemoteAddr)
}

// appendEntry appends e as json.Marshal writes it.
func appendEntry(b []byte, e Entry) ([]byte, error) {
	if y := e.Time.Year(); y < 0 || y > 9999 {
		v, err := json.Marshal(e) // json.Marshal's own error
		return append(b, v...), err
	}
	b = append(b, `{"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","user_id":`...)
	b = appendString(b, e.UserID)
	b = append(b, `,"user_email":`...)
	b = appendString(b, e.UserEmail)
	b = append(b, `,"action":`...)
	b = appendString(b, e.Action)
	b = append(b, `,"object_id":`...)
	b = appendString(b, e.ObjectID)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"remote_addr":`...)
	b = appendString(b, e.RemoteAddr)
	return append(b, '}'), nil
}

// appendString appends s quoted as json.Marshal writes it: escapes of '"',
// '\\' and control bytes (jsonesc), of '<', '>' and '&' as \u003c \u003e
// \u0026, of U+2028 and U+2029, and U+FFFD for each invalid UTF-8 byte.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !jsonesc.Needed(c) && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			if jsonesc.Needed(c) {
				b = jsonesc.Append(b, c)
			} else {
				b = append(b, '\\', 'u', '0', '0', jsonesc.Hex[c>>4], jsonesc.Hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', jsonesc.Hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
