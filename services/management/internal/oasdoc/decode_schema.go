package oasdoc

import "github.com/getkin/kin-openapi/openapi3"

// The fast decoder's schemas, as kin-openapi's Schema.UnmarshalJSON builds
// them. The OpenAPI 3.0 keywords are read here; the later ones (and the
// few whose decoding kin-openapi customises) go to encoding/json one field
// at a time.

func (s *scanner) schemaRef() (*openapi3.SchemaRef, error) {
	if ref, err := s.ref(); err != nil || ref != "" {
		return &openapi3.SchemaRef{Ref: ref}, err
	}
	v, err := s.schema()
	return &openapi3.SchemaRef{Value: v}, err
}

func (s *scanner) schemaRefs() (openapi3.SchemaRefs, error) {
	out := openapi3.SchemaRefs{}
	return out, s.array(func() error {
		var r *openapi3.SchemaRef
		err := decodeField(s, &r, s.schemaRef)
		out = append(out, r)
		return err
	})
}

func (s *scanner) schemas() (openapi3.Schemas, error) {
	return entries(s, s.schemaRef)
}

// types reads a schema's type: one name or a list of names.
func (s *scanner) types() (*openapi3.Types, error) {
	if s.peek() == '[' {
		names, err := s.stringList()
		t := openapi3.Types(names)
		return &t, err
	}
	name, err := s.string()
	one := &oneType{name: [1]string{name}}
	one.types = one.name[:]
	return &one.types, err
}

// oneType is a Types of one name, allocated with its name: nearly every
// schema has one.
type oneType struct {
	types openapi3.Types
	name  [1]string
}

func (s *scanner) schema() (*openapi3.Schema, error) {
	if s.peek() != '{' {
		return nil, errUnsupported // a boolean schema, or not a schema
	}
	x := &openapi3.Schema{}
	return x, s.fields(func(key []byte) error {
		var err error
		switch string(key) {
		case "oneOf":
			return decodeField(s, &x.OneOf, s.schemaRefs)
		case "anyOf":
			return decodeField(s, &x.AnyOf, s.schemaRefs)
		case "allOf":
			return decodeField(s, &x.AllOf, s.schemaRefs)
		case "not":
			return decodeField(s, &x.Not, s.schemaRef)
		case "type":
			return decodeField(s, &x.Type, s.types)
		case "title":
			x.Title, err = s.string()
		case "format":
			x.Format, err = s.string()
		case "description":
			x.Description, err = s.string()
		case "enum":
			return s.delegate(&x.Enum)
		case "default":
			x.Default, err = s.generic()
		case "example":
			x.Example, err = s.generic()
		case "externalDocs":
			return s.delegate(&x.ExternalDocs)
		case "uniqueItems":
			x.UniqueItems, err = s.boolean()
		case "exclusiveMinimum":
			return s.delegate(&x.ExclusiveMin)
		case "exclusiveMaximum":
			return s.delegate(&x.ExclusiveMax)
		case "nullable":
			x.Nullable, err = s.boolean()
		case "readOnly":
			x.ReadOnly, err = s.boolean()
		case "writeOnly":
			x.WriteOnly, err = s.boolean()
		case "allowEmptyValue":
			x.AllowEmptyValue, err = s.boolean()
		case "deprecated":
			x.Deprecated, err = s.boolean()
		case "xml":
			return s.delegate(&x.XML)
		case "minimum":
			x.Min, err = s.floatPtr()
		case "maximum":
			x.Max, err = s.floatPtr()
		case "multipleOf":
			x.MultipleOf, err = s.floatPtr()
		case "minLength":
			x.MinLength, err = s.count()
		case "maxLength":
			x.MaxLength, err = s.countPtr()
		case "pattern":
			x.Pattern, err = s.string()
		case "minItems":
			x.MinItems, err = s.count()
		case "maxItems":
			x.MaxItems, err = s.countPtr()
		case "items":
			return decodeField(s, &x.Items, s.schemaRef)
		case "required":
			x.Required, err = s.stringList()
		case "properties":
			return decodeField(s, &x.Properties, s.schemas)
		case "minProperties":
			x.MinProps, err = s.count()
		case "maxProperties":
			x.MaxProps, err = s.countPtr()
		case "additionalProperties":
			return s.delegate(&x.AdditionalProperties)
		case "discriminator":
			return s.delegate(&x.Discriminator)
		default:
			if isExtension(key) {
				return s.extension(&x.Extensions, key)
			}
			return s.laterKeyword(x, key)
		}
		return err
	})
}

// laterKeyword reads a keyword of OpenAPI 3.1 and later, as encoding/json
// does; any other key is left to kin-openapi.
func (s *scanner) laterKeyword(x *openapi3.Schema, key []byte) error {
	var dst any
	switch string(key) {
	case "const":
		dst = &x.Const
	case "examples":
		dst = &x.Examples
	case "prefixItems":
		dst = &x.PrefixItems
	case "contains":
		dst = &x.Contains
	case "minContains":
		dst = &x.MinContains
	case "maxContains":
		dst = &x.MaxContains
	case "patternProperties":
		dst = &x.PatternProperties
	case "dependentSchemas":
		dst = &x.DependentSchemas
	case "propertyNames":
		dst = &x.PropertyNames
	case "unevaluatedItems":
		dst = &x.UnevaluatedItems
	case "unevaluatedProperties":
		dst = &x.UnevaluatedProperties
	case "if":
		dst = &x.If
	case "then":
		dst = &x.Then
	case "else":
		dst = &x.Else
	case "dependentRequired":
		dst = &x.DependentRequired
	case "$defs":
		dst = &x.Defs
	case "$schema":
		dst = &x.SchemaDialect
	case "$comment":
		dst = &x.Comment
	case "$id":
		dst = &x.SchemaID
	case "$anchor":
		dst = &x.Anchor
	case "$dynamicRef":
		dst = &x.DynamicRef
	case "$dynamicAnchor":
		dst = &x.DynamicAnchor
	case "contentMediaType":
		dst = &x.ContentMediaType
	case "contentEncoding":
		dst = &x.ContentEncoding
	case "contentSchema":
		dst = &x.ContentSchema
	default:
		return errUnsupported
	}
	return s.delegate(dst)
}

func (s *scanner) floatPtr() (*float64, error) {
	f, err := s.float()
	return &f, err
}

func (s *scanner) countPtr() (*uint64, error) {
	n, err := s.count()
	return &n, err
}
