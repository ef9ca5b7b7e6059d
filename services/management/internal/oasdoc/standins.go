package oasdoc

import (
	"context"

	"github.com/getkin/kin-openapi/openapi3"
)

// kin-openapi checks a schema again wherever it is referenced: each
// SchemaRef.Validate (a component schema's, a parameter's, a media type's,
// and, inside a schema, each reference to a component already walked by
// another) starts a walk of its own over everything the schema reaches. A
// document of one component schema of 2,000 properties referenced from
// 1,000 paths (224 KB) cost 2.2 s of CPU; one of 20,000 (954 KB), 26 s.
//
// standIn makes the check of a resolved document cost about what it holds:
// each schema is judged once, and a reference to a schema judged valid then
// points to a stand-in (an empty schema, valid) for kin-openapi's check,
// which finds the same verdict and the same first problem:
//
//   - A schema's walk (Schema.Validate) fails exactly when a schema it
//     reaches fails one of its own rules: every reached schema is walked
//     once, its own rules checked, and the walk stops at the first failure.
//     A schema's own rules read only it and the references it holds, but
//     for its default, checked against the schema and what it reaches
//     (VisitJSON, as kin-openapi checks it: with examples validation off
//     and a 3.0 document, MultiErrors only). So the schemas are judged one
//     by one, each with its references pointing to a stand-in and its
//     default left out, the defaults then checked alone in a graph known
//     valid otherwise, and a schema is valid when it reaches no schema that
//     failed: each schema and each default is checked once.
//   - A reference to a valid schema walks nothing that fails, so with the
//     stand-in the walk that holds it finds the same first problem, in the
//     same order (what it no longer marks as walked it finds valid again).
//   - A default is checked against the schemas it reaches as they are: the
//     references of a schema a default reaches are kept.
//   - With examples validation off, nothing but the walk reads a schema
//     (a parameter's style and location are its own).
//
// A referenced response or request body is checked again at each
// reference too: each is judged once and the references to a valid one
// point to a stand-in (standInShared).
//
// Only references of the schema keywords OpenAPI 3.0 has are followed: a
// 3.0 schema that has one of 3.1's fails its own rules before its walk goes
// further.
func standIn(ctx context.Context, d *openapi3.T) {
	if !d.IsOpenAPI30() {
		return
	}
	g := schemaGraph{index: map[*openapi3.Schema]int32{}, walked: map[any]bool{}}
	g.document(d)
	ctx = openapi3.WithValidationOptions(ctx, openapi3.DisableExamplesValidation())
	g.judge(ctx)
	g.standIn()
	g.standInShared(ctx)
}

// schemaGraph is the schemas of a document, each once, and the references
// to them: roots (held by components, parameters, headers, media types) and
// each schema's own.
//
// Only a schema walked more than once needs a stand-in: one referenced more
// than once (a component schema counts its entry), or held by a part of
// the document that is (a component other than a schema, a part reached
// by a reference, the operations a path item reference copies). Only what such schemas reach (region) is judged: a document
// without any costs the walk of its parts and no more.
type schemaGraph struct {
	index  map[*openapi3.Schema]int32
	nodes  []*openapi3.Schema
	roots  []*openapi3.SchemaRef
	shared []*openapi3.Schema // the values of roots held by parts walked more than once
	// walked holds the parts of the document other than schemas walked so
	// far, true once walked as shared
	walked map[any]bool
	// the references to responses and request bodies (each, not each
	// value), and those written in place in parts walked more than once
	responses []*openapi3.ResponseRef
	bodies    []*openapi3.RequestBodyRef

	valid []bool
}

// references calls f with each reference s holds in a keyword of OpenAPI 3.0.
func references(s *openapi3.Schema, f func(*openapi3.SchemaRef)) {
	for _, r := range s.OneOf {
		f(r)
	}
	for _, r := range s.AnyOf {
		f(r)
	}
	for _, r := range s.AllOf {
		f(r)
	}
	if s.Not != nil {
		f(s.Not)
	}
	if s.Items != nil {
		f(s.Items)
	}
	for _, r := range s.Properties {
		f(r)
	}
	if s.AdditionalProperties.Schema != nil {
		f(s.AdditionalProperties.Schema)
	}
}

// root adds r, a reference kin-openapi checks with a walk of its own, and
// the schemas it reaches; shared: r's holder is walked more than once.
func (g *schemaGraph) root(r *openapi3.SchemaRef, shared bool) {
	if r == nil {
		return
	}
	g.roots = append(g.roots, r)
	if r.Value == nil {
		return
	}
	if shared {
		g.shared = append(g.shared, r.Value)
	}
	stack := []*openapi3.Schema{r.Value}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := g.index[s]; ok {
			continue
		}
		g.index[s] = int32(len(g.nodes))
		g.nodes = append(g.nodes, s)
		references(s, func(c *openapi3.SchemaRef) {
			if c != nil && c.Value != nil {
				if _, ok := g.index[c.Value]; !ok {
					stack = append(stack, c.Value)
				}
			}
		})
	}
}

