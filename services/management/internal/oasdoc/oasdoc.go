// Package oasdoc handles Tyk OAS API documents as bytes: intake (JSON or
// YAML), validation (Check: the project's one rule set for Tyk OAS API
// definitions, the OpenAPI 3.0 rules with kin-openapi and the
// x-tyk-api-gateway schema's constraints restated in extrules.go), the edits
// the service makes (info.id, info.dbId) and export (indented JSON or YAML,
// whole or public).
package oasdoc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
	"github.com/gatehouse/gatehouse/services/management/internal/kvref"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// Extension is the root key of Tyk's gateway extension.
const Extension = "x-tyk-api-gateway"

// ErrNoExtension means the document has no x-tyk-api-gateway object.
var ErrNoExtension = errors.New("oasdoc: no x-tyk-api-gateway object")

// Invalid is a document problem; its text names the field and the reason.
type Invalid struct{ Msg string }

func (e *Invalid) Error() string { return e.Msg }

func invalid(format string, args ...any) error { return &Invalid{Msg: fmt.Sprintf(format, args...)} }

// Parse reads a request body as a JSON document: YAML is converted when
// yamlInput is set. The result is always a JSON object, of at most MaxPaths
// paths and MaxOperations operations, whose references expand it within
// the bound of checkExpansion.
func Parse(body []byte, yamlInput bool) ([]byte, error) {
	doc := body
	if yamlInput {
		var err error
		if doc, err = YAMLToJSON(body); err != nil {
			return nil, &Invalid{Msg: err.Error()}
		}
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, invalid("the request body is empty; want a Tyk OAS document")
	}
	if !json.Valid(doc) {
		var v any
		err := json.Unmarshal(doc, &v)
		return nil, invalid("the request body is not valid JSON: %s", strings.TrimPrefix(fmt.Sprint(err), "json: "))
	}
	if err := checkCounts(doc); err != nil {
		return nil, err
	}
	if err := checkExpansion(doc); err != nil {
		return nil, err
	}
	// Stored verbatim, so it must be unambiguous: valid UTF-8, no key twice.
	if p := jsonstrict.First(jsonstrict.Check(doc, nil)); p != nil {
		return nil, invalid("%s", p)
	}
	if _, err := rawjson.Members(doc); err != nil {
		return nil, invalid("the document must be a JSON object")
	}
	return bytes.TrimSpace(doc), nil
}

// ID returns x-tyk-api-gateway.info.id ("" when absent or empty).
func ID(doc []byte) (id string, present bool, err error) {
	raw, ok, err := rawjson.Lookup(doc, Extension, "info", "id")
	if err != nil || !ok {
		return "", false, err
	}
	s, isString := rawjson.String(raw)
	if !isString {
		return "", true, invalid("%s.info.id must be a string", Extension)
	}
	return s, true, nil
}

// DBID returns x-tyk-api-gateway.info.dbId ("" when absent, null or empty).
func DBID(doc []byte) (string, error) {
	raw, ok, err := rawjson.Lookup(doc, Extension, "info", "dbId")
	if err != nil || !ok || string(raw) == "null" {
		return "", err
	}
	s, isString := rawjson.String(raw)
	if !isString {
		return "", invalid("%s.info.dbId must be a string", Extension)
	}
	return s, nil
}

// Name returns x-tyk-api-gateway.info.name.
func Name(doc []byte) string {
	raw, _, _ := rawjson.Lookup(doc, Extension, "info", "name")
	s, _ := rawjson.String(raw)
	return s
}

// SetID writes x-tyk-api-gateway.info.id.
func SetID(doc []byte, id string) ([]byte, error) {
	return rawjson.Set(doc, rawjson.Quote(id), Extension, "info", "id")
}

// Stamp writes the API's db id into its document as
// x-tyk-api-gateway.info.dbId, as Tyk does: what every OAS document the
// store keeps holds (store.Tx.PutAPI trusts it to).
func Stamp(doc []byte, dbID string) ([]byte, error) {
	return rawjson.Set(doc, rawjson.Quote(dbID), Extension, "info", "dbId")
}

