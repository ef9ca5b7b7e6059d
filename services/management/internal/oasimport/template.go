package oasimport

import "encoding/json"

// An API template (the Dashboard's asset of kind oas-template) is a
// partial Tyk OAS document, the starting point of the API an import makes:
// the imported document is laid over it.

// overlay lays doc over base: an object member of both is overlaid in
// turn, any other member of doc replaces base's (arrays whole), and a
// member only base has is kept.
func overlay(base, doc map[string]any) map[string]any {
	for k, v := range doc {
		b, bok := base[k].(map[string]any)
		d, dok := v.(map[string]any)
		if bok && dok {
			base[k] = overlay(b, d)
		} else {
			base[k] = v
		}
	}
	return base
}

// applyTemplate returns root laid over the template's data; the template's
// own API identity (x-tyk-api-gateway.info id and dbId) is left out, so
// the new API is given its own. A member of root is decoded only where
// the template has an object to lay it over.
func applyTemplate(root object, template []byte) (object, error) {
	base, err := decodeObject(template)
	if err != nil {
		return nil, refuse("templateID: the template's data is not a JSON object")
	}
	if x, ok := base[extension].(map[string]any); ok {
		if info, ok := x["info"].(map[string]any); ok {
			delete(info, "id")
			delete(info, "dbId")
		}
	}
	for k, v := range root {
		b, ok := base[k].(map[string]any)
		if raw, isRaw := v.(json.RawMessage); ok && isRaw && isObject(raw) {
			v = root.get(k)
		}
		if d, dok := v.(map[string]any); ok && dok {
			base[k] = overlay(b, d)
		} else {
			base[k] = v
		}
	}
	return object(base), nil
}

// WithTemplate returns the Tyk OAS document doc laid over the template's
// data, as a create with templateID makes it (no import defaults).
func WithTemplate(doc, template []byte) ([]byte, error) {
	root, err := decodeRoot(doc)
	if err != nil {
		return nil, refuse("the document must be a JSON object")
	}
	if root, err = applyTemplate(root, template); err != nil {
		return nil, err
	}
	return encodeObject(root)
}
