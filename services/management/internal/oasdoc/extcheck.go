package oasdoc

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The walk that applies the rules of extrules.go to a decoded x-tyk-api-gateway object. Each rule's location
// is split once; rules are looked up by the last key of their location, so a member meets only the few rules
// that can match it.

// location is a split rule location: its keys, "*" for any one key, with any leading "**" (any depth) cut off.
type location struct {
	keys     []string
	anyDepth bool
}

func parseLocation(at string) location {
	var keys []string
	if at != "" {
		keys = strings.Split(at, ".")
	}
	if len(keys) > 0 && keys[0] == "**" {
		return location{keys: keys[1:], anyDepth: true}
	}
	return location{keys: keys}
}

// matches reports whether the location matches a path of keys.
func (l location) matches(path []string) bool {
	if l.anyDepth {
		if len(path) < len(l.keys) {
			return false
		}
		path = path[len(path)-len(l.keys):]
	} else if len(path) != len(l.keys) {
		return false
	}
	for i, k := range l.keys {
		if k != "*" && k != path[i] {
			return false
		}
	}
	return true
}

// last is the location's last key ("" for the root).
func (l location) last() string {
	if len(l.keys) == 0 {
		return ""
	}
	return l.keys[len(l.keys)-1]
}

type requiredRule struct {
	at      location
	members []string
}

type valueRule struct {
	at    location
	check valueCheck
}

// ruleIndex holds the rules by the last key of their location; "*" holds those ending in any key.
type ruleIndex struct {
	required    map[string][]requiredRule
	values      map[string][]valueRule
	conditional map[string][]conditionalRule
}

type conditionalRule struct {
	at    location
	check func(obj map[string]any) string
}

var rules = func() ruleIndex {
	ix := ruleIndex{required: map[string][]requiredRule{}, values: map[string][]valueRule{}, conditional: map[string][]conditionalRule{}}
	for _, r := range extConditional {
		l := parseLocation(r.at)
		ix.conditional[l.last()] = append(ix.conditional[l.last()], conditionalRule{l, r.check})
	}
	for _, r := range extRequired {
		l := parseLocation(r.at)
		ix.required[l.last()] = append(ix.required[l.last()], requiredRule{l, r.members})
	}
	for _, r := range extValues {
		l := parseLocation(r.at)
		ix.values[l.last()] = append(ix.values[l.last()], valueRule{l, r.check})
	}
	return ix
}()

// extensionWalk collects the problems of one extension.
type extensionWalk struct {
	path     []string
	problems []string
}

func (w *extensionWalk) add(format string, args ...any) {
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

func (w *extensionWalk) where() string { return strings.Join(w.path, ".") }

// checkExtensionRules checks a decoded x-tyk-api-gateway value (numbers as float64 or json.Number) against the
// restated schema and returns every problem, each naming the member, in document order (object keys sorted).
func checkExtensionRules(x any) []string {
	obj, ok := x.(map[string]any)
	if !ok {
		return []string{Extension + ": must be an object"}
	}
	w := &extensionWalk{path: make([]string, 0, 8)}
	w.walk(obj)
	return w.problems
}

func (w *extensionWalk) walk(v any) {
	last := ""
	if n := len(w.path); n > 0 {
		last = w.path[n-1]
	}
	w.checkValue(last, v)
	switch x := v.(type) {
	case map[string]any:
		w.checkRequired(last, x)
		w.checkConditional(last, x)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			w.path = append(w.path, k)
			w.walk(x[k])
			w.path = w.path[:len(w.path)-1]
		}
	case []any:
		for i, e := range x {
			w.path = append(w.path, strconv.Itoa(i))
			w.walk(e)
			w.path = w.path[:len(w.path)-1]
		}
	}
}

func (w *extensionWalk) checkValue(last string, v any) {
	for _, group := range [][]valueRule{rules.values[last], rules.values["*"]} {
		for _, r := range group {
			if r.at.matches(w.path) {
				if p := r.check.check(v); p != "" {
					w.add("%s.%s: %s (got %v)", Extension, w.where(), p, v)
				}
			}
		}
	}
}

func (w *extensionWalk) checkRequired(last string, x map[string]any) {
	for _, group := range [][]requiredRule{rules.required[last], rules.required["*"]} {
		for _, r := range group {
			if !r.at.matches(w.path) {
				continue
			}
			for _, m := range r.members {
				if _, ok := x[m]; !ok {
					w.add("%s: missing required member %q", strings.TrimSuffix(Extension+"."+w.where(), "."), m)
				}
			}
		}
	}
}

func (w *extensionWalk) checkConditional(last string, x map[string]any) {
	for _, group := range [][]conditionalRule{rules.conditional[last], rules.conditional["*"]} {
		for _, r := range group {
			if r.at.matches(w.path) {
				if p := r.check(x); p != "" {
					w.add("%s: %s", strings.TrimSuffix(Extension+"."+w.where(), "."), p)
				}
			}
		}
	}
}
