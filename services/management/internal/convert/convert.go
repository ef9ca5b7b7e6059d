// Package convert converts Tyk classic API definitions into Tyk OAS API definitions (Convert, for the
// migration) and back (ToClassic: the classic definition a Tyk gateway loads for a Tyk OAS API, with is_oas
// true, as Tyk's OAS.ExtractTo yields it). Both directions read one table of per-endpoint middleware kinds
// (kinds.go); every other part of the document has one function per direction (upstream and
// upstreamToClassic, ...). For every document Convert makes, ToClassic keeps every field a gateway acts on,
// and converting that again gives the same x-tyk-api-gateway (roundtrip_test.go).
//
// The conversion follows the Tyk gateway's own classic → OAS migration (apidef.Migrate followed by
// oas.Fill, see ../../../../../shared/reference/tyk-classic-to-oas.md) with four deliberate differences:
//
//   - It is deterministic: child version IDs are derived from the base API ID and the version name
//     (ChildID), and every document is serialised from ordered structs, so the same input always gives
//     byte-identical output.
//   - It never loses configuration silently. A classic setting that has no Tyk OAS equivalent (transform_jq,
//     response_processors, persist_graphql, legacy version paths, ...) makes the conversion fail with one
//     message per problem, naming the classic field and, for endpoint settings, the method and path.
//     Settings that Tyk drops but that can be expressed (allow, block and ignore entries that use "method"
//     without "method_actions", the deprecated "auth" block) are converted.
//   - It never opens an API: an allow list never vanishes, an API that requires authentication keeps a
//     security scheme, and a mock response that is disabled does not switch authentication off.
//   - It announces what it cannot keep. Where a migrated API behaves differently in a Tyk Gateway and the OAS
//     form has no setting that keeps the classic answer (the expired-version message, the status for an
//     unknown version, validate_json's messages, ...), the API converts and Result.Warnings names each change
//     (warnings.go).
//
// The pipeline reads top-down, one file per step and per part of the OAS document:
// classic.go (input types), normalise.go (pre-normalisation), versioning.go (the split into a base and child
// versions), root.go (document skeleton), info.go, upstream.go, server.go, security.go (authentication),
// middleware.go (global middleware), kinds.go (the table of per-endpoint middleware kinds, one function per
// classic list), operation.go (the operations those land on, and their merging), paths.go (path templates and
// operationIds), xoperation.go (the per-operation settings), erroroverrides.go, warnings.go (behaviour changes
// the migrated API cannot avoid) and validate.go (checks of every produced document). The other
// direction is toclassic.go, toclassic_auth.go and kinds_classic.go.
//
// Usage, as the migrate endpoint calls it:
//
//	if key, err := convert.Classify(raw); err == nil && key != "" {
//		// report the API as skipped with this key
//	}
//	res, err := convert.Convert(raw, convert.Options{DBID: dbID})
//	var f *convert.Failure
//	if errors.As(err, &f) {
//		// report the API as failed with f.Messages
//	}
//
// and, for a gateway, the classic definition of a stored Tyk OAS document (its error reports bytes that are
// not a Tyk OAS document):
//
//	classic, err := convert.ToClassic(doc) // is_oas: true
//
// Convert returns only *Failure errors. Its documents are compact JSON and always valid: OpenAPI 3.0 with an
// x-tyk-api-gateway extension that satisfies the extension's JSON schema.
package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/gatehouse/gatehouse/services/management/internal/category"
)

// Options tunes one conversion.
type Options struct {
	// DBID is written to x-tyk-api-gateway.info.dbId of the base document; when empty the classic "id"
	// field is used. Child versions never carry a db id.
	DBID string
	// Staging produces the staged copy of the API: every document's ID gets the prefix "staging-", its name
	// the prefix "[staged] " and its listen path the prefix "/tyk-staging" ("/orders/" becomes
	// "/tyk-staging/orders/"). Child IDs become "staging-" + ChildID(classic api_id, version), so removing the
	// prefixes again gives exactly the documents of a direct conversion.
	Staging bool
	// VersionDBID, when set, gives each child version document its x-tyk-api-gateway.info.dbId (it is called
	// once per child, with the child's API ID before any staging prefix), so that a store can keep the
	// documents exactly as returned. When nil, child versions carry no db id.
	VersionDBID func(childAPIID string) string
}

