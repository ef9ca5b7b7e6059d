package oasdoc

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// A path item may be a reference to another path's item
// ({"$ref":"#/paths/~1pets"}): kin-openapi's loader resolves it to a copy
// of that item, which is then checked under the referencing path. The
// batches follow such a reference by checking the target's item with the
// batch that references it (as well as in its own batch), when it is
// plain: the referencing item has no other member, and the target is a
// path of the document whose item is no reference itself and names no
// operationId (the copy's would be the target's, used twice: the whole
// check names them). Anything else gives up.

// pathTarget is the path a path item reference names, and its item's text.
type pathTarget struct {
	name string
	text []byte
}

// pathTargets finds the targets of the path item references of paths, the
// paths object's text, by reference as a decoder reads it; false when one
// is not followed (above).
func pathTargets(paths []byte) (map[string]pathTarget, bool) {
	if !bytes.Contains(paths, []byte(`"$ref"`)) {
		return nil, true
	}
	refs := map[string]string{} // reference → the name of its target
	wanted := map[string]bool{}
	err := rawjson.Each(paths, func(key, value []byte) error {
		if isExtension(key) || !bytes.Contains(value, []byte(`"$ref"`)) {
			return nil
		}
		members, err := rawjson.Members(value)
		if err != nil {
			return errUnsupported
		}
		for _, m := range members {
			if m.Key != "$ref" {
				continue
			}
			ref, isString := rawjson.String(value[m.ValueStart:m.ValueEnd])
			name, ok := pathRef(ref)
			if len(members) != 1 || !isString || !ok {
				return errUnsupported
			}
			refs[ref], wanted[name] = name, true
		}
		return nil
	})
	if err != nil {
		return nil, false
	}
	if len(refs) == 0 {
		return nil, true
	}
	texts := map[string][]byte{}
	err = rawjson.Each(paths, func(key, value []byte) error {
		name := string(key)
		if !wanted[name] {
			return nil
		}
		if value[0] != '{' || bytes.Contains(value, []byte(`"operationId"`)) {
			return errUnsupported
		}
		members, err := rawjson.Members(value)
		if err != nil {
			return errUnsupported
		}
		for _, m := range members {
			if m.Key == "$ref" {
				return errUnsupported
			}
		}
		texts[name] = value
		return nil
	})
	if err != nil || len(texts) != len(wanted) {
		return nil, false
	}
	targets := make(map[string]pathTarget, len(refs))
	for ref, name := range refs {
		targets[ref] = pathTarget{name: name, text: texts[name]}
	}
	return targets, true
}

// pathRef is the path a reference names as kin-openapi's loader reads it
// (the fragment of the URI, %-escapes decoded by url.Parse, then the
// JSON-pointer escapes of each of its parts); false when it is not of the
// form #/paths/<name>.
func pathRef(ref string) (string, bool) {
	if !strings.HasPrefix(ref, "#") {
		return "", false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	parts := strings.Split(u.Fragment, "/")
	if len(parts) != 3 || parts[0] != "" || unescapeRef(parts[1]) != "paths" || parts[2] == "" {
		return "", false
	}
	return unescapeRef(parts[2]), true
}
