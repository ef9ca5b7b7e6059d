package oasdoc

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// A path item may be a reference to another path's item
// ({"$ref":"#/paths/~1pets"}): kin-openapi's loader resolves it to a copy
// of that item, which is then checked under the referencing path. A
// reference may also name a part of another path's item
// (#/paths/~1pets/get/responses/200): the loader finds it in that item.
// The batches follow both by checking the target's item with the batch
// that references it (as well as in its own batch), and its target's when
// it is a reference itself: the loader copies the item as it stands then
// (resolved or not, as the paths before it in sorted order are), and
// merges into the copy what the referencing item has beside its $ref, in
// the batch as in the whole document. The target must be a path of the
// document; a path item reference's copy of operations naming an
// operationId uses each twice (batches.go's crossings names the first, as
// the whole check does), but along a chain of references, where whether
// the copy has them depends on the order the loader takes the paths in.
// Anything else gives up.

// pathTarget is the path a path item reference names, and its item's text.
type pathTarget struct {
	name string
	text []byte
}

// pathTargets finds the targets of the references to paths in paths, the
// paths object's text: items, those of path item references by reference
// as a decoder reads it, and into, those of references into a path's item
// (#/paths/~1pets/get/responses/200) by reference as written; false when
// one is not followed (above).
func pathTargets(paths []byte) (items, into map[string]pathTarget, ok bool) {
	if !bytes.Contains(paths, []byte(`"$ref"`)) {
		return nil, nil, true
	}
	itemRefs, intoRefs := map[string]string{}, map[string]string{} // reference → the name of its target
	wanted := map[string]bool{}                                    // the names of the targets
	err := rawjson.Each(paths, func(key, value []byte) error {
		if isExtension(key) || !bytes.Contains(value, []byte(`"$ref"`)) {
			return nil
		}
		for _, raw := range refsIn(value) {
			ref, isString := rawjson.String(append(append([]byte{'"'}, raw...), '"'))
			if name, deep, ok := pathRef(ref); raw != nil && isString && ok && deep {
				intoRefs[string(raw)], wanted[name] = name, true
			}
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
			name, deep, ok := pathRef(ref)
			if !isString || !ok || deep {
				return errUnsupported
			}
			itemRefs[ref], wanted[name] = name, true
		}
		return nil
	})
	if err != nil {
		return nil, nil, false
	}
	if len(wanted) == 0 {
		return nil, nil, true
	}
	texts := map[string][]byte{}
	err = rawjson.Each(paths, func(key, value []byte) error {
		name := string(key)
		if !wanted[name] {
			return nil
		}
		if value[0] != '{' {
			return errUnsupported
		}
		texts[name] = value
		return nil
	})
	if err != nil || len(texts) != len(wanted) {
		return nil, nil, false
	}
	items, into = make(map[string]pathTarget, len(itemRefs)), make(map[string]pathTarget, len(intoRefs))
	for ref, name := range itemRefs {
		items[ref] = pathTarget{name: name, text: texts[name]}
	}
	for ref, name := range intoRefs {
		into[ref] = pathTarget{name: name, text: texts[name]}
	}
	return items, into, true
}

// pathRef is the path a reference names as kin-openapi's loader reads it
// (the fragment of the URI, %-escapes decoded by url.Parse, then the
// JSON-pointer escapes of each of its parts), deep when it names a part of
// its item; false when it is not of the form #/paths/<name>[/...].
func pathRef(ref string) (name string, deep, ok bool) {
	if !strings.HasPrefix(ref, "#") {
		return "", false, false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", false, false
	}
	parts := strings.Split(u.Fragment, "/")
	if len(parts) < 3 || parts[0] != "" || unescapeRef(parts[1]) != "paths" || parts[2] == "" {
		return "", false, false
	}
	return unescapeRef(parts[2]), len(parts) > 3, true
}
