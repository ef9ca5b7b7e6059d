package oasdoc

import (
	"context"
	"errors"
	"hash/maphash"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// A document's paths decoded whole cost many times their text (a path item
// and its operation, in kin-openapi's model, take about 1 KiB where
// "/p1":{"get":{}} takes 16 bytes), so validation holds only a batch of
// them at a time: the root and components are decoded and checked once,
// then the paths, a batch at a time, are decoded, resolved against the
// components, checked and dropped. What crosses batches (a path or a
// templated path given twice, an operationId used twice) is kept as 64-bit
// hashes. Callbacks (of operations and of the components) are checked
// with the batch that holds them. A security requirement naming an
// undeclared scheme is found as T.Validate's last walk finds it (walk) and
// named once every other rule has been checked. validInBatches says that a
// document is valid or names the problem it found: on what it does not
// handle (references between paths of different batches, a path item
// $ref) it gives up, and the whole document is checked as before (check),
// whose answer and message are then the one.

// batchDivisor and minBatch size a batch: a 32nd of the document's text,
// at least 16 KiB of it.
const (
	batchDivisor = 32
	minBatch     = 16 << 10
)

// validInBatches reports whether doc, whose root members are root, meets
// the OpenAPI rules as checkOpenAPI(decodeOpenAPI(doc)) checks them, found
// holding a batch of its paths at a time. false means: not known.
//
// problem, when not valid, is the first problem kin-openapi found in a batch
// (resolving or checking it), wrapped as the whole check wraps it, or nil:
// with several problems in a document, the whole check may name another
// one first.
func validInBatches(ctx context.Context, doc []byte, root []rawjson.Member) (valid bool, problem error) {
	return validInBatchesOf(ctx, doc, root, max(len(doc)/batchDivisor, minBatch))
}

// problemError is a problem kin-openapi found in a batch.
type problemError struct{ err error }

func (p *problemError) Error() string { return p.err.Error() }

// validInBatchesOf is validInBatches with batches of limit bytes of text.
func validInBatchesOf(ctx context.Context, doc []byte, root []rawjson.Member, limit int) (bool, error) {
	valid, err := checkInBatches(ctx, doc, root, limit)
	var p *problemError
	if errors.As(err, &p) {
		return false, p.err
	}
	return valid && err == nil, nil
}

// checkInBatches is validInBatchesOf; its error is a *problemError, or
// means: not known.
func checkInBatches(ctx context.Context, doc []byte, root []rawjson.Member, limit int) (bool, error) {
	d, paths, components, err := decodeRoot(doc, root)
	if err != nil || !d.IsOpenAPI30() || d.Webhooks != nil || d.JSONSchemaDialect != "" {
		return false, nil
	}
	// the entries a batch references bring at most twice its own text
	// (twice the smallest batch's when it is smaller: tests take each path
	// alone)
	ix, ok := indexComponents(components, 2*max(limit, minBatch))
	if !ok {
		return false, nil
	}
	b := pathBatches{ctx: ctx, opt: openapi3.WithValidationOptions(ctx, openapi3.DisableExamplesValidation()), ix: ix, root: *d,
		limit: limit, seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
	if err := b.checkComponents(); err != nil {
		return false, err
	}
	if b.targets, b.into, ok = pathTargets(paths); !ok {
		return false, nil
	}
	b.batch, b.needs, b.pathsText = openapi3.NewPaths(), map[string]pathTarget{}, len(paths)
	s := &scanner{data: paths, canonical: true}
	var extensions map[string]any
	err = s.object(func(key []byte) error {
		if isExtension(key) {
			return s.extension(&extensions, key)
		}
		start := s.pos
		item, err := decodeMember(s, s.pathItem)
		if err != nil {
			return err
		}
		return b.add(string(key), item, paths[start:s.pos])
	})
	if err == nil {
		err = b.flush()
	}
	if err != nil {
		return false, err
	}
	// the paths object's own extensions, as Paths.Validate checks them last
	rest := openapi3.NewPaths()
	rest.Extensions = extensions
	if err := rest.Validate(b.opt); err != nil {
		return false, &problemError{&openapi3.SectionValidationError{Section: "paths", Cause: err}}
	}
	if b.unknown != nil {
		return false, &problemError{b.unknown}
	}
	return true, nil
}

// pathBatches checks a document in batches: its components, then its paths.
type pathBatches struct {
	ctx, opt context.Context
	ix       *componentIndex
	root     openapi3.T // the document without its paths and components
	limit    int        // text of a batch

	batch *openapi3.Paths
	texts [][]byte // of the batch's path items
	size  int      // text of the batch so far

	// targets are the targets of the document's path item references, by
	// reference (pathrefs.go); needs those the batch's references name
	targets map[string]pathTarget
	// into are the targets of references into paths' items, by reference
	// as written
	into  map[string]pathTarget
	needs map[string]pathTarget
	// extra is the text of targets checked with batches not their own so
	// far; more than 4 times the paths' own text gives up (a large item
	// referenced from every batch would be decoded again in each)
	extra, pathsText int

	seed maphash.Seed
	// seen holds a hash of each path as kin-openapi compares paths (its
	// {parameter} names left out) and of each operationId, "#"-prefixed;
	// two alike, or a collision, give up.
	seen map[uint64]struct{}

	// unknown is the first problem T.Validate's walk over the security
	// requirements would find (walk), at unknownAt in its order
	unknown   error
	unknownAt walkPlace
}

// walkPlace is a place in the order in which T.Validate walks the security
// requirements, after every other rule: the root's (part 0), the paths'
// in sorted order (part 1, key the path), then the callbacks of the
// components in sorted order (part 2, key the name).
type walkPlace struct {
	part int
	key  string
}

func (p walkPlace) before(q walkPlace) bool {
	return p.part < q.part || p.part == q.part && p.key < q.key
}

// found keeps err, a finding of the walk at place, when it comes first.
func (b *pathBatches) found(err error, place walkPlace) {
	if b.unknown == nil || place.before(b.unknownAt) {
		b.unknown, b.unknownAt = err, place
	}
}

// walkFinding reports whether err, from T.Validate over the root and a
// batch of components, is a finding of its last walk, and where.
func walkFinding(err error) (walkPlace, bool) {
	var undeclared *openapi3.SecurityRequirementSchemeUndefinedError
	var section *openapi3.SectionValidationError
	if !errors.As(err, &undeclared) || !errors.As(err, &section) {
		return walkPlace{}, false
	}
	var component *openapi3.ComponentValidationError
	switch {
	case section.Section == "security":
		return walkPlace{part: 0}, true
	case section.Section == "components" && errors.As(err, &component) && component.Section == "callback":
		return walkPlace{part: 2, key: component.Name}, true
	}
	return walkPlace{}, false
}

// resolve resolves the references of d, as kin-openapi's loader does in
// the whole document.
func (b *pathBatches) resolve(d *openapi3.T) error {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = b.ctx
	return loader.ResolveRefsIn(d, nil)
}

// checkComponents checks the root, without paths, with the components a
// batch of them at a time, each batch with the entries it references.
func (b *pathBatches) checkComponents() error {
	check := func(own []int32, texts [][]byte) error {
		set, ok := b.ix.closure(own, texts)
		if !ok {
			return errUnsupported
		}
		c, err := b.ix.components(set)
		if err != nil {
			return errUnsupported
		}
		d := b.root
		d.Components, d.Paths = c, openapi3.NewPaths()
		if err := b.resolve(&d); err != nil {
			if b.ix.deep {
				return errUnsupported // see componentIndex.deep
			}
			return &problemError{err}
		}
		if err := d.Validate(b.ctx, openapi3.DisableExamplesValidation()); err != nil {
			if place, ok := walkFinding(err); ok {
				b.found(err, place)
				return nil
			}
			if b.ix.deep {
				return errUnsupported // see componentIndex.deep
			}
			return &problemError{err}
		}
		return nil
	}
	var own []int32
	var texts [][]byte
	size := 0
	for i, e := range b.ix.entries {
		own = append(own, int32(i))
		texts = append(texts, b.ix.text[e.valueStart:e.valueEnd])
		if size += int(e.valueEnd - e.keyStart); size >= b.limit {
			if err := check(own, texts); err != nil {
				return err
			}
			own, texts, size = own[:0], texts[:0], 0
		}
	}
	if len(own) == 0 && len(b.ix.entries) > 0 {
		return nil
	}
	return check(own, texts)
}

// add takes the path item of path, whose text is text, into the batch and
// checks the batch once it holds enough.
func (b *pathBatches) add(path string, item *openapi3.PathItem, text []byte) error {
	if item == nil || !b.note(templateOf(path)) {
		return errUnsupported
	}
	if item.Ref != "" {
		t, ok := b.targets[item.Ref]
		if !ok {
			return errUnsupported
		}
		if _, needed := b.needs[t.name]; !needed {
			b.needs[t.name] = t
			b.size += len(t.text)
		}
	}
	for _, op := range item.Operations() {
		if op.OperationID != "" && !b.note("#"+op.OperationID) {
			return errUnsupported
		}
	}
	b.batch.Set(path, item)
	if item.Ref == "" { // a reference's text is its target's, taken at flush
		b.texts = append(b.texts, text)
	}
	if b.size += len(text); b.size >= b.limit {
		return b.flush()
	}
	return nil
}

// note records key, reporting false when it (or a key of the same hash)
// was seen before.
func (b *pathBatches) note(key string) bool {
	h := maphash.String(b.seed, key)
	if _, dup := b.seen[h]; dup {
		return false
	}
	b.seen[h] = struct{}{}
	return true
}

// flush resolves and checks the batch, as kin-openapi's loader and
// Paths.Validate would in the whole document, and drops it.
func (b *pathBatches) flush() error {
	if b.batch.Len() == 0 {
		return nil
	}
	// the targets of the batch's references to paths, not in it, and
	// those their texts reference in turn
	added := map[string]bool{}
	here := 0 // their text
	var set map[int32]bool
	for {
		for name, t := range b.needs {
			if added[name] || b.batch.Value(name) != nil {
				continue
			}
			// bounded: in all (each may be checked with every batch) and in
			// this batch (they are held with it)
			here += len(t.text)
			if b.extra += len(t.text); b.extra > 4*b.pathsText || here > 2*max(b.limit, minBatch) {
				return errUnsupported
			}
			s := &scanner{data: t.text, canonical: true}
			item, err := decodeMember(s, s.pathItem)
			if err != nil {
				return errUnsupported
			}
			b.batch.Set(name, item)
			added[name] = true
			b.texts = append(b.texts, t.text)
		}
		more := false
		b.ix.other = func(ref []byte) bool {
			t, ok := b.into[string(ref)]
			if ok && !added[t.name] && b.batch.Value(t.name) == nil {
				b.needs[t.name], more = t, true
			}
			return ok
		}
		var ok bool
		set, ok = b.ix.closure(nil, b.texts)
		b.ix.other = nil
		if !ok {
			return errUnsupported
		}
		if !more {
			break
		}
	}
	c, err := b.ix.components(set)
	if err != nil {
		return errUnsupported
	}
	d := b.root
	d.Components, d.Paths = c, b.batch
	err = b.resolve(&d)
	if err == nil {
		if err = b.batch.Validate(b.opt); err != nil {
			err = &openapi3.SectionValidationError{Section: "paths", Cause: err}
		}
	}
	switch {
	case err != nil && (len(b.targets) > 0 || len(b.into) > 0 || b.ix.deep):
		// a target's problem is the whole check's under the least path
		// referencing it, which may be in another batch
		return errUnsupported
	case err != nil:
		return &problemError{err}
	}
	b.walk(c)
	b.batch, b.texts, b.size = openapi3.NewPaths(), b.texts[:0], 0
	clear(b.needs)
	return nil
}

// walk finds what T.Validate's last walk, over the security requirements
// of the operations and of their callbacks, would find in the resolved
// batch, whose components are c: for a path whose requirements name an
// undeclared scheme, kin-openapi's own walk, over a document of that path
// alone, gives the message. The walk takes the paths in sorted order and
// stops at its first finding, so of all batches' findings the one of the
// least path is the whole check's; it is kept (found) until every other
// rule has been checked (T.Validate walks after them).
func (b *pathBatches) walk(c *openapi3.Components) {
	var schemes openapi3.SecuritySchemes
	if c != nil {
		schemes = c.SecuritySchemes
	}
	for path, item := range b.batch.Map() {
		place := walkPlace{part: 1, key: path}
		if b.unknown != nil && !place.before(b.unknownAt) || !namesUndeclared(item, schemes, map[*openapi3.Callback]bool{}) {
			continue
		}
		alone := openapi3.T{OpenAPI: b.root.OpenAPI, Info: b.root.Info, Paths: openapi3.NewPaths(openapi3.WithPath(path, item))}
		if schemes != nil {
			alone.Components = &openapi3.Components{SecuritySchemes: schemes}
		}
		if err := alone.Validate(b.ctx, openapi3.DisableExamplesValidation()); err != nil {
			b.found(err, place)
		}
	}
}

// namesUndeclared reports whether an operation of item, or of a callback
// of one (seen: the callbacks walked so far), names a scheme not among
// schemes in its security requirements. It may report true where
// kin-openapi's walk finds nothing (an additional operation of a fixed
// method), never false where it finds something.
func namesUndeclared(item *openapi3.PathItem, schemes openapi3.SecuritySchemes, seen map[*openapi3.Callback]bool) bool {
	if item == nil {
		return false
	}
	ops := []*openapi3.Operation{item.Connect, item.Delete, item.Get, item.Head, item.Options, item.Patch, item.Post, item.Put, item.Trace, item.Query}
	for _, op := range item.AdditionalOperations {
		ops = append(ops, op)
	}
	for _, op := range ops {
		if op == nil {
			continue
		}
		if op.Security != nil {
			for _, requirement := range *op.Security {
				for name := range requirement {
					if _, declared := schemes[name]; !declared {
						return true
					}
				}
			}
		}
		for _, ref := range op.Callbacks {
			if ref == nil || ref.Value == nil || seen[ref.Value] {
				continue
			}
			seen[ref.Value] = true
			for _, cbItem := range ref.Value.Map() {
				if namesUndeclared(cbItem, schemes, seen) {
					return true
				}
			}
		}
	}
	return false
}

// templateOf is path with every {parameter} name left out ("/a/{id}" →
// "/a/{}"): two paths kin-openapi finds conflicting (alike but for their
// parameters' names) have the same template; it may find fewer.
func templateOf(path string) string {
	out := make([]byte, 0, len(path))
	inside := false
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '{':
			inside = true
			out = append(out, c)
		case c == '}':
			inside = false
			out = append(out, c)
		case !inside:
			out = append(out, c)
		}
	}
	return string(out)
}
