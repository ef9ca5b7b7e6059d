package oasdoc

import (
	"bytes"
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// kin-openapi's loader (Loader.ResolveRefsIn) resolves the components,
// then the paths; a reference to a component walks the component again
// each time (a copy of it is resolved: a component schema of 2,000
// properties referenced from 1,000 paths is walked, its properties sorted,
// 1,000 times). By the time it takes the paths, every component has been
// resolved (or the loader stopped at the first problem), and walking a
// component resolved already changes nothing and finds no problem: its
// references hold their values, which the loader does not walk again.
//
// A reference resolved is also walked once more: the loader, having given
// a reference its value, walks the value's own parts (a component schema's
// 2,000 properties sorted, for each reference to it).
//
// resolveRefs resolves the components first, alone (a document without
// paths or webhooks, the same loader), then marks every part of them as a
// reference already resolved (resolvedMark), gives each reference in the
// paths to a whole component entry the entry's value (presetRefs), and
// resolves the document: the loader then takes the paths as it would
// have, without walking the components again. The marks are removed
// before it returns.
//
// The components' own references to whole entries are given the entries'
// values before the first call (presetRefs), unless one reads through a
// part of a component (#/components/schemas/Pet/properties/id: whether the
// loader finds the part may depend on what it resolved before). Each entry
// is then walked once, at its own turn, rather than at every reference:
// that changes which problem the loader meets first, and a component may
// reference a path, which a document without paths does not hold; so when
// the first call finds a problem, fresh (the components decoded again)
// are resolved with the document in one call, as the loader alone does
// (fresh nil: that problem is the answer).
//
// The paths written in place are then resolved alone, and their parts
// marked, before the path item references: a reference's copy shares its
// target's operations, which the loader walked again at each copy. A
// problem in that call may not be the first the whole document's call
// meets (a reference's own, or its target's met at a copy before it):
// again (the document decoded again) is then resolved in one call (again
// nil: that problem is returned, and a batch leaves the document to the
// whole check, as it leaves any problem in resolving one with path item
// references). None of this is done when a reference reads through a
// path's parts.
func resolveRefs(ctx context.Context, d *openapi3.T, fresh func() (*openapi3.Components, error), again func() (*openapi3.T, error)) error {
	loader := newLoader(ctx)
	m := marker{seen: map[*openapi3.PathItem]bool{}}
	defer m.unmark()
	if d.Components != nil {
		presetRefs(d.Components, d.Components, nil)
		alone := openapi3.T{OpenAPI: d.OpenAPI, Info: d.Info, Components: d.Components, Paths: openapi3.NewPaths()}
		if err := loader.ResolveRefsIn(&alone, nil); err != nil {
			if fresh == nil {
				return err
			}
			c, ferr := fresh()
			if ferr != nil {
				return err
			}
			d.Components = c
			return newLoader(ctx).ResolveRefsIn(d, nil)
		}
		m.components(d.Components)
	}
	if presetRefs(d.Components, nil, d.Paths) {
		return loader.ResolveRefsIn(d, nil)
	}
	// the items written in place first, alone, then (their parts marked)
	// the path item references, whose copies share their targets'
	// operations: the loader walked those again at each copy
	var plain []openapi3.NewPathsOption
	copies := false
	for path, item := range d.Paths.Map() {
		if item != nil && item.Ref != "" {
			copies = true
		} else {
			plain = append(plain, openapi3.WithPath(path, item))
		}
	}
	if copies {
		first := openapi3.T{OpenAPI: d.OpenAPI, Info: d.Info, Components: d.Components, Paths: openapi3.NewPaths(plain...)}
		if err := loader.ResolveRefsIn(&first, nil); err != nil {
			// a reference's problem may come first in the whole document
			if again == nil {
				return err
			}
			whole, ferr := again()
			if ferr != nil {
				return err
			}
			*d = *whole
			return newLoader(ctx).ResolveRefsIn(d, nil)
		}
		for _, item := range first.Paths.Map() {
			m.pathItem(item)
		}
	}
	return loader.ResolveRefsIn(d, nil)
}

// newLoader is kin-openapi's loader as the checks use it: no external
// references.
func newLoader(ctx context.Context) *openapi3.Loader {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = ctx
	return loader
}

// referencesIn reports whether doc may hold a reference: a "$ref" key, as
// written or with escapes. Each part of a document without one is walked
// once by the loader and by the check, which resolveRefs and standIn are
// then not needed for (and not made to hold their maps).
func referencesIn(doc []byte) bool {
	return bytes.Contains(doc, []byte(`"$ref"`)) || bytes.Contains(doc, []byte(`\u`))
}

// resolvedMark is the $ref a part resolved already is given while the
// paths are resolved: the loader takes a reference holding its value as
// done (it neither looks it up nor walks its value).
const resolvedMark = "#resolved"

// marker marks the parts of the components (each reference-or-value that
// holds its value written in place) as resolved, and unmarks them. A part
// is walked only while it is not marked (what it holds is a tree but for
// references, and a reference is not walked), so each once.
type marker struct {
	seen   map[*openapi3.PathItem]bool // a path item reference's copy shares its target's operations
	marked []*string
}

func (m *marker) unmark() {
	for _, ref := range m.marked {
		*ref = ""
	}
}

// mark gives *ref the mark when it is empty (a value written in place),
// reporting whether it did.
func (m *marker) mark(ref *string) bool {
	if *ref != "" {
		return false
	}
	*ref = resolvedMark
	m.marked = append(m.marked, ref)
	return true
}

// components marks the parts of c.
func (m *marker) components(c *openapi3.Components) {
	walkComponents(m, c)
	for _, r := range c.Examples {
		if r != nil && r.Value != nil {
			m.mark(&r.Ref)
		}
	}
	for _, r := range c.Links {
		if r != nil && r.Value != nil {
			m.mark(&r.Ref)
		}
	}
	for _, r := range c.SecuritySchemes {
		if r != nil && r.Value != nil {
			m.mark(&r.Ref)
		}
	}
}

// pathItem marks the parts of a path item (path items are not marked: the
// loader takes an item it resolved as done).
func (m *marker) pathItem(item *openapi3.PathItem) { walkPathItem(m, item) }

// enter marks node when it holds its value written in place, and walks it
// then (a node marked already was walked).
func (m *marker) enter(node any) bool {
	switch r := node.(type) {
	case *openapi3.SchemaRef:
		return r.Value != nil && m.mark(&r.Ref)
	case *openapi3.ParameterRef:
		return r.Value != nil && m.mark(&r.Ref)
	case *openapi3.HeaderRef:
		return r.Value != nil && m.mark(&r.Ref)
	case *openapi3.RequestBodyRef:
		return r.Value != nil && m.mark(&r.Ref)
	case *openapi3.ResponseRef:
		return r.Value != nil && m.mark(&r.Ref)
	case *openapi3.CallbackRef:
		return r.Value != nil && m.mark(&r.Ref)
	case *openapi3.ExampleRef:
		return r.Value != nil && m.mark(&r.Ref)
	case *openapi3.LinkRef:
		return r.Value != nil && m.mark(&r.Ref)
	}
	return false
}

// item walks each path item once (a path item reference's copy shares its
// target's operations), and every operation of it.
func (m *marker) item(x any) bool {
	item, ok := x.(*openapi3.PathItem)
	if !ok {
		return true
	}
	if m.seen[item] {
		return false
	}
	m.seen[item] = true
	return true
}

// presetRefs gives each reference in the components in (before they are
// resolved) or in paths (after) that names a whole entry of c of its own
// kind the entry's value (in paths, a reference to a part of a component
// schema the part's: part), as the loader would, which then takes it as
// done: such a reference cannot fail, and walking the entry changes
// nothing once it is resolved. Before, only entries written in place are
// given (an entry that is a reference has no value yet). A reference the
// loader reads through could find a reference given its value where the
// loader would not have resolved it yet: before the components are
// resolved, where one reads into a part of a component, none is given; in
// the paths, none in the paths such references read through (named by
// one, or by a reference or path item reference of such a path). It
// reports whether a reference reads into a part of a path.
func presetRefs(c, in *openapi3.Components, paths *openapi3.Paths) (intoPathParts bool) {
	p := presetter{c: c, seen: map[any]bool{}, resolved: in == nil}
	if in != nil {
		walkComponents(&p, in)
	}
	for path, item := range paths.Map() {
		p.at = path
		walkPathItem(&p, item)
	}
	if p.intoComponentParts && !p.resolved {
		return p.intoPathParts
	}
	// the paths a reference reads through: named by one, and those their
	// own references read through or copy
	through := map[string]bool{}
	var next []string
	for _, r := range p.reads {
		if r.into {
			next = append(next, r.to)
		}
	}
	for len(next) > 0 {
		path := next[len(next)-1]
		next = next[:len(next)-1]
		if through[path] {
			continue
		}
		through[path] = true
		for _, r := range p.reads {
			if r.from == path {
				next = append(next, r.to)
			}
		}
	}
	for _, s := range p.sets {
		if !through[s.at] {
			s.set()
		}
	}
	return p.intoPathParts
}

// pathRead is a reference in the path from to the path to: into its item's
// parts (into), or to its item (a path item reference, whose copy shares
// the item's operations).
type pathRead struct {
	from, to string
	into     bool
}

// preset is a reference to give its value (set), in the path at ("" in
// the components).
type preset struct {
	at  string
	set func()
}

// presetter finds the references presetRefs gives values to.
type presetter struct {
	c    *openapi3.Components
	seen map[any]bool
	sets []preset
	// at is the path whose item is walked; reads the references to paths
	at    string
	reads []pathRead
	// resolved: c is resolved (else only entries written in place are given)
	resolved bool
	// set by a reference into a path item's parts, into a component's parts
	intoPathParts, intoComponentParts bool
}

// entry returns the name of the entry of kind ref names whole, when
// the loader reads it so (a reference in the document: #, then the
// fragment of the URI, %-escapes decoded, in /-separated parts, each with
// ~1 and ~0 decoded); it notes a reference into a path's parts.
func (p *presetter) entry(ref, kind string) (string, bool) {
	parts := p.parts(ref)
	if p.c == nil || len(parts) != 4 || parts[1] != "components" || parts[2] != kind {
		return "", false
	}
	return parts[3], true
}

// parts are the parts of the fragment of ref as the loader reads them (nil:
// not one it reads in the document); it notes a reference into a part of
// a path or of a component.
func (p *presetter) parts(ref string) []string {
	if ref == "" || ref[0] != '#' {
		return nil
	}
	u, err := url.Parse(ref)
	if err != nil {
		return nil
	}
	parts := strings.Split(u.Fragment, "/")
	if len(parts) < 2 || parts[0] != "" {
		return nil
	}
	for i := range parts {
		parts[i] = unescapeRef(parts[i])
	}
	switch parts[1] {
	case "paths":
		p.intoPathParts = p.intoPathParts || len(parts) > 3
		if len(parts) > 2 {
			p.reads = append(p.reads, pathRead{from: p.at, to: parts[2], into: len(parts) > 3})
		}
	case "components":
		p.intoComponentParts = p.intoComponentParts || len(parts) > 4
	}
	return parts
}

// part returns the schema ref names inside a component schema
// (#/components/schemas/Pet/properties/id), as the loader finds it in the
// components resolved: through properties, items, not, additionalProperties
// and allOf, anyOf, oneOf; ok is false for any other way.
func (p *presetter) part(ref string) (*openapi3.SchemaRef, bool) {
	parts := p.parts(ref)
	if p.c == nil || len(parts) < 5 || parts[1] != "components" || parts[2] != "schemas" {
		return nil, false
	}
	at := p.c.Schemas[parts[3]]
	for i := 4; i < len(parts); i++ {
		if at == nil || at.Value == nil {
			return nil, false
		}
		s := at.Value
		switch parts[i] {
		case "properties":
			if i++; i == len(parts) {
				return nil, false
			}
			at = s.Properties[parts[i]]
		case "items":
			at = s.Items
		case "not":
			at = s.Not
		case "additionalProperties":
			if s.AdditionalProperties.Has != nil {
				return nil, false
			}
			at = s.AdditionalProperties.Schema
		case "allOf", "anyOf", "oneOf":
			refs := map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf}[parts[i]]
			if i++; i == len(parts) || strings.HasPrefix(parts[i], "+") || strings.HasPrefix(parts[i], "-") {
				return nil, false
			}
			n, err := strconv.Atoi(parts[i])
			if err != nil || n >= len(refs) {
				return nil, false
			}
			at = refs[n]
		default:
			return nil, false
		}
	}
	if at == nil || at.Value == nil {
		return nil, false
	}
	return at, true
}