// Result is a converted API: a base document plus one child document per non-default version.
type Result struct {
	// APIID is the base API ID (with the "staging-" prefix in staging mode).
	APIID string
	// Name is the base API name (with the "[staged] " prefix in staging mode).
	Name string
	// Categories are the classic name's #word tokens without the '#', in name order.
	Categories []string
	// Base is the base API document.
	Base Document
	// Versions are the child version documents, sorted by version name.
	Versions []Document
	// Warnings has one message per way the migrated API behaves differently in a Tyk Gateway from its classic
	// definition (a header no longer sent, a status or message that changes), each naming the classic field;
	// empty when it behaves the same.
	Warnings []string
}

// Document is one Tyk OAS API definition.
type Document struct {
	// APIID is x-tyk-api-gateway.info.id.
	APIID string
	// Name is x-tyk-api-gateway.info.name.
	Name string
	// ListenPath is x-tyk-api-gateway.server.listenPath.value.
	ListenPath string
	// DBID is x-tyk-api-gateway.info.dbId: Options.DBID for the base, Options.VersionDBID's for a child.
	DBID string
	// JSON is the complete OAS document: compact, with a fixed key order.
	JSON []byte
}

// Failure is returned when the API cannot be converted without loss. Messages has one message per problem,
// each naming the classic field and, for endpoint settings, the method and path.
type Failure struct {
	Messages []string
}

// Error joins the messages with "; ".
func (f *Failure) Error() string {
	return "classic API cannot be migrated: " + strings.Join(f.Messages, "; ")
}

// Skip keys returned by Classify, as the migration report spells them.
const (
	SkipAlreadyMigrated = "already_migrated" // the record already is a Tyk OAS API (is_oas)
	SkipGraphQL         = "is_graphql"       // a GraphQL API (graphql.enabled)
	SkipTCP             = "is_tcp"           // a TCP or TLS API (protocol tcp or tls)
)

// Classify tells whether a stored classic API definition is one the migration skips rather than converts.
// It returns one of the Skip* keys, or "" when the API is a classic REST API that Convert handles.
// The error reports input that is not a JSON object.
func Classify(classic []byte) (skipKey string, err error) {
	var head struct {
		IsOAS    bool   `json:"is_oas"`
		Protocol string `json:"protocol"`
		GraphQL  *struct {
			Enabled bool `json:"enabled"`
		} `json:"graphql"`
	}
	if err := json.Unmarshal(classic, &head); err != nil {
		return "", fmt.Errorf("api_definition is not a classic API definition: %w", err)
	}
	return skipKey2(head.IsOAS, head.GraphQL != nil && head.GraphQL.Enabled, head.Protocol), nil
}

func skipKey2(isOAS, graphQL bool, protocol string) string {
	switch {
	case isOAS:
		return SkipAlreadyMigrated
	case graphQL:
		return SkipGraphQL
	case protocol == "tcp" || protocol == "tls":
		return SkipTCP
	}
	return ""
}

// ChildID is the API ID of the child document made for version of the API baseID: the first 32 hex digits
// of sha256(baseID + "/" + version).
func ChildID(baseID, version string) string {
	sum := sha256.Sum256([]byte(baseID + "/" + version))
	return hex.EncodeToString(sum[:16])
}

// Convert converts one stored classic API definition (the raw JSON of its api_definition, as stored verbatim)
// into a Tyk OAS base document plus one child document per non-default version. Every error is a *Failure.
func Convert(classic []byte, opts Options) (*Result, error) {
	return Parse(classic).Convert(opts)
}

// Classic is one classic API definition decoded once, for the migration path: Parse decodes it, SkipKey
// classifies it and Convert converts it, without decoding the bytes again.
type Classic struct {
	api  classicAPI
	skip string // as Classify would answer
	err  error  // the definition could not be decoded (a *Failure) and is not skipped
	used bool
}

// Parse decodes a stored classic API definition (the raw JSON of its api_definition). A definition the full
// decoding refuses is still classified from the fields Classify reads, so SkipKey answers as Classify does.
func Parse(classic []byte) *Classic {
	c := &Classic{}
	if err := json.Unmarshal(classic, &c.api); err != nil {
		c.err = &Failure{Messages: []string{"api_definition is not a valid classic API definition: " + err.Error()}}
		if key, herr := Classify(classic); herr == nil && key != "" {
			c.skip, c.err = key, nil
		}
		return c
	}
	c.skip = skipKey2(c.api.IsOAS, c.api.GraphQL.Enabled, c.api.Protocol)
	return c
}

