// Package category holds management's rules for API category labels: the
// classic `#word` rule that turns an API name into categories, and the
// normalisation of labels stored on a Tyk OAS API. The classic listing, the
// store and the migration all use these functions, so a classic API shows the
// same categories before and after it is migrated.
package category

import (
	"slices"
	"strings"
)

// MaxLen bounds one category label, in bytes.
const MaxLen = 1024

// FromName returns the categories of a classic API name, as Tyk derives them:
// every whitespace-separated token that starts with '#' and has something
// after it gives that rest as a category. Tokens keep name order, each
// category appears once (the first occurrence wins) and tokens longer than
// MaxLen are not categories. The result is never nil.
func FromName(name string) []string {
	out := []string{}
	for _, f := range strings.Fields(name) {
		if c, ok := strings.CutPrefix(f, "#"); ok && c != "" && len(c) <= MaxLen && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Normalize trims labels and drops blanks and duplicates (the first
// occurrence wins); the result is never nil. FromName's output is already
// normal: Normalize(FromName(n)) equals FromName(n).
func Normalize(in []string) []string {
	out := make([]string, 0, len(in))
	for _, c := range in {
		c = strings.TrimSpace(c)
		if c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
