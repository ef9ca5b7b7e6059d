package convert

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The classic → OAS direction of the operations: the kinds table (kinds.go) converts each classic endpoint
// list; the opBuilder here creates the path items and operations they land on and merges their settings.

// entries counts the endpoint entries of a version, an upper bound of its operations.
func (ep *extendedPaths) entries() int {
	return len(ep.Ignored) + len(ep.WhiteList) + len(ep.BlackList) + len(ep.MockResponse) + len(ep.Cached) +
		len(ep.AdvanceCacheConfig) + len(ep.Transform) + len(ep.TransformResponse) + len(ep.TransformHeader) +
		len(ep.TransformResponseHeader) + len(ep.HardTimeouts) + len(ep.CircuitBreaker) + len(ep.URLRewrite) +
		len(ep.Virtual) + len(ep.SizeLimit) + len(ep.MethodTransforms) + len(ep.TrackEndpoints) +
		len(ep.DoNotTrackEndpoints) + len(ep.ValidateJSON) + len(ep.Internal) + len(ep.GoPlugin) + len(ep.RateLimit)
}

// opBuilder collects the operations of one document.
type opBuilder struct {
	c       *converter
	doc     *oasDocument
	ops     map[string]*xOperation
	keyless bool
	paths   map[string]*templated // raw classic path → its OpenAPI form; nil when it cannot be templated
	pending []contribution        // settings from classic entries, not yet merged into ops
	scratch xOperation            // the settings of the entry get returned last, until record moves them
	entry   contribution          // that entry (its operation and source), while open
	open    bool                  // scratch holds the settings of entry
	// The path items, operations and middleware of the document come from these, a few allocations for
	// all of them instead of one each.
	items   slab[pathItem]
	opers   slab[operation]
	state   slab[opState]
	sources slab[source]
}

// opState is the middleware of one operation while it is built.
type opState struct {
	xOperation
	setBy []setBy // the classic entry that set each setting set so far
	first [2]setBy
}

// setBy is the classic entry that set a setting (an xOperation field).
type setBy struct {
	index int
	*source
}

// setter returns the entry that set the setting index, or nil.
func (x *opState) setter(index int) *source {
	for _, s := range x.setBy {
		if s.index == index {
			return s.source
		}
	}
	return nil
}

// set records the entry that set the setting index.
func (x *opState) set(index int, by *source) {
	for i := range x.setBy {
		if x.setBy[i].index == index {
			x.setBy[i].source = by
			return
		}
	}
	x.setBy = append(x.setBy, setBy{index, by})
}

// slab hands out zeroed values allocated a chunk at a time.
type slab[T any] struct {
	free []T
	size int // the chunk size
}

func (s *slab[T]) new() *T {
	if len(s.free) == 0 {
		s.free = make([]T, max(s.size, 1))
	}
	v := &s.free[0]
	s.free = s.free[1:]
	return v
}

// contribution is one setting that one classic endpoint entry puts on its operation.
type contribution struct {
	*source
	op    *operation
	index int           // the xOperation field
	value reflect.Value // its value
}

// source is a classic endpoint entry: list field, path and method.
type source struct {
	field           listField
	rawPath, method string
}

func (s source) String() string { return s.field.String() + ": " + s.method + " " + s.rawPath }

// operations fills doc.Paths and returns the operations' middleware: each kind of kinds converts its classic
// list, in Tyk's filler order.
func (c *converter) operations(t *target, doc *oasDocument) map[string]*xOperation {
	ep := &t.version.ExtendedPaths
	n := ep.entries() // sizes the maps once instead of growing them entry by entry
	if len(doc.Paths) == 0 {
		doc.Paths = make(map[string]*pathItem, n)
	}
	// Every entry makes at most one path item, operation and source: a version with few entries gets chunks
	// of that size (a child version often has two or three), others chunks of eight.
	chunk := min(max(n, 1), 8)
	b := &opBuilder{c: c, doc: doc, ops: make(map[string]*xOperation, n), keyless: c.api.UseKeyless, paths: map[string]*templated{},
		pending: make([]contribution, 0, n), items: slab[pathItem]{size: chunk}, opers: slab[operation]{size: chunk},
		state: slab[opState]{size: chunk}, sources: slab[source]{size: chunk}}
	at := "version_data.versions[" + strconv.Quote(t.versionName) + "]"
	for i := range kinds {
		kinds[i].toOAS(b, ep, listField{at, kinds[i].list})
	}
	b.keepRegexPathsClosed(ep.WhiteList, listField{at, "white_list"}, true)
	b.keepRegexPathsClosed(ep.Ignored, listField{at, "ignored"}, false)
	b.merge()
	return b.ops
}

