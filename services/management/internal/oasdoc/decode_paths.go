package oasdoc

import "github.com/getkin/kin-openapi/openapi3"

// paths reads the Paths object.
func (s *scanner) paths() (*openapi3.Paths, error) {
	paths := openapi3.NewPaths()
	paths.Extensions = map[string]any{}
	err := s.object(func(key []byte) error {
		if isExtension(key) {
			return s.extension(&paths.Extensions, key)
		}
		k := string(key)
		if paths.Value(k) != nil {
			return errUnsupported
		}
		item, err := decodeMember(s, s.pathItem)
		paths.Set(k, item)
		return err
	})
	return paths, err
}

// pathItem reads a path item, as kin-openapi does: one case per member of
// the OpenAPI object (its operations, one per method, and its other
// fields), the shape of every object reader of this scanner (cyclomatic
// complexity over 15 for the number of members).
func (s *scanner) pathItem(item *openapi3.PathItem) error {
	return s.fields(func(key []byte) error {
		var err error
		switch string(key) {
		case "$ref":
			item.Ref, err = s.string()
		case "summary":
			item.Summary, err = s.string()
		case "description":
			item.Description, err = s.string()
		case "connect":
			return decodeField(s, &item.Connect, s.operation)
		case "delete":
			return decodeField(s, &item.Delete, s.operation)
		case "get":
			return decodeField(s, &item.Get, s.operation)
		case "head":
			return decodeField(s, &item.Head, s.operation)
		case "options":
			return decodeField(s, &item.Options, s.operation)
		case "patch":
			return decodeField(s, &item.Patch, s.operation)
		case "post":
			return decodeField(s, &item.Post, s.operation)
		case "put":
			return decodeField(s, &item.Put, s.operation)
		case "trace":
			return decodeField(s, &item.Trace, s.operation)
		case "query":
			return decodeField(s, &item.Query, s.operation)
		case "parameters":
			return decodeField(s, &item.Parameters, s.parameters)
		case "servers":
			return s.delegate(&item.Servers)
		case "additionalOperations":
			return s.delegate(&item.AdditionalOperations)
		default:
			return s.extensionOnly(&item.Extensions, key)
		}
		return err
	})
}
