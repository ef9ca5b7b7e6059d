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

// pathItem reads a path item, as kin-openapi does: its operations, one per
// method, and its other fields.
func (s *scanner) pathItem(item *openapi3.PathItem) error {
	return s.fields(func(key []byte) error {
		if op := operationOf(item, key); op != nil {
			return decodeField(s, op, s.operation)
		}
		var err error
		switch string(key) {
		case "$ref":
			item.Ref, err = s.string()
		case "summary":
			item.Summary, err = s.string()
		case "description":
			item.Description, err = s.string()
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

// operationOf is the field of the operation a path item's key names (a
// method), or nil.
func operationOf(item *openapi3.PathItem, key []byte) **openapi3.Operation {
	switch string(key) {
	case "connect":
		return &item.Connect
	case "delete":
		return &item.Delete
	case "get":
		return &item.Get
	case "head":
		return &item.Head
	case "options":
		return &item.Options
	case "patch":
		return &item.Patch
	case "post":
		return &item.Post
	case "put":
		return &item.Put
	case "trace":
		return &item.Trace
	case "query":
		return &item.Query
	}
	return nil
}
