package convert

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// readableDuration writes d as Tyk's ReadableDuration does: whole units from hours down to nanoseconds,
// zero units left out ("1h30m", "2ms", "20µs"), and "0s" for zero.
func readableDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "µs"}, {time.Nanosecond, "ns"}} {
		if n := d / u.unit; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10))
			b.WriteString(u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}

// seconds writes a number of seconds in hours, minutes and seconds ("1h30m", "45s", "0s").
func seconds(s int64) string {
	if s < 0 || s > math.MaxInt64/int64(time.Second) {
		return ""
	}
	return readableDuration(time.Duration(s) * time.Second)
}

// wholeSeconds reports whether f is a whole number of seconds that seconds can write.
func wholeSeconds(f float64) bool {
	return f == math.Trunc(f) && f >= 0 && f <= math.MaxInt64/float64(time.Second)
}