// SkipKey returns one of the Skip* keys, or "" when Convert handles the API; the error (a *Failure) reports a
// definition that cannot be decoded.
func (p *Classic) SkipKey() (string, error) { return p.skip, p.err }

// Convert converts the definition as the package-level Convert does. It may be called once: the conversion
// works on the decoded definition in place.
func (p *Classic) Convert(opts Options) (*Result, error) {
	if p.err != nil {
		return nil, p.err
	}
	if p.used {
		panic("convert: Classic.Convert called twice")
	}
	p.used = true
	api := &p.api
	c := &converter{api: api}
	switch p.skip {
	case SkipAlreadyMigrated:
		return nil, &Failure{Messages: []string{"is_oas: the API already is a Tyk OAS API"}}
	case SkipGraphQL:
		return nil, &Failure{Messages: []string{"graphql.enabled: GraphQL APIs have no Tyk OAS REST equivalent"}}
	case SkipTCP:
		return nil, &Failure{Messages: []string{fmt.Sprintf("protocol: %q APIs have no Tyk OAS equivalent", api.Protocol)}}
	}

	// Every step runs even after a problem, so that one conversion reports all of them.
	c.normalise()
	targets := c.splitVersions(opts)
	c.behaviourWarnings(targets)

	docs := make([]*oasDocument, len(targets))
	for i, t := range targets {
		docs[i] = c.buildDocument(t)
	}
	// Validation is the safety net behind the conversion's own checks; when those already failed, its
	// messages would only repeat them in document terms.
	for i, d := range docs {
		if len(c.problems) > 0 {
			break
		}
		for _, p := range validateDocument(d) {
			c.fail("%s: %s", targets[i].describe(), p)
		}
	}
	if len(c.problems) > 0 {
		return nil, c.failure()
	}

	res := &Result{APIID: targets[0].apiID, Name: targets[0].name, Categories: category.FromName(api.Name),
		Warnings: c.warnings}
	for i, d := range docs {
		doc := Document{APIID: targets[i].apiID, Name: targets[i].name, ListenPath: targets[i].listenPath,
			DBID: targets[i].dbID, JSON: encode(d)}
		if i == 0 {
			res.Base = doc
		} else {
			res.Versions = append(res.Versions, doc)
		}
	}
	return res, nil
}

// encodeOptions write a document compactly without HTML escaping.
var encodeOptions = []json.EncodeOptionFunc{json.DisableHTMLEscape()}

// encode serialises d compactly without HTML escaping. The encoder writes into its own pooled buffer and
// returns one copy of exactly the document's size.
func encode(d *oasDocument) []byte {
	out, err := json.MarshalWithOption(d, encodeOptions...)
	if err != nil {
		// Every value in the document is a string, a bool, an integer, a finite float or a decoded JSON
		// value, so encoding cannot fail.
		panic("convert: encoding a document: " + err.Error())
	}
	return out
}

// converter carries one conversion: the classic input and the problems found so far.
type converter struct {
	api      *classicAPI
	problems []string
	warnings []string
	shared   sharedParts
}

// sharedParts are the parts of the document that depend on the API alone, built for the first document and
// shared by the others (a child version differs from the base only in its target's fields). Building them
// again would only repeat the same problems, which fail records once anyway.
type sharedParts struct {
	upstream *xUpstream
	server   *xServer
	global   *xGlobal
	security *oasDocument // components and security

	errorOverrides     *xErrorOverrides
	errorOverridesDone bool
}

// fail records one problem.
func (c *converter) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, p := range c.problems {
		if p == msg {
			return
		}
	}
	c.problems = append(c.problems, msg)
}

// warn records one behaviour change of the migrated API (see Result.Warnings).
func (c *converter) warn(format string, args ...any) {
	c.note(fmt.Sprintf(format, args...))
}

// note records one behaviour change, written out.
func (c *converter) note(msg string) {
	if !slices.Contains(c.warnings, msg) {
		c.warnings = append(c.warnings, msg)
	}
}

func (c *converter) failure() *Failure {
	return &Failure{Messages: c.problems}
}
