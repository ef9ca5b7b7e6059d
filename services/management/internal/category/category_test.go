package category

import (
	"slices"
	"strings"
	"testing"
)

func TestFromName(t *testing.T) {
	long := strings.Repeat("x", MaxLen)
	tests := []struct {
		name string
		want []string
	}{
		{"", []string{}},
		{"Orders", []string{}},
		{"Orders #retail", []string{"retail"}},
		{"#retail Orders #internal", []string{"retail", "internal"}},
		{"Orders #retail #retail", []string{"retail"}},
		{"Orders # #", []string{}},
		{"Orders ##double", []string{"#double"}},
		{"Orders a#b", []string{}},
		{"Orders #a,#b", []string{"a,#b"}},
		{"Orders\t#tab\n#newline\u00a0#nbsp", []string{"tab", "newline", "nbsp"}},
		{"Orders #" + long, []string{long}},
		{"Orders #" + long + "x #ok", []string{"ok"}},
		{"Orders #Retail #retail", []string{"Retail", "retail"}},
	}
	for _, tt := range tests {
		got := FromName(tt.name)
		if got == nil || !slices.Equal(got, tt.want) {
			t.Errorf("FromName(%q) = %#v, want %#v", tt.name, got, tt.want)
		}
		if n := Normalize(got); !slices.Equal(n, got) {
			t.Errorf("Normalize(FromName(%q)) = %#v, want %#v", tt.name, n, got)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{nil, []string{}},
		{[]string{}, []string{}},
		{[]string{" a ", "b", "a", "", "  "}, []string{"a", "b"}},
		{[]string{"b", "a"}, []string{"b", "a"}},
	}
	for _, tt := range tests {
		got := Normalize(tt.in)
		if got == nil || !slices.Equal(got, tt.want) {
			t.Errorf("Normalize(%#v) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}