// first reports whether x, a part of the document, is to be walked: for
// the first time, or for the first time as shared (a part referenced from
// several places is one value).
func (g *schemaGraph) first(x any, shared bool) bool {
	was, ok := g.walked[x]
	if ok && (was || !shared) {
		return false
	}
	g.walked[x] = shared
	return true
}

func (g *schemaGraph) document(d *openapi3.T) {
	if c := d.Components; c != nil {
		for _, r := range c.Schemas {
			g.root(r, false) // a reference to one is counted as one more (judge)
		}
		for _, r := range c.Parameters {
			g.parameter(r, true)
		}
		for _, r := range c.Headers {
			g.header(r, true)
		}
		for _, r := range c.RequestBodies {
			if r != nil && r.Value != nil && g.first(r.Value, true) {
				g.content(r.Value.Content, true)
			}
		}
		for _, r := range c.Responses {
			g.response(r, true)
		}
		for _, r := range c.Callbacks {
			g.callback(r, true)
		}
	}
	if d.Paths != nil {
		for _, item := range d.Paths.Map() {
			g.pathItem(item, false)
		}
	}
}

func (g *schemaGraph) pathItem(item *openapi3.PathItem, shared bool) {
	// a path item reference's copy shares its target's operations
	shared = shared || item != nil && item.Ref != ""
	if item == nil || !g.first(item, shared) {
		return
	}
	for _, r := range item.Parameters {
		g.parameter(r, shared)
	}
	for _, op := range item.Operations() {
		if op == nil || !g.first(op, shared) {
			continue
		}
		for _, r := range op.Parameters {
			g.parameter(r, shared)
		}
		if r := op.RequestBody; r != nil && r.Value != nil {
			if r.Ref != "" || shared {
				g.bodies = append(g.bodies, r)
			}
			if g.first(r.Value, shared || r.Ref != "") {
				g.content(r.Value.Content, shared || r.Ref != "")
			}
		}
		if op.Responses != nil {
			for _, r := range op.Responses.Map() {
				g.response(r, shared)
			}
		}
		for _, r := range op.Callbacks {
			g.callback(r, shared)
		}
	}
}

func (g *schemaGraph) callback(r *openapi3.CallbackRef, shared bool) {
	shared = shared || r != nil && r.Ref != ""
	if r == nil || r.Value == nil || !g.first(r.Value, shared) {
		return
	}
	for _, item := range r.Value.Map() {
		g.pathItem(item, shared)
	}
}

func (g *schemaGraph) parameter(r *openapi3.ParameterRef, shared bool) {
	shared = shared || r != nil && r.Ref != ""
	if r == nil || r.Value == nil || !g.first(r.Value, shared) {
		return
	}
	g.root(r.Value.Schema, shared)
	g.content(r.Value.Content, shared)
}

func (g *schemaGraph) header(r *openapi3.HeaderRef, shared bool) {
	shared = shared || r != nil && r.Ref != ""
	if r == nil || r.Value == nil || !g.first(r.Value, shared) {
		return
	}
	g.root(r.Value.Schema, shared)
	g.content(r.Value.Content, shared)
}

func (g *schemaGraph) response(r *openapi3.ResponseRef, shared bool) {
	if r != nil && (r.Ref != "" || shared) && r.Value != nil {
		g.responses = append(g.responses, r)
	}
	shared = shared || r != nil && r.Ref != ""
	if r == nil || r.Value == nil || !g.first(r.Value, shared) {
		return
	}
	for _, h := range r.Value.Headers {
		g.header(h, shared)
	}
	g.content(r.Value.Content, shared)
}

func (g *schemaGraph) content(c openapi3.Content, shared bool) {
	for _, m := range c {
		if m == nil {
			continue
		}
		g.root(m.Schema, shared)
		for _, e := range m.Encoding {
			if e != nil {
				for _, h := range e.Headers {
					g.header(h, shared)
				}
			}
		}
	}
}

