package oasdoc

import "github.com/getkin/kin-openapi/openapi3"

// refVisitor is what walkComponents and walkPathItem ask at each place of a document where a
// reference or a value can stand, and at each path item and operation.
type refVisitor interface {
	// enter is called with each reference-or-value that is not nil:
	// *openapi3.SchemaRef, ParameterRef, HeaderRef, RequestBodyRef,
	// ResponseRef, CallbackRef, and the leaves ExampleRef and LinkRef
	// (whose answer is not asked). It reports whether the walk goes into
	// the value.
	enter(node any) bool
	// item is called with each *openapi3.PathItem and *openapi3.Operation
	// that is not nil, reporting whether the walk goes into it.
	item(x any) bool
}

// walkComponents walks the components' schemas, parameters, headers,
// request bodies, responses and callbacks, as deep as v lets it: the parts
// the loader resolves references in (their examples and links are leaves).
func walkComponents(v refVisitor, c *openapi3.Components) {
	w := refWalk{v}
	for _, r := range c.Schemas {
		w.schema(r)
	}
	for _, r := range c.Parameters {
		w.parameter(r)
	}
	for _, r := range c.Headers {
		w.header(r)
	}
	for _, r := range c.RequestBodies {
		w.requestBody(r)
	}
	for _, r := range c.Responses {
		w.response(r)
	}
	for _, r := range c.Callbacks {
		w.callback(r)
	}
}

// walkPathItem walks a path item, as deep as v lets it.
func walkPathItem(v refVisitor, item *openapi3.PathItem) { refWalk{v}.pathItem(item) }

// refWalk is one walk of walkComponents or walkPathItem.
type refWalk struct{ v refVisitor }

func (w refWalk) schema(r *openapi3.SchemaRef) {
	if r == nil || !w.v.enter(r) {
		return
	}
	s := r.Value
	for _, refs := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf, s.PrefixItems} {
		for _, c := range refs {
			w.schema(c)
		}
	}
	for _, c := range []*openapi3.SchemaRef{s.Not, s.Items, s.AdditionalProperties.Schema, s.Contains, s.PropertyNames,
		s.UnevaluatedItems.Schema, s.UnevaluatedProperties.Schema, s.If, s.Then, s.Else, s.ContentSchema} {
		w.schema(c)
	}
	for _, refs := range []openapi3.Schemas{s.Properties, s.PatternProperties, s.DependentSchemas, s.Defs} {
		for _, c := range refs {
			w.schema(c)
		}
	}
}

func (w refWalk) parameter(r *openapi3.ParameterRef) {
	if r != nil && w.v.enter(r) {
		w.parameterValue(r.Value)
	}
}

func (w refWalk) header(r *openapi3.HeaderRef) {
	if r != nil && w.v.enter(r) {
		w.parameterValue(&r.Value.Parameter)
	}
}

// parameterValue walks a parameter's parts, or a header's (a header is a
// parameter in kin-openapi).
func (w refWalk) parameterValue(p *openapi3.Parameter) {
	w.schema(p.Schema)
	w.content(p.Content)
	w.examples(p.Examples)
}

func (w refWalk) requestBody(r *openapi3.RequestBodyRef) {
	if r != nil && w.v.enter(r) {
		w.content(r.Value.Content)
	}
}

func (w refWalk) response(r *openapi3.ResponseRef) {
	if r == nil || !w.v.enter(r) {
		return
	}
	for _, h := range r.Value.Headers {
		w.header(h)
	}
	w.content(r.Value.Content)
	for _, l := range r.Value.Links {
		if l != nil {
			w.v.enter(l)
		}
	}
}

func (w refWalk) content(c openapi3.Content) {
	for _, mt := range c {
		if mt == nil {
			continue
		}
		w.schema(mt.Schema)
		w.schema(mt.ItemSchema)
		w.examples(mt.Examples)
		for _, e := range mt.Encoding {
			if e != nil {
				for _, h := range e.Headers {
					w.header(h)
				}
			}
		}
	}
}

func (w refWalk) examples(e openapi3.Examples) {
	for _, r := range e {
		if r != nil {
			w.v.enter(r)
		}
	}
}

func (w refWalk) callback(r *openapi3.CallbackRef) {
	if r == nil || !w.v.enter(r) {
		return
	}
	for _, item := range r.Value.Map() {
		w.pathItem(item)
	}
}

func (w refWalk) pathItem(item *openapi3.PathItem) {
	if item == nil || !w.v.item(item) {
		return
	}
	for _, r := range item.Parameters {
		w.parameter(r)
	}
	for _, op := range item.Operations() {
		if op == nil || !w.v.item(op) {
			continue
		}
		for _, r := range op.Parameters {
			w.parameter(r)
		}
		w.requestBody(op.RequestBody)
		if op.Responses != nil {
			for _, r := range op.Responses.Map() {
				w.response(r)
			}
		}
		for _, r := range op.Callbacks {
			w.callback(r)
		}
	}
}
