package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/httpbody"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
	"github.com/gatehouse/gatehouse/pkg/liststream"
	"github.com/gatehouse/gatehouse/services/management/internal/gwfields"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

const jsonType = "application/json"

// classicDefinition reads `{"api_definition":{..}}` and returns the
// definition's exact bytes with its api_id and name checked.
func classicDefinition(body []byte) (def []byte, apiID string, hasID bool, err error) {
	// One JSON value, valid UTF-8, no duplicate keys (which one would Tyk
	// read?): the definition is stored verbatim, so it must be unambiguous.
	if p := jsonstrict.First(jsonstrict.Check(body, nil)); p != nil {
		if p.Kind == jsonstrict.TooManyValues {
			return nil, "", false, badRequest("Malformed API data: " + p.Error())
		}
		return nil, "", false, errMalformedAPI
	}
	m, found, err := rawjson.Find(body, "api_definition")
	if err != nil || !found {
		return nil, "", false, errMalformedAPI
	}
	def = body[m.ValueStart:m.ValueEnd]
	if _, err := rawjson.Members(def); err != nil {
		return nil, "", false, errMalformedAPI
	}
	if raw, ok, _ := rawjson.Lookup(def, "api_id"); ok {
		if apiID, hasID = rawjson.String(raw); !hasID {
			return nil, "", false, errMalformedAPI
		}
	}
	// A gateway reads is_oas true as "load the OAS document beside me",
	// finds none and skips the API at every reload (CONTRACT §6).
	if raw, _, _ := rawjson.Lookup(def, "is_oas"); string(raw) == "true" {
		return nil, "", false, errClassicIsOAS
	}
	raw, ok, _ := rawjson.Lookup(def, "name")
	name, isString := rawjson.String(raw)
	switch {
	case ok && string(raw) != "null" && !isString:
		return nil, "", false, errMalformedAPI
	case strings.TrimSpace(name) == "":
		return nil, "", false, errNameRequired
	}
	// A gateway decodes the definition into its own types: one field of
	// another type fails its whole /system/apis.
	if err := gwfields.Classic.Check(def); err != nil {
		return nil, "", false, badRequest("api_definition." + err.Error())
	}
	return def, apiID, hasID && apiID != "", nil
}

func (s *Server) CreateAPI(ctx context.Context, req *managementv1.CreateAPIRequest) (*managementv1.CreateAPIResponse, error) {
	def, apiID, hasID, err := classicDefinition(bytes.TrimSpace(req.GetBody().GetData()))
	if err != nil {
		return nil, err
	}
	if hasID {
		if err := checkAPIID("api_definition.api_id", apiID); err != nil {
			return nil, err
		}
	}
	var givenDBID string
	if raw, ok, _ := rawjson.Lookup(def, "id"); ok {
		givenDBID, _ = rawjson.String(raw)
	}
	a, err := s.records.Classic(newIDs(apiID, givenDBID), def)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	if err := s.store.CreateAPI(ctx, a); err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.CreateAPIResponse{Status: "OK", Message: "API created", Meta: a.DBID, Id: a.ID}, nil
}

func (s *Server) ListAPIs(ctx context.Context, req *managementv1.ListAPIsRequest) (*managementv1.ListAPIsResponse, error) {
	offset, limit, err := paging(req.P)
	if err != nil {
		return nil, err
	}
	cats := commaSet(req.GetCategory())
	if limit < 0 && s.streamAPIs(ctx, pageSize, func(tx *store.Tx, item func(store.API) error) (total int, err error) {
		err = tx.EachListed(cats, 0, -1, func(n int) error { total = n; return nil }, item)
		return total, err
	}) {
		return &managementv1.ListAPIsResponse{}, nil
	}
	apis, total, err := s.store.ListAPIs(ctx, cats, offset, limit)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.ListAPIsResponse{Body: apiPage(apis, total, pageSize)}, nil
}

// streamAPIs hands the REST facade a list of every API each gives it (in
// one store snapshot), `{"apis":[..],"pages":n}` with n the pages of size
// the total each returns fills, written as it is read and never held
// (pkg/liststream). It reports false on a gRPC call, which the handler
// answers in full.
func (s *Server) streamAPIs(ctx context.Context, size int, each func(tx *store.Tx, item func(store.API) error) (total int, err error)) bool {
	return liststream.Stream(ctx, func(w *liststream.Writer) error {
		var b bytes.Buffer
		var total int
		err := s.store.View(ctx, func(tx *store.Tx) (err error) {
			if _, err := io.WriteString(w, `{"apis":[`); err != nil {
				return err
			}
			first := true
			total, err = each(tx, func(a store.API) error {
				b.Reset()
				if !first {
					b.WriteByte(',')
				}
				first = false
				writeItem(&b, a)
				_, err := w.Write(b.Bytes())
				return err
			})
			return err
		})
		if err == nil {
			_, err = io.WriteString(w, `],"pages":`+strconv.Itoa(int(pagesOf(total, size)))+`}`)
		}
		if err != nil {
			return s.storeError(err, errInternal)
		}
		return nil
	})
}

// apiPage is the answer of one page of APIs: `{"apis":[..],"pages":n}`,
// n the pages of size that total fills.
func apiPage(apis []store.API, total, size int) *httpbody.HttpBody {
	var b bytes.Buffer
	b.WriteString(`{"apis":[`)
	for i, a := range apis {
		if i > 0 {
			b.WriteByte(',')
		}
		writeItem(&b, a)
	}
	b.WriteString(`],"pages":`)
	b.WriteString(strconv.Itoa(int(pagesOf(total, size))))
	b.WriteByte('}')
	return &httpbody.HttpBody{ContentType: jsonType, Data: b.Bytes()}
}

