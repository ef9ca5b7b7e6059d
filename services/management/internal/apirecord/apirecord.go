// Package apirecord makes the API records the management store keeps: one
// maker per kind — a classic definition, a Tyk OAS document, a staged copy
// promoted — that stamps the IDs the service owns into the document, reads
// its name and categories and, for a Tyk OAS API when gateways are served,
// derives the classic definition gateways load and tags it with this build.
// The handlers, the migration's prepare step and the re-derivation pass
// (Rederive) all call it outside any store transaction; the store only
// checks a record's keys, compares its revision and puts it
// (store.Tx.PutAPI), so a write transaction never runs the converter.
package apirecord

import (
	"fmt"

	"github.com/gatehouse/gatehouse/services/management/internal/category"
	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// MaxDerived bounds the derived definition a record keeps: a larger one is
// not kept (its reader derives it), so that a record still fits where its
// document alone fits (etcd's request size) but for this much.
const MaxDerived = 256 << 10

// Derive turns a Tyk OAS document into the classic definition a gateway
// loads for it (what Tyk's OAS.ExtractTo yields): convert.ToClassicWithin.
// With limit >= 0 it may answer an error instead of a definition surely
// longer than limit bytes (a record does not keep one longer than
// MaxDerived).
type Derive func(oasDoc []byte, limit int) ([]byte, error)

// Maker makes API records. Its zero value keeps no derived definitions.
type Maker struct {
	orgID  string
	derive Derive // nil: OAS records keep no derived definition
	tag    string // names derive's build
}

// New returns the maker of a store's records: classic definitions get the
// installation's orgID when they have none; with derive (gateways are
// served), every OAS record keeps its derived classic definition, tagged
// with this build (the executable's hash; nothing is kept when it cannot be
// read).
func New(orgID string, derive Derive) *Maker {
	m := &Maker{orgID: orgID, derive: derive}
	if derive != nil {
		m.tag = buildTag()
	}
	return m
}

// WithTag returns a maker like m whose derivations carry tag, for tests
// that play another build.
func (m *Maker) WithTag(tag string) *Maker {
	c := *m
	c.tag = tag
	return &c
}

// Classic is a's record for the classic definition def: def with a's API ID
// as api_id, its db id as id and, when it has none (absent, null or ""), the
// installation's org_id; named after its name, categorised by the name's
// #word tokens (category.FromName).
func (m *Maker) Classic(a store.API, def []byte) (store.API, error) {
	doc, err := rawjson.Set(def, rawjson.Quote(a.ID), "api_id")
	if err == nil {
		doc, err = rawjson.Set(doc, rawjson.Quote(a.DBID), "id")
	}
	if err != nil {
		return a, err
	}
	if raw, ok, _ := rawjson.Lookup(doc, "org_id"); !ok || string(raw) == `""` || string(raw) == "null" {
		if doc, err = rawjson.Set(doc, rawjson.Quote(m.orgID), "org_id"); err != nil {
			return a, err
		}
	}
	raw, _, err := rawjson.Lookup(doc, "name")
	if err != nil {
		return a, err
	}
	a.Kind, a.Doc = store.Classic, doc
	a.Name, _ = rawjson.String(raw)
	a.Categories = category.FromName(a.Name)
	a.Derived, a.DerivedBy = nil, ""
	return a, nil
}

// OAS is a's record for the Tyk OAS document doc: doc with a's db id as
// x-tyk-api-gateway.info.dbId and, when its info.id is empty, a's API ID;
// named after its info.name; a's categories kept; with the derived classic
// definition (Derived).
func (m *Maker) OAS(a store.API, doc []byte) (store.API, error) {
	id, _, err := oasdoc.ID(doc)
	if err != nil {
		return a, err
	}
	if id == "" {
		if doc, err = oasdoc.SetID(doc, a.ID); err != nil {
			return a, err
		}
	}
	if doc, err = oasdoc.Stamp(doc, a.DBID); err != nil {
		return a, err
	}
	a.Kind, a.Doc, a.Name = store.OAS, doc, oasdoc.Name(doc)
	if a.Categories == nil {
		a.Categories = []string{}
	}
	return m.Derived(a), nil
}

// Promoted is the record of a staged copy's document (or of one of its
// versions) promoted to a: the staging prefixes taken out of its ID, name
// and listen path (convert.Unstage), then made as OAS makes it.
func (m *Maker) Promoted(a store.API, stagedDoc []byte) (store.API, error) {
	doc, err := convert.Unstage(stagedDoc)
	if err != nil {
		return a, err
	}
	return m.OAS(a, doc)
}

// Converted is the record of a document the converter made (it holds its
// IDs already): a with its derived classic definition.
func (m *Maker) Converted(a store.API) store.API {
	a.Kind = store.OAS
	return m.Derived(a)
}

// Derived is a, an OAS record, with the classic definition gateways load
// for it and this build's tag; one whose document does not derive, or
// derives to more than MaxDerived, keeps none but the tag (it is not tried
// again until it is written again).
func (m *Maker) Derived(a store.API) store.API {
	a.Derived, a.DerivedBy = nil, ""
	if a.Kind != store.OAS || m.derive == nil || m.tag == "" {
		return a
	}
	def, err := m.definition(a, MaxDerived)
	a.DerivedBy = m.tag
	if err == nil && len(def) <= MaxDerived {
		a.Derived = def
	}
	return a
}

// Current reports whether an OAS record's derived definition (none
// included) is the one this maker makes: made by this build, or nothing to
// make.
func (m *Maker) Current(a store.API) bool {
	return a.Kind != store.OAS || m.derive == nil || m.tag == "" || a.DerivedBy == m.tag
}

// Derives reports whether OAS records keep derived definitions.
func (m *Maker) Derives() bool { return m.derive != nil }

// GatewayDefinition is the classic definition a gateway loads for an OAS API:
// its document derived, with the API's IDs and is_oas true.
func (m *Maker) GatewayDefinition(a store.API) ([]byte, error) {
	return m.definition(a, -1)
}

// definition is GatewayDefinition, or an error when it is surely longer
// than limit bytes (limit >= 0): the IDs written below only replace
// values, or add them, outside what derive measures.
func (m *Maker) definition(a store.API, limit int) ([]byte, error) {
	if m.derive == nil {
		return nil, fmt.Errorf("api %q: no derivation configured", a.ID)
	}
	def, err := m.derive(a.Doc, limit)
	if err != nil {
		return nil, err
	}
	return rawjson.SetMembers(def, []string{"api_id", "id", "is_oas"}, [][]byte{rawjson.Quote(a.ID), rawjson.Quote(a.DBID), []byte("true")})
}
