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
	return x, s.fields(func(key []byte) error { return s.schemaField(x, key) })
}

// schemaField reads one member of a schema: a keyword with a string, a
// boolean or a number, a keyword of nested schemas or JSON values, an
// extension, or a keyword encoding/json decodes (delegated); any other key
// is left to kin-openapi.
func (s *scanner) schemaField(x *openapi3.Schema, key []byte) error {
	var err error
	if p := textKeyword(x, key); p != nil {
		*p, err = s.string()
		return err
	}
	if p := flagKeyword(x, key); p != nil {
		*p, err = s.boolean()
		return err
	}
	if done, err := s.numberKeyword(x, key); done {
		return err
	}
	if done, err := s.nestedKeyword(x, key); done {
		return err
	}
	if isExtension(key) {
		return s.extension(&x.Extensions, key)
	}
	if field, ok := delegated[string(key)]; ok {
		return s.delegate(field(x))
	}
	return errUnsupported
}

// textKeyword is the field of a keyword whose value is a string, or nil.
func textKeyword(x *openapi3.Schema, key []byte) *string {
	switch string(key) {
	case "title":
		return &x.Title
	case "format":
		return &x.Format
	case "description":
		return &x.Description
	case "pattern":
		return &x.Pattern
	}
	return nil
}

// flagKeyword is the field of a keyword whose value is a boolean, or nil.
func flagKeyword(x *openapi3.Schema, key []byte) *bool {
	switch string(key) {
	case "uniqueItems":
		return &x.UniqueItems
	case "nullable":
		return &x.Nullable
	case "readOnly":
		return &x.ReadOnly
	case "writeOnly":
		return &x.WriteOnly
	case "allowEmptyValue":
		return &x.AllowEmptyValue
	case "deprecated":
		return &x.Deprecated
	}
	return nil
}

// numberKeyword reads a keyword whose value is a number; done is false for
// any other key.
func (s *scanner) numberKeyword(x *openapi3.Schema, key []byte) (done bool, err error) {
	switch string(key) {
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
	case "minItems":
		x.MinItems, err = s.count()
	case "maxItems":
		x.MaxItems, err = s.countPtr()
	case "minProperties":
		x.MinProps, err = s.count()
	case "maxProperties":
		x.MaxProps, err = s.countPtr()
	default:
		return false, nil
	}
	return true, err
}

// nestedKeyword reads a keyword of nested schemas, of names or of any JSON
// value; done is false for any other key.
func (s *scanner) nestedKeyword(x *openapi3.Schema, key []byte) (done bool, err error) {
	switch string(key) {
	case "oneOf":
		err = decodeField(s, &x.OneOf, s.schemaRefs)
	case "anyOf":
		err = decodeField(s, &x.AnyOf, s.schemaRefs)
	case "allOf":
		err = decodeField(s, &x.AllOf, s.schemaRefs)
	case "not":
		err = decodeField(s, &x.Not, s.schemaRef)
	case "items":
		err = decodeField(s, &x.Items, s.schemaRef)
	case "properties":
		err = decodeField(s, &x.Properties, s.schemas)
	case "type":
		err = decodeField(s, &x.Type, s.types)
	case "required":
		x.Required, err = s.stringList()
	case "default":
		x.Default, err = s.generic()
	case "example":
		x.Example, err = s.generic()
	default:
		return false, nil
	}
	return true, err
}

// delegated are the keywords encoding/json decodes, one field at a time:
// those whose decoding kin-openapi customises, and those of OpenAPI 3.1
// and later.
var delegated = map[string]func(x *openapi3.Schema) any{
	"enum":                  func(x *openapi3.Schema) any { return &x.Enum },
	"externalDocs":          func(x *openapi3.Schema) any { return &x.ExternalDocs },
	"exclusiveMinimum":      func(x *openapi3.Schema) any { return &x.ExclusiveMin },
	"exclusiveMaximum":      func(x *openapi3.Schema) any { return &x.ExclusiveMax },
	"xml":                   func(x *openapi3.Schema) any { return &x.XML },
	"additionalProperties":  func(x *openapi3.Schema) any { return &x.AdditionalProperties },
	"discriminator":         func(x *openapi3.Schema) any { return &x.Discriminator },
	"const":                 func(x *openapi3.Schema) any { return &x.Const },
	"examples":              func(x *openapi3.Schema) any { return &x.Examples },
	"prefixItems":           func(x *openapi3.Schema) any { return &x.PrefixItems },
	"contains":              func(x *openapi3.Schema) any { return &x.Contains },
	"minContains":           func(x *openapi3.Schema) any { return &x.MinContains },
	"maxContains":           func(x *openapi3.Schema) any { return &x.MaxContains },
	"patternProperties":     func(x *openapi3.Schema) any { return &x.PatternProperties },
	"dependentSchemas":      func(x *openapi3.Schema) any { return &x.DependentSchemas },
	"propertyNames":         func(x *openapi3.Schema) any { return &x.PropertyNames },
	"unevaluatedItems":      func(x *openapi3.Schema) any { return &x.UnevaluatedItems },
	"unevaluatedProperties": func(x *openapi3.Schema) any { return &x.UnevaluatedProperties },
	"if":                    func(x *openapi3.Schema) any { return &x.If },
	"then":                  func(x *openapi3.Schema) any { return &x.Then },
	"else":                  func(x *openapi3.Schema) any { return &x.Else },
	"dependentRequired":     func(x *openapi3.Schema) any { return &x.DependentRequired },
	"$defs":                 func(x *openapi3.Schema) any { return &x.Defs },
	"$schema":               func(x *openapi3.Schema) any { return &x.SchemaDialect },
	"$comment":              func(x *openapi3.Schema) any { return &x.Comment },
	"$id":                   func(x *openapi3.Schema) any { return &x.SchemaID },
	"$anchor":               func(x *openapi3.Schema) any { return &x.Anchor },
	"$dynamicRef":           func(x *openapi3.Schema) any { return &x.DynamicRef },
	"$dynamicAnchor":        func(x *openapi3.Schema) any { return &x.DynamicAnchor },
	"contentMediaType":      func(x *openapi3.Schema) any { return &x.ContentMediaType },
	"contentEncoding":       func(x *openapi3.Schema) any { return &x.ContentEncoding },
	"contentSchema":         func(x *openapi3.Schema) any { return &x.ContentSchema },
}

func (s *scanner) floatPtr() (*float64, error) {
	f, err := s.float()
	return &f, err
}

func (s *scanner) countPtr() (*uint64, error) {
	n, err := s.count()
	return &n, err
}