// writeItem writes one list item: a classic API's definition, or an OAS
// API's summary definition and its document, with the categories.
func writeItem(b *bytes.Buffer, a store.API) {
	b.WriteString(`{"api_definition":`)
	if a.Kind == store.OAS {
		writeOASSummary(b, a)
	} else {
		b.Write(a.Doc)
	}
	b.WriteString(`,"categories":`)
	writeStrings(b, a.Categories)
	if a.Kind == store.OAS {
		b.WriteString(`,"oas":`)
		b.Write(a.Doc)
	}
	b.WriteByte('}')
}

// writeOASSummary writes the classic-shaped definition Tyk lists for an OAS API.
func writeOASSummary(b *bytes.Buffer, a store.API) {
	b.WriteString(`{"api_id":`)
	b.Write(rawjson.Quote(a.ID))
	b.WriteString(`,"id":`)
	b.Write(rawjson.Quote(a.DBID))
	b.WriteString(`,"name":`)
	b.Write(rawjson.Quote(a.Name))
	b.WriteString(`,"is_oas":true}`)
}

func writeStrings(b *bytes.Buffer, list []string) {
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(rawjson.Quote(s))
	}
	b.WriteByte(']')
}

// newIDs are the IDs of an API being created, in the one namespace rule
// (store.Tx.PutAPI): the API ID and the db id it was given are kept — the
// write refuses them when another API holds either (409) — and only an
// absent one (or a db id not of 24 hex) is made up.
func newIDs(givenID, givenDBID string) store.API {
	a := store.API{ID: givenID, DBID: givenDBID}
	if a.ID == "" {
		a.ID = store.NewAPIID()
	}
	if !store.IsDBID(a.DBID) {
		a.DBID = store.NewDBID()
	}
	return a
}

// otherAPIError is a body sent to an API's path that names another API (400).
type otherAPIError struct{ field, given, want string }

func (e *otherAPIError) Error() string {
	return fmt.Sprintf("%s %q does not name the API at this path (%s)", e.field, e.given, e.want)
}

// namesAPI checks that a body sent to an API's path names that API
// (CONTRACT §2 "Addressing"): its API ID and its db id, each when the body
// gives one ("" means not given).
func namesAPI(a store.API, idField, bodyID, dbField, bodyDBID string) error {
	if bodyID != "" && bodyID != a.ID {
		return &otherAPIError{idField, bodyID, a.ID}
	}
	if bodyDBID != "" && bodyDBID != a.DBID {
		return &otherAPIError{dbField, bodyDBID, a.DBID}
	}
	return nil
}

// classicDBID reads a classic definition's "id": "" when absent, null or
// empty; a 400 when it is not a string.
func classicDBID(def []byte) (string, error) {
	raw, ok, _ := rawjson.Lookup(def, "id")
	if !ok || string(raw) == "null" {
		return "", nil
	}
	id, isString := rawjson.String(raw)
	if !isString {
		return "", badRequest("api_definition.id must be a string")
	}
	return id, nil
}

func (s *Server) GetAPI(ctx context.Context, req *managementv1.GetAPIRequest) (*managementv1.GetAPIResponse, error) {
	a, err := s.store.GetAPI(ctx, req.GetApiId())
	if err != nil {
		return nil, s.storeError(err, errAPINotFound)
	}
	var b bytes.Buffer
	b.Grow(len(a.Doc)*2 + 64)
	b.WriteString(`{"api_definition":`)
	if a.Kind == store.OAS {
		writeOASSummary(&b, a)
		b.WriteString(`,"oas":`)
	}
	b.Write(a.Doc)
	b.WriteByte('}')
	return &managementv1.GetAPIResponse{Body: &httpbody.HttpBody{ContentType: jsonType, Data: b.Bytes()}}, nil
}

func (s *Server) UpdateAPI(ctx context.Context, req *managementv1.UpdateAPIRequest) (*managementv1.UpdateAPIResponse, error) {
	def, bodyID, _, err := classicDefinition(bytes.TrimSpace(req.GetBody().GetData()))
	if err != nil {
		return nil, err
	}
	bodyDBID, err := classicDBID(def)
	if err != nil {
		return nil, err
	}
	err = s.store.UpdateAPI(ctx, req.GetApiId(), store.Classic, func(old store.API) (store.API, error) {
		if err := namesAPI(old, "api_definition.api_id", bodyID, "api_definition.id", bodyDBID); err != nil {
			return old, err
		}
		return s.records.Classic(old, def)
	})
	if err != nil {
		return nil, s.storeError(err, errAPINotFound)
	}
	return &managementv1.UpdateAPIResponse{Status: "OK", Message: "API updated"}, nil
}

func (s *Server) DeleteAPI(ctx context.Context, req *managementv1.DeleteAPIRequest) (*managementv1.DeleteAPIResponse, error) {
	var check func(*store.Tx, store.API) error
	if !req.GetForce() {
		check = keys.APIInUse
	}
	err := s.store.DeleteAPI(ctx, req.GetApiId(), 0, check)
	if err != nil {
		return nil, s.storeError(err, errAPINotFound)
	}
	return &managementv1.DeleteAPIResponse{Status: "OK", Message: "API deleted"}, nil
}
