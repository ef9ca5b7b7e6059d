package jsonstrict

import (
	"strings"
	"testing"
)

func TestCountValues(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want int
	}{
		{`0`, 1},
		{` -1.5e+3 `, 1},
		{`"a:b,[c]"`, 1},
		{`"a\"b"`, 1},
		{`[]`, 1},
		{`{}`, 1},
		{`[true,false,null,0,-1,"x"]`, 7},
		{`{"a":1,"b":[1,2],"c":{"d":"e"}}`, 7},
		{"{\n \"k\" : [ 1 , -2 ]\n}", 4},
		{`{"a\\":"b\"c:","e":{}}`, 3},
		{`[1e5,2E-3,"tf n"]`, 4},
	} {
		if got := countValues([]byte(tc.doc)); got != tc.want {
			t.Errorf("countValues(%s) = %d, want %d", tc.doc, got, tc.want)
		}
	}
}

// TestOverMaxValues: a valid document of MaxValues values passes, one more
// is refused before the walk; an invalid one is left to the walker.
func TestOverMaxValues(t *testing.T) {
	doc := func(n int) []byte { return []byte("[" + strings.Repeat("0,", n-2) + "0]") } // n values with the array
	if err := Check(doc(MaxValues), nil); err != nil {
		t.Errorf("%d values: %v", MaxValues, err)
	}
	if p := First(Check(doc(MaxValues+1), nil)); p == nil || p.Kind != TooManyValues {
		t.Errorf("%d values: %v, want TooManyValues", MaxValues+1, p)
	}
	if !overMaxValues(doc(MaxValues + 1)) {
		t.Error("overMaxValues is false for one value too many")
	}
	if overMaxValues(append(doc(MaxValues+1), ']')) {
		t.Error("overMaxValues is true for invalid JSON")
	}
}

func BenchmarkCheckOverMaxValues(b *testing.B) {
	data := []byte("[" + strings.Repeat("0,", 15<<19) + "0]")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if Check(data, nil) == nil {
			b.Fatal("accepted")
		}
	}
}