// Validate is the intake check of a document (POST and PUT of a Tyk OAS
// API): the rules of Check but the restated schema constraints, which are
// stricter than Tyk's own schema where it admits several shapes (security
// schemes, event handlers) and so would refuse documents Tyk accepts. It
// returns the first problem: *Invalid (or ErrNoExtension), nil when there is
// none; or ctx's error when ctx ended while a large document waited for its
// whole check (wholeChecks).
func Validate(ctx context.Context, doc []byte) error {
	if errs := check(ctx, doc, false); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// Check checks a JSON document against the project's one rule set for Tyk
// OAS API definitions, in this order: the x-tyk-api-gateway extension and
// its required parts, the OpenAPI version, the OpenAPI 3.0 rules
// (kin-openapi, which stops at its first problem), then the
// x-tyk-api-gateway schema's constraints (extrules.go). It returns every
// problem found, each naming the field; none when the document is valid.
// Every document the service produces (the converter's) meets it.
func Check(ctx context.Context, doc []byte) []string {
	var out []string
	for _, err := range check(ctx, doc, true) {
		out = append(out, err.Error())
	}
	return out
}

// check runs the rules in order. Without all it stops at the first problem
// and leaves out the restated schema constraints (Validate). A document
// without its extension or required parts stops there.
func check(ctx context.Context, doc []byte, all bool) []error {
	// The root's members are found once: the document is large, its
	// x-tyk-api-gateway too.
	root, err := rawjson.Members(doc)
	if err != nil {
		return []error{invalid("the document is not a JSON object")}
	}
	if err := checkTyk(doc, root); err != nil {
		return []error{err}
	}
	var errs []error
	// valid, found holding a batch at a time (batches.go); or refused, for
	// a large document, with the problem a batch found, so that it is not
	// modelled whole; otherwise checked whole, for kin-openapi's first
	// problem
	switch valid, problem := validInBatches(ctx, doc, root); {
	case valid:
	case problem != nil && len(doc) > wholeCheckAlone:
		errs = append(errs, invalid("invalid OpenAPI document: %s", problem))
	default:
		if err := checkWhole(ctx, doc, root); err != nil {
			errs = append(errs, err)
		}
	}
	if !all {
		return errs
	}
	m, _ := lastMember(root, Extension)
	var x any
	if err := json.Unmarshal(doc[m.ValueStart:m.ValueEnd], &x); err != nil {
		return append(errs, invalid("%s: %v", Extension, err))
	}
	for _, p := range checkExtensionRules(x) {
		errs = append(errs, &Invalid{Msg: p})
	}
	return errs
}

// wholeChecks admits one check of a whole large document at a time: its
// model costs tens of times its text (a 7.9 MB document of 300,000 small
// component schemas held 290 MB). A large document takes that way only when
// the batches can neither find it valid nor name a problem in it (a
// path item reference of a form they do not follow), so concurrent ones
// would multiply it. Documents found valid in batches never wait here. A
// large YAML document converted whole (its pieces could not be cut: see
// yamlchunks.go) waits here too: its YAML tree costs about 30 times it.
var wholeChecks = make(chan struct{}, 1)

// wholeCheckAlone is the size from which a whole check waits its turn.
const wholeCheckAlone = 1 << 20

// checkWhole checks the OpenAPI rules on the whole document, as kin-openapi
// decodes it, waiting its turn when it is large (or ctx's end: its error is
// then the answer).
func checkWhole(ctx context.Context, doc []byte, root []rawjson.Member) error {
	if len(doc) > wholeCheckAlone {
		select {
		case wholeChecks <- struct{}{}:
			defer func() { <-wholeChecks }()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	d, err := decodeOpenAPI(doc, root)
	if err != nil {
		return invalid("invalid OpenAPI document: %s", err)
	}
	return checkOpenAPI(ctx, d, func() (*openapi3.T, error) { return decodeOpenAPI(doc, root) }, referencesIn(doc))
}

// checkTyk checks the x-tyk-api-gateway extension and the OpenAPI version.
func checkTyk(doc []byte, root []rawjson.Member) error {
	m, ok := lastMember(root, Extension)
	if !ok {
		return ErrNoExtension
	}
	ext := doc[m.ValueStart:m.ValueEnd]
	parts, err := rawjson.Members(ext)
	if err != nil {
		return ErrNoExtension
	}
	if err := checkVersion(doc, root); err != nil {
		return err
	}
	return checkExtension(ext, parts)
}

// lastMember returns the last member named key (the one a JSON decoder
// would keep).
func lastMember(members []rawjson.Member, key string) (rawjson.Member, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		if members[i].Key == key {
			return members[i], true
		}
	}
	return rawjson.Member{}, false
}

// decodeOpenAPI decodes doc as kin-openapi's own T.UnmarshalJSON does,
// less the root x-tyk-api-gateway (opaque to OpenAPI, checked apart). The
// document is JSON already: it is decoded directly rather than through
// kin-openapi's LoadFromData, which converts it to YAML and back first. The
// fast decoder gives up on a document kin-openapi refuses, and on a few it
// does not mirror: kin-openapi then decodes it, and its verdict and message
// are the answer.
func decodeOpenAPI(doc []byte, root []rawjson.Member) (*openapi3.T, error) {
	if d, err := decodeFast(doc, root); err == nil {
		return d, nil
	}
	d := &openapi3.T{}
	if err := d.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	delete(d.Extensions, Extension)
	if len(d.Extensions) == 0 {
		d.Extensions = nil
	}
	return d, nil
}

func checkVersion(doc []byte, root []rawjson.Member) error {
	m, ok := lastMember(root, "openapi")
	raw := doc[m.ValueStart:m.ValueEnd]
	v, isString := rawjson.String(raw)
	switch {
	case !ok:
		return invalid("openapi: required; want a 3.0.x version")
	case !isString || !strings.HasPrefix(v, "3.0."):
		return invalid("openapi: %s is not supported; want a 3.0.x version", raw)
	}
	return nil
}

// field is one required part of the extension.
type field struct {
	path []string
	kind string // "object", "string" (non-empty), "bool", "path" (non-empty, starting with /)
	// emptyIf, for a string, admits "" when it reports true: the upstream URL
	// of an API whose targets come from load balancing or service discovery
	// (the gateway proxies to those; the converter writes "" there).
	emptyIf func(lookup func(path ...string) ([]byte, bool, error)) bool
}

// targetsElsewhere reports whether load balancing or service discovery is
// enabled in the upstream.
func targetsElsewhere(lookup func(path ...string) ([]byte, bool, error)) bool {
	for _, part := range []string{"loadBalancing", "serviceDiscovery"} {
		if raw, ok, _ := lookup("upstream", part, "enabled"); ok && string(raw) == "true" {
			return true
		}
	}
	return false
}

var requiredParts = []field{
	{[]string{"info"}, "object", nil},
	{[]string{"info", "name"}, "string", nil},
	{[]string{"info", "state"}, "object", nil},
	{[]string{"info", "state", "active"}, "bool", nil},
	{[]string{"upstream"}, "object", nil},
	{[]string{"upstream", "url"}, "string", targetsElsewhere},
	{[]string{"server"}, "object", nil},
	{[]string{"server", "listenPath"}, "object", nil},
	{[]string{"server", "listenPath", "value"}, "path", nil},
}

// check checks the value raw of the part, named name in messages.
func (f field) check(name string, raw []byte, lookup func(path ...string) ([]byte, bool, error)) error {
	s, isString := rawjson.String(raw)
	switch f.kind {
	case "object":
		if raw[0] != '{' {
			return invalid("%s: must be an object", name)
		}
	case "bool":
		if t := string(raw); t != "true" && t != "false" {
			return invalid("%s: must be a boolean", name)
		}
	case "string":
		if !isString {
			return invalid("%s: must be a string", name)
		}
		if strings.TrimSpace(s) == "" && !(f.emptyIf != nil && f.emptyIf(lookup)) {
			return invalid("%s: must not be empty", name)
		}
	case "path":
		if !isString {
			return invalid("%s: must be a string", name)
		}
		if s == "" {
			return invalid("%s: must not be empty", name)
		}
		if !strings.HasPrefix(s, "/") && !kvref.Is(s) { // the gateway resolves a reference before it reads the path
			return invalid("%s: must start with / (or be a KV reference: env://, secrets://, consul://, vault://)", name)
		}
	}
	return nil
}

// checkExtension checks the extension ext, whose members are parts.
func checkExtension(ext []byte, parts []rawjson.Member) error {
	// Each path is looked up from the part it starts with: the
	// extension's own members are found once.
	lookup := func(path ...string) ([]byte, bool, error) {
		m, ok := lastMember(parts, path[0])
		if !ok {
			return nil, false, nil
		}
		return rawjson.Lookup(ext[m.ValueStart:m.ValueEnd], path[1:]...)
	}
	for _, f := range requiredParts {
		name := Extension + "." + strings.Join(f.path, ".")
		raw, ok, err := lookup(f.path...)
		if err != nil {
			return invalid("%s: must be an object", Extension+"."+strings.Join(f.path[:len(f.path)-1], "."))
		}
		if !ok {
			return invalid("%s: required", name)
		}
		if err := f.check(name, raw, lookup); err != nil {
			return err
		}
	}
	if raw, ok, _ := lookup("info", "id"); ok {
		if _, isString := rawjson.String(raw); !isString {
			return invalid("%s.info.id: must be a string", Extension)
		}
	}
	return nil
}

// Format is an export's file format.
type Format int

const (
	JSON Format = iota
	YAML
)

// Export renders a stored document as a file: two-space indented JSON in
// stored key order, or YAML; public leaves out exactly the root
// x-tyk-api-gateway.
func Export(doc []byte, f Format, public bool) ([]byte, error) {
	if !json.Valid(doc) {
		return nil, errors.New("oasdoc: the document is not valid JSON")
	}
	if f == YAML {
		leaveOut := ""
		if public {
			leaveOut = Extension
		}
		return toYAML(doc, leaveOut)
	}
	parts := [][]byte{doc}
	if public {
		var err error
		if parts, err = publicParts(doc); err != nil {
			return nil, err
		}
	}
	return indentJSON(parts), nil
}
