package oasdoc

import "github.com/getkin/kin-openapi/openapi3"

// The fast decoder's operations: parameters, request bodies, responses,
// headers and media types, as kin-openapi's UnmarshalJSON methods build them.

func (s *scanner) operation() (*openapi3.Operation, error) {
	op := &openapi3.Operation{}
	return op, s.fields(func(key []byte) error {
		var err error
		switch string(key) {
		case "tags":
			op.Tags, err = s.stringList()
		case "summary":
			op.Summary, err = s.string()
		case "description":
			op.Description, err = s.string()
		case "operationId":
			op.OperationID, err = s.string()
		case "parameters":
			return decodeField(s, &op.Parameters, s.parameters)
		case "requestBody":
			return decodeField(s, &op.RequestBody, s.requestBodyRef)
		case "responses":
			if s.peek() == 'n' {
				return errUnsupported // kin-openapi marks a null as written
			}
			return decodeField(s, &op.Responses, s.responses)
		case "callbacks":
			return s.delegate(&op.Callbacks)
		case "deprecated":
			op.Deprecated, err = s.boolean()
		case "security":
			return s.delegate(&op.Security)
		case "servers":
			return s.delegate(&op.Servers)
		case "externalDocs":
			return s.delegate(&op.ExternalDocs)
		default:
			return s.extensionOnly(&op.Extensions, key)
		}
		return err
	})
}

func (s *scanner) parameters() (openapi3.Parameters, error) {
	out := openapi3.Parameters{}
	return out, s.array(func() error {
		var p *openapi3.ParameterRef
		err := decodeField(s, &p, s.parameterRef)
		out = append(out, p)
		return err
	})
}

func (s *scanner) parameterRef() (*openapi3.ParameterRef, error) {
	if ref, err := s.ref(); err != nil || ref != "" {
		return &openapi3.ParameterRef{Ref: ref}, err
	}
	p, err := s.parameter()
	return &openapi3.ParameterRef{Value: p}, err
}

func (s *scanner) parameter() (*openapi3.Parameter, error) {
	p := &openapi3.Parameter{}
	return p, s.fields(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			p.Name, err = s.string()
		case "in":
			p.In, err = s.string()
		case "description":
			p.Description, err = s.string()
		case "style":
			p.Style, err = s.string()
		case "explode":
			var b bool
			b, err = s.boolean()
			p.Explode = &b
		case "allowEmptyValue":
			p.AllowEmptyValue, err = s.boolean()
		case "allowReserved":
			p.AllowReserved, err = s.boolean()
		case "deprecated":
			p.Deprecated, err = s.boolean()
		case "required":
			p.Required, err = s.boolean()
		case "schema":
			return decodeField(s, &p.Schema, s.schemaRef)
		case "example":
			p.Example, err = s.generic()
		case "examples":
			return s.delegate(&p.Examples)
		case "content":
			return decodeField(s, &p.Content, s.content)
		default:
			return s.extensionOnly(&p.Extensions, key)
		}
		return err
	})
}

func (s *scanner) requestBodyRef() (*openapi3.RequestBodyRef, error) {
	if ref, err := s.ref(); err != nil || ref != "" {
		return &openapi3.RequestBodyRef{Ref: ref}, err
	}
	b := &openapi3.RequestBody{}
	return &openapi3.RequestBodyRef{Value: b}, s.fields(func(key []byte) error {
		var err error
		switch string(key) {
		case "description":
			b.Description, err = s.string()
		case "required":
			b.Required, err = s.boolean()
		case "content":
			return decodeField(s, &b.Content, s.content)
		default:
			return s.extensionOnly(&b.Extensions, key)
		}
		return err
	})
}

// responses reads a Responses object: like Paths, it decodes each member
// from its text encoded again, and always has an Extensions map.
func (s *scanner) responses() (*openapi3.Responses, error) {
	canonical := s.canonical
	s.canonical = true
	defer func() { s.canonical = canonical }()
	r := openapi3.NewResponses()
	r.Extensions = map[string]any{}
	return r, s.object(func(key []byte) error {
		if isExtension(key) {
			return s.extension(&r.Extensions, key)
		}
		k := string(key)
		if r.Value(k) != nil {
			return errUnsupported
		}
		v, err := decodeMember(s, s.responseRef)
		r.Set(k, v)
		return err
	})
}

func (s *scanner) responseRef(r *openapi3.ResponseRef) error {
	ref, err := s.ref()
	if err != nil || ref != "" {
		r.Ref = ref
		return err
	}
	v := &openapi3.Response{}
	r.Value = v
	return s.fields(func(key []byte) error {
		switch string(key) {
		case "description":
			d, err := s.string()
			v.Description = &d
			return err
		case "headers":
			return decodeField(s, &v.Headers, s.headers)
		case "content":
			return decodeField(s, &v.Content, s.content)
		case "links":
			return s.delegate(&v.Links)
		default:
			return s.extensionOnly(&v.Extensions, key)
		}
	})
}

func (s *scanner) newResponseRef() (*openapi3.ResponseRef, error) {
	r := &openapi3.ResponseRef{}
	return r, s.responseRef(r)
}

func (s *scanner) headers() (openapi3.Headers, error) {
	return entries(s, s.headerRef)
}

func (s *scanner) headerRef() (*openapi3.HeaderRef, error) {
	if ref, err := s.ref(); err != nil || ref != "" {
		return &openapi3.HeaderRef{Ref: ref}, err
	}
	p, err := s.parameter() // a header decodes as a parameter
	if err != nil {
		return nil, err
	}
	return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: *p}}, nil
}

func (s *scanner) content() (openapi3.Content, error) {
	return entries(s, s.mediaType)
}

func (s *scanner) mediaType() (*openapi3.MediaType, error) {
	m := &openapi3.MediaType{}
	return m, s.fields(func(key []byte) error {
		var err error
		switch string(key) {
		case "schema":
			return decodeField(s, &m.Schema, s.schemaRef)
		case "itemSchema":
			return decodeField(s, &m.ItemSchema, s.schemaRef)
		case "example":
			m.Example, err = s.generic()
		case "examples":
			return s.delegate(&m.Examples)
		case "encoding":
			return s.delegate(&m.Encoding)
		default:
			return s.extensionOnly(&m.Extensions, key)
		}
		return err
	})
}
