package oasdoc

import (
	"context"
	"errors"
	"hash/maphash"
	"slices"

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
// document is valid or names the problem the whole check would name first:
// the batches go on past a problem, for one the whole check names before
// it (a path item kin-openapi cannot decode, then a problem in resolving,
// then webhooks or jsonSchemaDialect, then the least path's problem, with
// conflicting paths and operationIds used twice found once the batches
// are done: crossings). On what it does not handle (a path item $ref of
// another form than pathrefs.go follows) it gives up, and the whole
// document is checked as before (check), whose answer and message are
// then the one.

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
	if err != nil || !d.IsOpenAPI30() {
		return false, nil
	}
	// webhooks and jsonSchemaDialect are refused in a 3.0 document, by the
	// first rule T.Validate checks: the batches check the document without
	// them, and name that rule's problem when the document decodes and
	// resolves (resolved, below)
	versionRules := *d
	d.Webhooks, d.JSONSchemaDialect = nil, ""
	// the entries a batch references bring at most twice its own text
	// (twice the smallest batch's when it is smaller: tests take each path
	// alone)
	ix, ok := indexComponents(components, 2*max(limit, minBatch))
	if !ok {
		return false, nil
	}
	b := pathBatches{ctx: ctx, opt: openapi3.WithValidationOptions(ctx, openapi3.DisableExamplesValidation()), ix: ix, root: *d, refs: referencesIn(doc),
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
			// kin-openapi decodes each path item alone, in sorted order
			s.pos = start
			raw, err := s.raw()
			if err != nil {
				return err
			}
			if item = new(openapi3.PathItem); item.UnmarshalJSON(raw) != nil {
				b.undecodable(string(key), paths[start:s.pos])
				return nil
			}
		}
		return b.add(string(key), item, paths[start:s.pos])
	})
	if err == nil {
		err = b.flush()
	}
	if err != nil {
		return false, err
	}
	switch {
	case b.undecoded != "" || b.undecodedComponent != nil:
		// decoding comes first: the whole decode's problem is the first
		// component entry's or the least path's that kin-openapi cannot
		// decode, whichever the root has first
		return false, decodeProblem(doc, root, b.undecodedComponent, b.undecoded, b.undecodedText)
	case b.resolveProblem != nil:
		return false, &problemError{b.resolveProblem}
	case versionRules.Webhooks != nil || versionRules.JSONSchemaDialect != "":
		return false, b.versionProblem(&versionRules, doc, root)
	case b.problem != nil:
		return false, &problemError{b.problem}
	}
	var dup error
	if b.crossed != nil {
		var conflict error
		var at string
		if conflict, at, dup, err = b.crossings(paths); err != nil {
			return false, err
		}
		if conflict != nil && (b.pathProblem == nil || at <= b.pathProblemAt) {
			return false, &problemError{conflict}
		}
	}
	switch {
	case b.pathProblem != nil:
		return false, &problemError{b.pathProblem}
	case b.otherProblem != nil:
		return false, &problemError{b.otherProblem}
	case dup != nil:
		return false, &problemError{dup}
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

// undecodable notes path, whose item's text is text, as one kin-openapi
// cannot decode; the batches stop (a problem in decoding is the answer),
// the paths are read on for one of a lesser name.
func (b *pathBatches) undecodable(path string, text []byte) {
	if b.undecoded == "" || path < b.undecoded {
		b.undecoded, b.undecodedText = path, text
	}
	b.stopped = true
}

// undecodableComponent notes the first of own, entries of the components
// that did not decode with those they reference, that does not decode
// alone: kin-openapi decodes the entries in document order, stopping at
// the first that fails (the batches of components go in that order too).
// The batches stop (a problem in decoding is the answer); the paths are
// read on for one they cannot decode. When every entry of own decodes
// alone, the one that failed is referenced, and found with its own batch.
func (b *pathBatches) undecodableComponent(own []int32) {
	for _, i := range own {
		if _, err := b.ix.components(map[int32]bool{i: true}); err != nil {
			e := b.ix.entries[i]
			alone := []byte(`{"` + componentKinds[e.kind] + `":{`)
			alone = append(alone, b.ix.text[e.keyStart:e.valueEnd]...)
			b.undecodedComponent, b.stopped = append(alone, "}}"...), true
			return
		}
	}
}

// decodeProblem is kin-openapi's problem in decoding doc, whose root
// members are root, when the first component entry it cannot decode is
// components' only one (nil: none) and the least path it cannot decode is
// path (""; none), whose item's text is text: the problem of decoding the
// root with them alone (kin-openapi decodes each path item on its own, in
// sorted order, the component entries in document order, and stops at
// the first that fails). A document that then decodes is left to the
// whole check.
func decodeProblem(doc []byte, root []rawjson.Member, components []byte, path string, text []byte) error {
	alone := make([]byte, 0, 1024+len(components)+len(text))
	alone = append(alone, '{')
	for _, m := range root {
		if m.Key == "components" && components == nil {
			continue
		}
		if len(alone) > 1 {
			alone = append(alone, ',')
		}
		switch m.Key {
		case "components":
			alone = append(alone, `"components":`...)
			alone = append(alone, components...)
		case "paths":
			alone = append(alone, `"paths":{`...)
			if path != "" {
				alone = append(alone, rawjson.Quote(path)...)
				alone = append(alone, ':')
				alone = append(alone, text...)
			}
			alone = append(alone, '}')
		default:
			alone = append(alone, doc[m.Start:m.ValueEnd]...)
		}
	}
	alone = append(alone, '}')
	if err := new(openapi3.T).UnmarshalJSON(alone); err != nil {
		return &problemError{err}
	}
	return errUnsupported
}

// versionProblem is the problem of a document that has webhooks or a
// jsonSchemaDialect (d holds them, its root as decoded), found valid or
// with a problem of validation only in batches: a problem in resolving its
// webhooks (resolved after the paths), else the first rule T.Validate
// checks, its own message. What the batches cannot follow in the webhooks
// leaves the document to the whole check.
func (b *pathBatches) versionProblem(d *openapi3.T, doc []byte, root []rawjson.Member) error {
	rules := openapi3.T{OpenAPI: d.OpenAPI, Info: d.Info, Paths: openapi3.NewPaths(), Webhooks: d.Webhooks, JSONSchemaDialect: d.JSONSchemaDialect}
	if m, ok := lastMember(root, "webhooks"); ok && d.Webhooks != nil {
		set, ok := b.ix.closure(nil, [][]byte{doc[m.ValueStart:m.ValueEnd]})
		if !ok {
			return errUnsupported
		}
		c, err := b.ix.components(set)
		if err != nil {
			return errUnsupported
		}
		resolved := rules
		resolved.Components = c
		if err := b.resolve(&resolved, set); err != nil {
			if b.ix.deep {
				return errUnsupported
			}
			return &problemError{err}
		}
	}
	if err := rules.Validate(b.ctx, openapi3.DisableExamplesValidation()); err != nil {
		return &problemError{err}
	}
	return errUnsupported
}

// pathBatches checks a document in batches: its components, then its paths.
type pathBatches struct {
	ctx, opt context.Context
	ix       *componentIndex
	root     openapi3.T // the document without its paths and components
	limit    int        // text of a batch
	refs     bool       // the document may hold references (referencesIn)

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
	// two alike, or a collision, are crossed (note).
	seen map[uint64]struct{}

	// unknown is the first problem T.Validate's walk over the security
	// requirements would find (walk), at unknownAt in its order
	unknown   error
	unknownAt walkPlace

	// The batches go on past a problem of validation: a problem in
	// decoding or resolving, found later, is the whole check's answer
	// before it. resolveProblem is the first problem in resolving the
	// components, after which the batches stop (stopped) and the paths are
	// only decoded, or else the problem in resolving of the least path
	// found with one (resolveProblemAt), after which the batches only
	// resolve; problem the first problem of the components and root;
	// pathProblem the problem of the least path found with one
	// (pathProblemAt), as Paths.Validate, walking the paths in sorted
	// order, finds it; otherProblem the first a batch found of no one path.
	resolveProblem, problem, pathProblem, otherProblem error
	resolveProblemAt, pathProblemAt                    string
	stopped                                            bool
	// undecoded is the least path whose item kin-openapi cannot decode,
	// undecodedText its item's text; undecodedComponent the first entry
	// of the components it cannot decode, as a components object
	undecoded                         string
	undecodedText, undecodedComponent []byte
	// crossed holds the hashes of the keys seen twice (note); skeletons
	// the targets of path item references as skeleton decodes them
	crossed   map[uint64]bool
	skeletons map[string]*openapi3.PathItem
}

// pathResolveProblem notes err, the problem the loader found resolving d,
// the batch's document: of the batch's first path in sorted order whose
// references do not resolve (the loader resolves the paths in that order,
// and stops at the first problem), which each path resolved alone finds.
// It is kept when the path is less than that of the one kept so far.
func (b *pathBatches) pathResolveProblem(d openapi3.T, err error) error {
	for _, path := range b.batch.Keys() {
		if b.resolveProblem != nil && path >= b.resolveProblemAt {
			return nil
		}
		alone := d
		alone.Paths = openapi3.NewPaths(openapi3.WithPath(path, b.batch.Value(path)))
		if b.resolve(&alone, nil) != nil {
			b.resolveProblem, b.resolveProblemAt = err, path
			return nil
		}
	}
	return errUnsupported // not found alone: left to the whole check
}

// validationProblem notes err, a problem Paths.Validate found in a batch:
// kept when it is of a path less than the one kept so far; a problem of
// no one path (an operationId twice, the copy of a path item's) is kept
// when it is the first.
func (b *pathBatches) validationProblem(err error) {
	var inPath *openapi3.PathValidationError
	var params *openapi3.PathParametersError
	var slash *openapi3.PathMustStartWithSlashError
	var conflict *openapi3.ConflictingPathsError
	var dup *openapi3.DuplicateOperationIDError
	var path string
	switch {
	case errors.As(err, &conflict), errors.As(err, &dup):
		return // found in all the paths (crossings)
	case errors.As(err, &inPath):
		path = inPath.Path
	case errors.As(err, &params):
		path = params.Path
	case errors.As(err, &slash):
		path = slash.Path
	default:
		if b.otherProblem == nil {
			b.otherProblem = err
		}
		return
	}
	if b.pathProblem == nil || path < b.pathProblemAt {
		b.pathProblem, b.pathProblemAt = err, path
	}
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
// the whole document (resolveRefs); set, when not nil, is the set of
// entries d's components were decoded from, decoded again when the loader
// must resolve them again.
func (b *pathBatches) resolve(d *openapi3.T, set map[int32]bool) error {
	if !b.refs {
		return newLoader(b.ctx).ResolveRefsIn(d, nil)
	}
	var fresh func() (*openapi3.Components, error)
	if set != nil {
		fresh = func() (*openapi3.Components, error) { return b.ix.components(set) }
	}
	return resolveRefs(b.ctx, d, fresh, nil) // a batch with path item references leaves a problem in resolving to the whole check
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
			b.undecodableComponent(own)
			return nil
		}
		d := b.root
		d.Components, d.Paths = c, openapi3.NewPaths()
		if err := b.resolve(&d, set); err != nil {
			if b.ix.deep {
				return errUnsupported // see componentIndex.deep
			}
			b.resolveProblem, b.stopped = err, true
			return nil
		}
		if b.refs {
			standIn(b.ctx, &d)
		}
		if err := d.Validate(b.ctx, openapi3.DisableExamplesValidation()); err != nil {
			if place, ok := walkFinding(err); ok {
				b.found(err, place)
				return nil
			}
			if b.problem == nil {
				b.problem = err
			}
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
			if err := check(own, texts); err != nil || b.stopped {
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
	if b.stopped {
		return nil
	}
	if item == nil {
		return errUnsupported
	}
	b.note(templateOf(path))
	ops := item.Operations()
	if item.Ref != "" {
		t, ok := b.targets[item.Ref]
		if !ok {
			return errUnsupported
		}
		if _, needed := b.needs[t.name]; !needed {
			b.needs[t.name] = t
			b.size += len(t.text)
		}
		// the copy's operations are the target's: their operationIds used
		// twice (unless the item has its own of the method)
		ids, err := b.copiedIDs(t)
		if err != nil {
			return err
		}
		for _, id := range ids {
			b.cross(maphash.String(b.seed, "#"+id))
		}
	}
	for _, op := range ops {
		if op.OperationID != "" {
			b.note("#" + op.OperationID)
		}
	}
	b.batch.Set(path, item)
	b.texts = append(b.texts, text) // a reference's target's is taken at flush (other)
	if b.size += len(text); b.size >= b.limit {
		return b.flush()
	}
	return nil
}

// skeleton is the item of t with only what a copy of it takes into the
// checks made on all the paths (crossings): its $ref and its operations'
// operationIds, decoded once per target (a large item may be referenced
// from every path).
func (b *pathBatches) skeleton(t pathTarget) (*openapi3.PathItem, error) {
	if item, ok := b.skeletons[t.name]; ok {
		return item, nil
	}
	s := &scanner{data: t.text, canonical: true}
	item, err := decodeMember(s, s.pathItem)
	if err != nil {
		return nil, errUnsupported
	}
	bare := func(op *openapi3.Operation) *openapi3.Operation {
		if op == nil {
			return nil
		}
		return &openapi3.Operation{OperationID: op.OperationID}
	}
	k := &openapi3.PathItem{Ref: item.Ref, Connect: bare(item.Connect), Delete: bare(item.Delete), Get: bare(item.Get), Head: bare(item.Head),
		Options: bare(item.Options), Patch: bare(item.Patch), Post: bare(item.Post), Put: bare(item.Put), Trace: bare(item.Trace), Query: bare(item.Query)}
	for method, op := range item.AdditionalOperations {
		if k.AdditionalOperations == nil {
			k.AdditionalOperations = map[string]*openapi3.Operation{}
		}
		k.AdditionalOperations[method] = bare(op)
	}
	if b.skeletons == nil {
		b.skeletons = map[string]*openapi3.PathItem{}
	}
	b.skeletons[t.name] = k
	return k, nil
}

// operationIDs are the operationIds of item's operations.
func operationIDs(item *openapi3.PathItem) []string {
	var ids []string
	for _, op := range item.Operations() {
		if op != nil && op.OperationID != "" {
			ids = append(ids, op.OperationID)
		}
	}
	return ids
}

// copiedIDs returns the operationIds of the operations of t, the target of
// a path item reference. Along a chain of references, whether the copy has
// its last target's operations depends on the order the loader takes the
// paths in (pathrefs.go): a chain whose items have one is not followed.
func (b *pathBatches) copiedIDs(t pathTarget) ([]string, error) {
	item, err := b.skeleton(t)
	if err != nil || item.Ref == "" {
		return operationIDs(item), err
	}
	for steps := 0; item.Ref != ""; steps++ {
		next, ok := b.targets[item.Ref]
		if len(operationIDs(item)) > 0 || !ok || steps > len(b.targets) {
			return nil, errUnsupported
		}
		if item, err = b.skeleton(next); err != nil {
			return nil, err
		}
	}
	if len(operationIDs(item)) > 0 {
		return nil, errUnsupported
	}
	return nil, nil
}

// note records key: one seen before (or a key of the same hash) is
// crossed, and what it may be (conflicting paths, an operationId twice)
// found once the batches are done (crossings).
func (b *pathBatches) note(key string) {
	h := maphash.String(b.seed, key)
	if _, dup := b.seen[h]; dup {
		b.cross(h)
		return
	}
	b.seen[h] = struct{}{}
}

// cross records h, a hash of a key seen twice.
func (b *pathBatches) cross(h uint64) {
	if b.crossed == nil {
		b.crossed = map[uint64]bool{}
	}
	b.crossed[h] = true
}

// copyOf is the item a path item reference, item, resolves to when its
// target's item is target: the target's, and what item has beside its
// $ref in place of the target's (as kin-openapi's loader merges them).
func copyOf(item, target *openapi3.PathItem) *openapi3.PathItem {
	c := *target
	for _, f := range []struct{ to, from **openapi3.Operation }{
		{&c.Connect, &item.Connect}, {&c.Delete, &item.Delete}, {&c.Get, &item.Get}, {&c.Head, &item.Head}, {&c.Options, &item.Options},
		{&c.Patch, &item.Patch}, {&c.Post, &item.Post}, {&c.Put, &item.Put}, {&c.Trace, &item.Trace}, {&c.Query, &item.Query},
	} {
		if *f.from != nil {
			*f.to = *f.from
		}
	}
	if len(item.AdditionalOperations) != 0 {
		c.AdditionalOperations = item.AdditionalOperations
	}
	return &c
}

// crossings reads the paths again for the problems of the keys seen twice
// (crossed), as Paths.Validate finds them: conflict, two paths alike but
// for their parameters' names, at the least path that has an alike path
// less than it (conflictAt), which it finds as it walks the paths in
// sorted order; and dup, an operationId twice, found after every path
// has passed, at the first operation in the order of paths then methods
// whose operationId an earlier one has (the copy of a path item reference
// has its target's operations). err is errUnsupported when kin-openapi
// does not find two paths alike that the batches find alike.
func (b *pathBatches) crossings(paths []byte) (conflict error, conflictAt string, dup error, err error) {
	type endpoint struct{ path, method string }
	before := func(e, f endpoint) bool { return e.path < f.path || e.path == f.path && e.method < f.method }
	alike := map[uint64][]string{} // template → its two least paths
	ids := map[string][]endpoint{} // crossed operationId → its two first endpoints
	least := func(list []string, path string) []string {
		list = append(list, path)
		slices.Sort(list)
		return list[:min(len(list), 2)]
	}
	s := &scanner{data: paths, canonical: true}
	err = s.object(func(key []byte) error {
		if isExtension(key) {
			_, err := s.skip()
			return err
		}
		path := string(key)
		item, err := decodeMember(s, s.pathItem)
		if err != nil {
			return errUnsupported
		}
		if h := maphash.String(b.seed, templateOf(path)); b.crossed[h] {
			alike[h] = least(alike[h], path)
		}
		if t, ok := b.targets[item.Ref]; ok && item.Ref != "" {
			target, err := b.skeleton(t)
			if err != nil {
				return err
			}
			if target.Ref == "" { // else no operationId along the chain (copiedIDs)
				item = copyOf(item, target)
			}
		}
		for method, op := range item.Operations() {
			if op.OperationID == "" || !b.crossed[maphash.String(b.seed, "#"+op.OperationID)] {
				continue
			}
			list := append(ids[op.OperationID], endpoint{path, method})
			slices.SortFunc(list, func(e, f endpoint) int {
				if before(e, f) {
					return -1
				}
				return 1
			})
			ids[op.OperationID] = list[:min(len(list), 2)]
		}
		return nil
	})
	if err != nil {
		return nil, "", nil, errUnsupported
	}
	for _, list := range alike {
		if len(list) < 2 || conflict != nil && list[1] >= conflictAt {
			continue
		}
		two := openapi3.NewPaths(openapi3.WithPath(list[0], &openapi3.PathItem{}), openapi3.WithPath(list[1], &openapi3.PathItem{}))
		var c *openapi3.ConflictingPathsError
		if err := two.Validate(b.ctx); !errors.As(err, &c) {
			return nil, "", nil, errUnsupported
		}
		conflict, conflictAt = &openapi3.SectionValidationError{Section: "paths", Cause: two.Validate(b.ctx)}, list[1]
	}
	var first *endpoint
	var firstID string
	for id, list := range ids {
		if len(list) == 2 && (first == nil || before(list[1], *first)) {
			first, firstID = &list[1], id
		}
	}
	if first != nil {
		e1, e2 := first.method+" "+first.path, ids[firstID][0].method+" "+ids[firstID][0].path
		if e1 > e2 {
			e1, e2 = e2, e1
		}
		dup = &openapi3.SectionValidationError{Section: "paths", Cause: &openapi3.DuplicateOperationIDError{Endpoint1: e1, Endpoint2: e2, OperationID: firstID}}
	}
	return conflict, conflictAt, dup, nil
}

// flush resolves and checks the batch, as kin-openapi's loader and
// Paths.Validate would in the whole document, and drops it.
func (b *pathBatches) flush() error {
	if b.batch.Len() == 0 || b.stopped {
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
			if !ok { // a path item reference of an item added, or with members beside it
				r, isString := rawjson.String(append(append([]byte{'"'}, ref...), '"'))
				t, ok = b.targets[r]
				ok = ok && isString
			}
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
	switch err := b.resolve(&d, set); {
	case err != nil && (len(b.targets) > 0 || len(b.into) > 0 || b.ix.deep):
		// whether the loader finds a target's part may depend on what it
		// resolved before (componentIndex.deep)
		return errUnsupported
	case err != nil:
		if err := b.pathResolveProblem(d, err); err != nil {
			return err
		}
	case b.resolveProblem != nil:
		// only a lesser path's problem in resolving matters now
	default:
		if b.refs {
			standIn(b.ctx, &d)
		}
		err := b.batch.Validate(b.opt)
		switch {
		case err != nil:
			// a target's problem is found under each path of the batch that
			// references it, as under each in the whole document: the least
			// path's is the whole check's
			b.validationProblem(&openapi3.SectionValidationError{Section: "paths", Cause: err})
		default:
			b.walk(c)
		}
	}
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