// mockHeaders are a mock's headers with canonical names (http.CanonicalHeaderKey: "mock" becomes "Mock"), as
// Tyk writes them and as the gateway sends them, sorted by name. Two classic names for one header with
// different values fail the API: the gateway sends one of them, chosen by map order.
func (c *converter) mockHeaders(f listField, method, path string, in map[string]string) []xHeader {
	if len(in) == 0 {
		return nil
	}
	canon := make(map[string]string, len(in))
	for _, k := range sortedKeys(in) {
		name := http.CanonicalHeaderKey(k)
		if v, dup := canon[name]; dup && v != in[k] {
			c.fail("%s: %s %s: mock response headers name %s twice with different values", f, method, path, name)
		}
		canon[name] = in[k]
	}
	return headersOf(canon)
}

// keepRegexPathsClosed keeps an allow or ignore-authentication list as narrow as the classic one. Classic
// matches an entry's path as a regular expression; Tyk OAS matches the path template by structure, so
// /users/{customRegex1} admits /users/abc although the classic entry /users/[0-9]+ did not. A forwarded
// allow entry (narrow) therefore gets its segments' expressions as anchored parameter patterns, enforced by
// validateRequest with 403, the answer classic gives outside its allow list. An ignore-authentication entry
// cannot be narrowed that way without refusing requests classic authenticates, so it fails the API. Mock
// responses never reach the upstream and stay as Tyk converts them.
func (b *opBuilder) keepRegexPathsClosed(entries []endpointMeta, f listField, narrow bool) {
	for _, e := range entries {
		t := b.paths[e.Path]
		if e.Disabled || t == nil || !slices.ContainsFunc(t.params, func(p parameter) bool { return p.regex != "" }) {
			continue
		}
		op := b.op(f, e.Path, e.Method)
		if op == nil || (op.MockResponse != nil && op.MockResponse.Enabled) {
			continue
		}
		if !narrow {
			b.c.fail("%s: %s %s: Tyk OAS matches path parameters by structure, not by regular expression, so skipping "+
				"authentication here would skip it for paths the classic API authenticates; list the paths literally", f, e.Method, e.Path)
			continue
		}
		switch {
		case op.ValidateRequest == nil:
			op.ValidateRequest = &xValidateRequest{Enabled: true, ErrorResponseCode: http.StatusForbidden}
		case !op.ValidateRequest.Enabled:
			b.c.fail("%s: %s %s: the path's regular expression can only be kept by validateRequest, which a disabled "+
				"validate_json entry switches off here", f, e.Method, e.Path)
			continue
		}
		item := b.doc.Paths[t.path]
		for _, p := range t.params {
			if p.regex == "" {
				continue
			}
			for i := range item.Parameters {
				if item.Parameters[i].Name == p.Name {
					item.Parameters[i].Schema.Pattern = "^(?:" + p.regex + ")$"
				}
			}
		}
	}
}

// get returns a fresh record for the settings that one classic entry (list field, path, method) puts on
// its operation, creating the OpenAPI path item and operation on first use; the settings are merged into
// the operation later (merge). It returns nil when the path cannot be expressed in OpenAPI (the problem is
// recorded once per path). The record is a scratch one: fill it before the next call of get, op or merge,
// which records the settings set in it (record).
func (b *opBuilder) get(field listField, rawPath, method string) *xOperation {
	b.record()
	op := b.slot(field, rawPath, method)
	if op == nil {
		return nil
	}
	src := b.sources.new()
	*src = source{field, rawPath, method}
	b.entry, b.open = contribution{source: src, op: op}, true
	return &b.scratch
}