// given reports whether an entry whose own $ref is ref gives its value:
// an entry that is a reference has none before the components are resolved.
func (p *presetter) given(ref string) bool {
	return p.resolved || ref == ""
}

func (p *presetter) first(x any) bool {
	if p.seen[x] {
		return false
	}
	p.seen[x] = true
	return true
}

// item walks each path item and operation once (a path item reference's
// copy shares its target's operations), noting a path item reference's read.
func (p *presetter) item(x any) bool {
	if !p.first(x) {
		return false
	}
	if item, ok := x.(*openapi3.PathItem); ok {
		p.entry(item.Ref, "")
	}
	return true
}

// enter walks a value written in place; a reference is not walked: one to
// a whole entry of its kind (or, in the resolved components, to a part of
// a component schema) is given the entry's value when the entry has one,
// and any other is noted (parts).
func (p *presetter) enter(node any) bool {
	switch r := node.(type) {
	case *openapi3.SchemaRef:
		if r.Ref == "" {
			return r.Value != nil
		}
		if name, ok := p.entry(r.Ref, "schemas"); ok {
			give(p, &r.Value, p.c.Schemas[name], func(e *openapi3.SchemaRef) (string, *openapi3.Schema) { return e.Ref, e.Value })
		} else if at, ok := p.part(r.Ref); ok && p.resolved && r.Value == nil {
			p.sets = append(p.sets, preset{p.at, func() { r.Value = at.Value }})
		}
	case *openapi3.ParameterRef:
		if r.Ref == "" {
			return r.Value != nil
		}
		if name, ok := p.entry(r.Ref, "parameters"); ok {
			give(p, &r.Value, p.c.Parameters[name], func(e *openapi3.ParameterRef) (string, *openapi3.Parameter) { return e.Ref, e.Value })
		}
	case *openapi3.HeaderRef:
		if r.Ref == "" {
			return r.Value != nil
		}
		if name, ok := p.entry(r.Ref, "headers"); ok {
			give(p, &r.Value, p.c.Headers[name], func(e *openapi3.HeaderRef) (string, *openapi3.Header) { return e.Ref, e.Value })
		}
	case *openapi3.RequestBodyRef:
		if r.Ref == "" {
			return r.Value != nil
		}
		if name, ok := p.entry(r.Ref, "requestBodies"); ok {
			give(p, &r.Value, p.c.RequestBodies[name], func(e *openapi3.RequestBodyRef) (string, *openapi3.RequestBody) { return e.Ref, e.Value })
		}
	case *openapi3.ResponseRef:
		if r.Ref == "" {
			return r.Value != nil
		}
		if name, ok := p.entry(r.Ref, "responses"); ok {
			give(p, &r.Value, p.c.Responses[name], func(e *openapi3.ResponseRef) (string, *openapi3.Response) { return e.Ref, e.Value })
		}
	case *openapi3.CallbackRef:
		if r.Ref == "" {
			return r.Value != nil
		}
		p.entry(r.Ref, "")
	case *openapi3.ExampleRef:
		p.entry(r.Ref, "")
	case *openapi3.LinkRef:
		p.entry(r.Ref, "")
	}
	return false
}

// give presets *at, when it has no value, to the value of entry (nil: none
// of that name), when the entry has one to give (given).
func give[E comparable, V any](p *presetter, at **V, entry E, read func(E) (ref string, value *V)) {
	var none E
	if *at != nil || entry == none {
		return
	}
	if ref, value := read(entry); value != nil && p.given(ref) {
		p.sets = append(p.sets, preset{p.at, func() { *at = value }})
	}
}
