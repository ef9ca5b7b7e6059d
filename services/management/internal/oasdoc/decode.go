package oasdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// The fast decoder builds the openapi3.T that kin-openapi's own decoding
// builds, in one walk over the document. kin-openapi decodes every object
// twice (its fields, then the whole object again as generic values to
// collect its extensions), at every level, and Paths and Responses encode
// each member again before decoding it: the cost grows with the depth of
// the document. Here each value is read once, and an Extensions map is made
// only for an x- key.
//
// It mirrors kin-openapi for the documents people write (paths and
// components: path items, operations, parameters, bodies, responses, media
// types, schemas). Whatever it does not mirror exactly (a null, a boolean
// schema, a $ref with siblings, a key no type knows, a key twice, an
// unusual number) it hands, as the smallest value that holds it, to
// kin-openapi's own UnmarshalJSON; and a document refused on the way is
// decoded again by kin-openapi alone (decodeOpenAPI), whose message is then
// the answer.

// rootFields are the keys of an OpenAPI object.
var rootFields = []string{"openapi", "components", "info", "paths", "security", "servers", "tags", "externalDocs", "webhooks", "jsonSchemaDialect"}

// decodeFast decodes doc, whose root members are root, as kin-openapi's
// T.UnmarshalJSON does, less the root x-tyk-api-gateway. Any error means:
// ask kin-openapi.
func decodeFast(doc []byte, root []rawjson.Member) (*openapi3.T, error) {
	d, paths, components, err := decodeRoot(doc, root)
	if err != nil {
		return nil, err
	}
	s := &scanner{data: paths, canonical: true}
	if d.Paths, err = s.paths(); err != nil {
		return nil, err
	}
	if components != nil {
		s = &scanner{data: components}
		if err := decodeField(s, &d.Components, s.components); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// decodeRoot decodes doc as decodeFast does but for its paths and
// components, which it returns as text (paths an object): the root without
// the Tyk extension.
func decodeRoot(doc []byte, root []rawjson.Member) (d *openapi3.T, paths, components []byte, err error) {
	// The root without paths, components and the Tyk extension is small:
	// kin-openapi decodes it.
	rest := make([]byte, 0, 1024)
	rest = append(rest, '{')
	for _, m := range root {
		switch {
		case m.Key == Extension:
			continue
		case m.Key == "paths":
			paths = doc[m.ValueStart:m.ValueEnd]
			continue
		case m.Key == "components":
			components = doc[m.ValueStart:m.ValueEnd]
			continue
		case !isExtension([]byte(m.Key)) && !slices.Contains(rootFields, m.Key):
			return nil, nil, nil, errUnsupported // kin-openapi may match it to a field, ignoring case
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(rest, doc[m.Start:m.ValueEnd]...)
	}
	rest = append(rest, '}')
	if paths == nil || paths[0] != '{' {
		return nil, nil, nil, errUnsupported
	}
	d = &openapi3.T{}
	if err := d.UnmarshalJSON(rest); err != nil {
		return nil, nil, nil, err
	}
	return d, paths, components, nil
}

// raw returns the next value's text as kin-openapi would see it here.
func (s *scanner) raw() ([]byte, error) {
	raw, err := s.skip()
	if err != nil || !s.canonical {
		return raw, err
	}
	return canonical(raw)
}

// canonical re-encodes raw as kin-openapi's Paths and Responses do before
// decoding a member.
func canonical(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// delegate decodes the next value into dst with encoding/json, so with
// kin-openapi's own UnmarshalJSON methods wherever dst has them.
func (s *scanner) delegate(dst any) error {
	raw, err := s.raw()
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, dst)
}

// extension adds the next value to *ext under key, as kin-openapi decodes
// extensions: generic values, the map made for the first one.
func (s *scanner) extension(ext *map[string]any, key []byte) error {
	k := string(key)
	if _, dup := (*ext)[k]; dup {
		return errUnsupported
	}
	v, err := s.generic()
	if err != nil {
		return err
	}
	if *ext == nil {
		*ext = map[string]any{}
	}
	(*ext)[k] = v
	return nil
}

func isExtension(key []byte) bool {
	return len(key) >= 2 && key[0] == 'x' && key[1] == '-'
}

// decodeField decodes the next value into *dst with read or, when read meets
// something it does not mirror, with encoding/json and kin-openapi from the
// same text, as the enclosing type's decoding would.
func decodeField[T any](s *scanner, dst *T, read func() (T, error)) error {
	start := s.pos
	v, err := read()
	if errors.Is(err, errUnsupported) {
		s.pos = start
		// decoded into a value of its own, so that dst need not live
		// on the heap for the rare value that takes this way
		var slow T
		err = s.delegate(&slow)
		*dst = slow
		return err
	}
	*dst = v
	return err
}

// decodeMember decodes the next value into v, a fresh member of Paths or
// Responses, with read or else with v's own UnmarshalJSON, as those maps do.
func decodeMember[T any, P interface {
	*T
	UnmarshalJSON([]byte) error
}](s *scanner, read func(P) error) (P, error) {
	start := s.pos
	v := P(new(T))
	err := read(v)
	if errors.Is(err, errUnsupported) {
		s.pos = start
		v = P(new(T))
		raw, err := s.raw()
		if err != nil {
			return nil, err
		}
		return v, v.UnmarshalJSON(raw)
	}
	return v, err
}

// entries reads an object whose members are all of one type, each with
// read or, as encoding/json decodes a map's values, with encoding/json.
func entries[V any](s *scanner, read func() (V, error)) (map[string]V, error) {
	out := map[string]V{}
	return out, s.object(func(key []byte) error {
		k := string(key)
		if _, dup := out[k]; dup {
			return errUnsupported
		}
		var v V
		err := decodeField(s, &v, read)
		out[k] = v
		return err
	})
}

// extensionOnly reads the value of key, which is no field of the type at
// hand, as an extension; a key without the x- prefix is left to
// kin-openapi (encoding/json may match it to a field, ignoring case).
func (s *scanner) extensionOnly(ext *map[string]any, key []byte) error {
	if !isExtension(key) {
		return errUnsupported
	}
	return s.extension(ext, key)
}

// ref reads {"$ref": "..."} when the object at hand is exactly that: the
// only form of a reference decoded here. It returns "" and reads nothing
// for an object whose first key is not $ref.
func (s *scanner) ref() (string, error) {
	if s.peek() != '{' {
		return "", errUnsupported
	}
	start := s.pos
	s.pos++
	if s.peek() != '"' {
		s.pos = start
		return "", nil
	}
	key, err := s.str()
	if err != nil || !bytes.Equal(key, []byte("$ref")) {
		s.pos = start
		return "", nil
	}
	if err := s.expect(':'); err != nil {
		return "", err
	}
	ref, err := s.string()
	if err != nil || ref == "" {
		return "", errUnsupported
	}
	return ref, s.expect('}')
}