// record moves the settings filled into the scratch record into pending contributions, one per setting.
func (b *opBuilder) record() {
	if !b.open {
		return
	}
	v := reflect.ValueOf(&b.scratch).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsNil() {
			c := b.entry
			c.index, c.value = i, reflect.ValueOf(f.Interface())
			b.pending = append(b.pending, c)
		}
	}
	b.scratch, b.open = xOperation{}, false
}

// op returns the operation for a classic path and method with every setting so far merged into it, for
// the steps that depend on what other entries set.
func (b *opBuilder) op(field listField, rawPath, method string) *xOperation {
	op := b.slot(field, rawPath, method)
	if op == nil {
		return nil
	}
	b.merge()
	return &b.middleware(op).xOperation
}

// middleware returns the middleware of an operation, creating it on first use.
func (b *opBuilder) middleware(op *operation) *opState {
	if op.x == nil {
		op.x = b.state.new()
		op.x.setBy = op.x.first[:0]
		b.ops[op.OperationID] = &op.x.xOperation
	}
	return op.x
}

// merge moves the pending settings into their operations. Several classic entries can land on one Tyk OAS
// operation, which keeps one value per setting. An entry repeated for the same classic path and method
// replaces the earlier one, as Tyk's conversion does (its fixture cache/1 expects it). Different classic
// paths that template alike (/a/[0-9]+ and /a/[a-z]+ both become /a/{customRegex1}) and set a setting
// differently fail the API, instead of one silently replacing the other; equal settings merge.
func (b *opBuilder) merge() {
	b.record()
	for _, p := range b.pending {
		x := b.middleware(p.op)
		dst := reflect.ValueOf(&x.xOperation).Elem().Field(p.index)
		if prev := x.setter(p.index); prev != nil && prev.rawPath != p.rawPath {
			if !reflect.DeepEqual(dst.Interface(), p.value.Interface()) {
				name, _, _ := strings.Cut(reflect.TypeFor[xOperation]().Field(p.index).Tag.Get("json"), ",")
				b.c.fail("%s: its %s differs from the one %s sets, and both become the Tyk OAS operation %s", p.source, name, prev, p.op.OperationID)
			}
			continue
		}
		dst.Set(p.value)
		x.set(p.index, p.source)
	}
	b.pending = b.pending[:0]
}

// slot creates, on first use, the OpenAPI path item and operation of a classic path and method, and returns
// the operation; nil when the path cannot be expressed. An operation that already exists keeps its
// operationId.
func (b *opBuilder) slot(field listField, rawPath, method string) *operation {
	if !strings.HasPrefix(rawPath, "/") || !validMethod(method) {
		return nil // refused by normalisation, which has reported it
	}
	t, seen := b.paths[rawPath]
	if !seen {
		var err error
		t, err = templatePath(rawPath)
		if err != nil {
			b.c.fail("%s: %s: %v", field, rawPath, err)
			t = nil
		}
		b.paths[rawPath] = t
	}
	if t == nil {
		return nil
	}
	item := b.doc.Paths[t.path]
	if item == nil {
		item = b.items.new()
		item.Parameters = t.params
		b.doc.Paths[t.path] = item
	}
	slot := item.operation(method)
	if *slot == nil {
		op := b.opers.new()
		op.OperationID = strings.TrimPrefix(rawPath, "/") + method
		op.keys[0] = "default"
		op.Responses = op.keys[:]
		*slot = op
	}
	return *slot
}

// setRequestBody sets the request body of an operation get has created. Classic paths that become one
// Tyk OAS operation with different request schemas fail the API, as merge does for the middleware.
func (b *opBuilder) setRequestBody(field listField, rawPath, method string, body requestBody) {
	op := *b.doc.Paths[b.paths[rawPath].path].operation(method)
	if prev := op.bodySetBy; prev != "" && prev != rawPath && !reflect.DeepEqual(*op.RequestBody, body) {
		b.c.fail("%s: %s %s: its request schema differs from the one for %s %s, and both become the Tyk OAS operation %s",
			field, method, rawPath, method, prev, op.OperationID)
		return
	}
	op.bodySetBy = rawPath
	op.RequestBody = &body
}