// judge finds which schemas of the region are valid: those that reach no
// schema failing its own rules, its default included.
func (g *schemaGraph) judge(ctx context.Context) {
	n := len(g.nodes)
	g.valid = make([]bool, n)
	// the region: what schemas walked more than once reach
	in := make([]int32, n)
	count := func(c *openapi3.SchemaRef) {
		if c != nil && c.Value != nil {
			in[g.index[c.Value]]++
		}
	}
	for _, r := range g.roots {
		count(r)
	}
	for _, s := range g.nodes {
		references(s, count)
	}
	var stack []int32
	for _, s := range g.shared {
		stack = append(stack, g.index[s])
	}
	for i := range in {
		if in[i] > 1 {
			stack = append(stack, int32(i))
		}
	}
	region := make([]bool, n)
	var members []int32
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if region[i] {
			continue
		}
		region[i] = true
		members = append(members, i)
		references(g.nodes[i], func(c *openapi3.SchemaRef) {
			if c != nil && c.Value != nil {
				stack = append(stack, g.index[c.Value])
			}
		})
	}
	if len(members) == 0 {
		return
	}
	parents := map[int32][]int32{}
	stand := &openapi3.Schema{}
	var failed []int32
	for _, i := range members {
		s := g.nodes[i]
		references(s, func(c *openapi3.SchemaRef) {
			if c != nil && c.Value != nil {
				j := g.index[c.Value]
				parents[j] = append(parents[j], i)
			}
		})
		if !ownRulesHold(ctx, s, stand) {
			failed = append(failed, i)
		}
	}
	bad := make([]bool, n)
	spread := func(from []int32) {
		for len(from) > 0 {
			i := from[len(from)-1]
			from = from[:len(from)-1]
			if bad[i] {
				continue
			}
			bad[i] = true
			from = append(from, parents[i]...)
		}
	}
	spread(failed)
	// a default is checked against a graph otherwise valid, as the walk
	// checks it after the schemas the default's schema reaches
	failed = failed[:0]
	for _, i := range members {
		if s := g.nodes[i]; s.Default != nil && !bad[i] && s.VisitJSON(s.Default, openapi3.MultiErrors()) != nil {
			failed = append(failed, i)
		}
	}
	spread(failed)
	for _, i := range members {
		g.valid[i] = !bad[i]
	}
}

// ownRulesHold reports whether s meets the rules a walk checks on s
// itself, its default aside: kin-openapi's walk of a copy of s whose
// references point to stand (resolved) or nowhere (not resolved).
func ownRulesHold(ctx context.Context, s, stand *openapi3.Schema) bool {
	to := func(r *openapi3.SchemaRef) *openapi3.SchemaRef {
		if r == nil {
			return nil
		}
		c := &openapi3.SchemaRef{Ref: r.Ref, Extensions: r.Extensions, Origin: r.Origin}
		if r.Value != nil {
			c.Value = stand
		}
		return c
	}
	each := func(refs openapi3.SchemaRefs) openapi3.SchemaRefs {
		if refs == nil {
			return nil
		}
		out := make(openapi3.SchemaRefs, len(refs))
		for i, r := range refs {
			out[i] = to(r)
		}
		return out
	}
	c := *s
	c.Default = nil
	c.OneOf, c.AnyOf, c.AllOf = each(s.OneOf), each(s.AnyOf), each(s.AllOf)
	c.Not, c.Items, c.AdditionalProperties.Schema = to(s.Not), to(s.Items), to(s.AdditionalProperties.Schema)
	if s.Properties != nil {
		c.Properties = make(openapi3.Schemas, len(s.Properties))
		for name, r := range s.Properties {
			c.Properties[name] = to(r)
		}
	}
	return c.Validate(ctx) == nil
}

// standIn points each reference to a valid schema to a stand-in, but those
// of schemas a default reaches (and any reference such a schema shares).
func (g *schemaGraph) standIn() {
	// the schemas defaults reach
	reached := make([]bool, len(g.nodes))
	var stack []int32
	for i, s := range g.nodes {
		if s.Default != nil {
			stack = append(stack, int32(i))
		}
	}
	kept := map[*openapi3.SchemaRef]bool{}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if reached[i] {
			continue
		}
		reached[i] = true
		references(g.nodes[i], func(c *openapi3.SchemaRef) {
			if c != nil {
				kept[c] = true
				if c.Value != nil {
					stack = append(stack, g.index[c.Value])
				}
			}
		})
	}
	stand := &openapi3.Schema{}
	swap := func(r *openapi3.SchemaRef) {
		if r == nil || r.Value == nil || kept[r] {
			return
		}
		if i, ok := g.index[r.Value]; ok && g.valid[i] {
			r.Value = stand
		}
	}
	for _, r := range g.roots {
		swap(r)
	}
	for _, s := range g.nodes {
		references(s, swap)
	}
}

// standInShared points each reference to a valid response or request body
// (or one written in place in a part walked more than once: an operation
// a path item reference copies) to a stand-in (valid, empty): kin-openapi
// checks a referenced one at every reference as well (a response of 10,000
// headers referenced from every operation), and nothing but that check
// reads one.
func (g *schemaGraph) standInShared(ctx context.Context) {
	response := &openapi3.Response{Description: new(string)}
	responses := map[*openapi3.Response]bool{}
	for _, r := range g.responses {
		valid, judged := responses[r.Value]
		if !judged {
			valid = r.Value.Validate(ctx) == nil
			responses[r.Value] = valid
		}
		if valid {
			r.Value = response
		}
	}
	body := &openapi3.RequestBody{Content: openapi3.Content{}}
	bodies := map[*openapi3.RequestBody]bool{}
	for _, r := range g.bodies {
		valid, judged := bodies[r.Value]
		if !judged {
			valid = r.Value.Validate(ctx) == nil
			bodies[r.Value] = valid
		}
		if valid {
			r.Value = body
		}
	}
}
