package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
	"github.com/gatehouse/gatehouse/pkg/liststream"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/gwfields"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// docKind is what tells policies and assets apart: both are JSON objects
// stored verbatim with an `_id` (db id) and an `id` (CONTRACT §2 "Policies
// and assets").
type docKind struct {
	coll      store.Collection
	notFound  error
	sameID    error
	malformed error
	// stamp writes last_updated (RFC 3339) into every stored asset: tyk-sync
	// reads it as a time, so a client's "" would break every later dump. It
	// also marks the kind whose `kind` is checked (checkAssetKind).
	stamp bool
	// fields, when set, are the types a gateway decodes the document with.
	fields *gwfields.Checker
}

var (
	policyKind = docKind{
		coll:      store.Policies,
		notFound:  rest.Error(codes.NotFound, http.StatusNotFound, "Policy not found"),
		sameID:    rest.Error(codes.AlreadyExists, http.StatusConflict, "Found policy with the same ID"),
		malformed: badRequest("Malformed policy data"),
		fields:    gwfields.Policy,
	}
	assetKind = docKind{
		coll:      store.Assets,
		notFound:  rest.Error(codes.NotFound, http.StatusNotFound, "Asset not found"),
		sameID:    rest.Error(codes.AlreadyExists, http.StatusConflict, "Found asset with the same ID"),
		malformed: badRequest("Malformed asset data"),
		stamp:     true,
	}
)

// docBody reads a policy or asset: one JSON object, valid UTF-8, no
// duplicate keys. It returns the object's bytes and its `_id` and `id`
// ("" when absent, null or empty); an `_id` must be 24 lowercase hex (a
// gateway fails a whole list on one that is not), an `id` a string a path
// can carry.
func (k docKind) docBody(body []byte) (doc []byte, dbID, id string, err error) {
	body = bytes.TrimSpace(body)
	if jsonstrict.Check(body, nil) != nil || len(body) == 0 || body[0] != '{' {
		return nil, "", "", k.malformed
	}
	if _, err := rawjson.Members(body); err != nil {
		return nil, "", "", k.malformed
	}
	read := func(field string) (string, error) {
		raw, ok, _ := rawjson.Lookup(body, field)
		if !ok || string(raw) == "null" {
			return "", nil
		}
		s, isString := rawjson.String(raw)
		if !isString {
			return "", badRequest(field + " must be a string")
		}
		return s, nil
	}
	if dbID, err = read("_id"); err != nil {
		return nil, "", "", err
	}
	if dbID != "" && !dbIDPattern(dbID) {
		return nil, "", "", badRequest("_id must be 24 lowercase hex digits")
	}
	if k.fields != nil {
		if err := k.fields.Check(body); err != nil {
			return nil, "", "", badRequest(err.Error())
		}
	}
	if id, err = read("id"); err != nil {
		return nil, "", "", err
	}
	if id != "" {
		if err := checkDocumentID("id", id); err != nil {
			return nil, "", "", err
		}
	}
	if k.stamp { // an asset
		if err := checkAssetKind(body); err != nil {
			return nil, "", "", err
		}
	}
	return body, dbID, id, nil
}

// dbIDPattern reports whether s is 24 lowercase hex digits.
func dbIDPattern(s string) bool {
	if len(s) != 24 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// stored writes what the service owns into a document: `_id`, `id` (the
// db id when the client gave none), org_id when it has none (policies: a
// gateway applies a policy only to keys of its org), and for assets
// last_updated.
func (s *Server) stored(k docKind, doc []byte, dbID, id string, now time.Time) (string, []byte, error) {
	if id == "" {
		id = dbID
	}
	doc, err := rawjson.Set(doc, rawjson.Quote(dbID), "_id")
	if err != nil {
		return "", nil, err
	}
	if doc, err = rawjson.Set(doc, rawjson.Quote(id), "id"); err != nil {
		return "", nil, err
	}
	if k.stamp {
		if doc, err = rawjson.Set(doc, rawjson.Quote(now.UTC().Format(time.RFC3339)), "last_updated"); err != nil {
			return "", nil, err
		}
	}
	if raw, ok, _ := rawjson.Lookup(doc, "org_id"); !ok || string(raw) == `""` || string(raw) == "null" {
		doc, err = rawjson.Set(doc, rawjson.Quote(s.store.OrgID()), "org_id")
	}
	return id, doc, err
}

// docError maps a store error of a policy or asset call.
func (s *Server) docError(k docKind, err error) error {
	if errors.Is(err, store.ErrAlreadyExists) {
		return k.sameID
	}
	if _, isStatus := status.FromError(err); isStatus {
		return err // the edit's own refusal
	}
	return s.storeError(err, k.notFound)
}

func (s *Server) createDoc(ctx context.Context, k docKind, body []byte) (store.Document, error) {
	doc, dbID, id, err := k.docBody(body)
	if err != nil {
		return store.Document{}, err
	}
	now := time.Now()
	d, err := s.store.CreateDoc(ctx, k.coll, dbID, func(dbID string) (string, []byte, error) {
		return s.stored(k, doc, dbID, id, now)
	})
	if err != nil {
		return store.Document{}, s.docError(k, err)
	}
	return d, nil
}

func (s *Server) updateDoc(ctx context.Context, k docKind, ref string, body []byte) (string, error) {
	doc, dbID, id, err := k.docBody(body)
	if err != nil {
		return "", err
	}
	now := time.Now()
	var kept string
	err = s.store.UpdateDoc(ctx, k.coll, ref, func(old store.Document) (store.Document, error) {
		if dbID != "" && dbID != old.DBID {
			return old, badRequest("_id " + strconv.Quote(dbID) + " does not name the " + k.coll.Name() + " at this path (" + old.DBID + ")")
		}
		newID := id
		if newID == "" {
			newID = old.ID
		}
		newID, b, err := s.stored(k, doc, old.DBID, newID, now)
		kept = old.DBID
		return store.Document{ID: newID, Doc: b}, err
	})
	if err != nil {
		return "", s.docError(k, err)
	}
	return kept, nil
}

func (s *Server) getDoc(ctx context.Context, k docKind, ref string) (*httpbody.HttpBody, error) {
	d, err := s.store.GetDoc(ctx, k.coll, ref)
	if err != nil {
		return nil, s.docError(k, err)
	}
	return &httpbody.HttpBody{ContentType: jsonType, Data: d.Doc}, nil
}

// streamDocs hands the answer of a list of every document of c over to the
// REST facade (pkg/liststream): before, the documents as a JSON array,
// then after(total), written as they are read from one snapshot. It
// reports false for a gRPC call, which gets one message.
func (s *Server) streamDocs(ctx context.Context, k docKind, c store.Collection, before string, after func(total int) string) bool {
	return liststream.Stream(ctx, func(w *liststream.Writer) error {
		var tail string
		first := true
		err := s.store.EachDocs(ctx, c, func(total int) error {
			tail = after(total)
			_, err := io.WriteString(w, before+"[")
			return err
		}, func(doc []byte) error {
			if !first {
				io.WriteString(w, ",")
			}
			first = false
			_, err := w.Write(doc)
			return err
		})
		if err == nil {
			_, err = io.WriteString(w, "]"+tail)
		}
		if err != nil {
			return s.docError(k, err)
		}
		return nil
	})
}

// writeDocs writes documents as a JSON array.
func writeDocs(b *bytes.Buffer, docs []store.Document) {
	b.WriteByte('[')
	for i, d := range docs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(d.Doc)
	}
	b.WriteByte(']')
}

func (s *Server) CreatePolicy(ctx context.Context, req *managementv1.CreatePolicyRequest) (*managementv1.CreatePolicyResponse, error) {
	d, err := s.createDoc(ctx, policyKind, req.GetBody().GetData())
	if err != nil {
		return nil, err
	}
	return &managementv1.CreatePolicyResponse{Status: "OK", Message: d.DBID}, nil
}

func (s *Server) ListPolicies(ctx context.Context, req *managementv1.ListPoliciesRequest) (*managementv1.ListPoliciesResponse, error) {
	offset, limit, err := paging(req.P)
	if err != nil {
		return nil, err
	}
	if req.GetActive() != "" { // the Dashboard's ?active=: active policies only
		docs, _, err := s.matchingDocs(ctx, policyKind, func(_ store.Document, v map[string]any) bool { return isActive(v) })
		if err != nil {
			return nil, err
		}
		body, err := pagedDocs(docs, req.P)
		if err != nil {
			return nil, err
		}
		return &managementv1.ListPoliciesResponse{Body: body}, nil
	}
	if limit < 0 && s.streamDocs(ctx, policyKind, store.Policies, `{"Data":`, func(total int) string {
		return `,"Pages":` + strconv.Itoa(int(pages(total))) + `}`
	}) {
		return &managementv1.ListPoliciesResponse{}, nil
	}
	docs, total, err := s.store.ListDocs(ctx, store.Policies, offset, limit)
	if err != nil {
		return nil, s.docError(policyKind, err)
	}
	var b bytes.Buffer
	b.WriteString(`{"Data":`)
	writeDocs(&b, docs)
	b.WriteString(`,"Pages":`)
	b.WriteString(strconv.Itoa(int(pages(total))))
	b.WriteByte('}')
	return &managementv1.ListPoliciesResponse{Body: &httpbody.HttpBody{ContentType: jsonType, Data: b.Bytes()}}, nil
}

func (s *Server) GetPolicy(ctx context.Context, req *managementv1.GetPolicyRequest) (*managementv1.GetPolicyResponse, error) {
	body, err := s.getDoc(ctx, policyKind, req.GetPolicyId())
	if err != nil {
		return nil, err
	}
	return &managementv1.GetPolicyResponse{Body: body}, nil
}

func (s *Server) UpdatePolicy(ctx context.Context, req *managementv1.UpdatePolicyRequest) (*managementv1.UpdatePolicyResponse, error) {
	if _, err := s.updateDoc(ctx, policyKind, req.GetPolicyId(), req.GetBody().GetData()); err != nil {
		return nil, err
	}
	return &managementv1.UpdatePolicyResponse{Status: "OK", Message: "Data updated"}, nil
}

func (s *Server) DeletePolicy(ctx context.Context, req *managementv1.DeletePolicyRequest) (*managementv1.DeletePolicyResponse, error) {
	var check func(*store.Tx, store.Document) error
	if !req.GetForce() {
		check = keys.PolicyInUse
	}
	if err := s.store.DeleteDocument(ctx, store.Policies, req.GetPolicyId(), check); err != nil {
		return nil, s.docError(policyKind, err)
	}
	return &managementv1.DeletePolicyResponse{Status: "OK", Message: "Data deleted"}, nil
}

func (s *Server) CreateAsset(ctx context.Context, req *managementv1.CreateAssetRequest) (*managementv1.CreateAssetResponse, error) {
	d, err := s.createDoc(ctx, assetKind, req.GetBody().GetData())
	if err != nil {
		return nil, err
	}
	rest.SetStatus(ctx, http.StatusCreated)
	return &managementv1.CreateAssetResponse{Status: "success", Message: "asset created", Meta: d.DBID}, nil
}

func (s *Server) ListAssets(ctx context.Context, req *managementv1.ListAssetsRequest) (*managementv1.ListAssetsResponse, error) {
	if kind := req.GetKind(); kind != "" { // the Dashboard's ?kind=
		if kind != assetKindTemplate {
			return nil, badRequest("unsupported asset kind: '" + kind + "'")
		}
		docs, _, err := s.matchingDocs(ctx, assetKind, func(_ store.Document, v map[string]any) bool {
			k, has := v["kind"]
			return !has || k == nil || k == kind
		})
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		writeDocs(&b, docs)
		return &managementv1.ListAssetsResponse{Body: &httpbody.HttpBody{ContentType: jsonType, Data: b.Bytes()}}, nil
	}
	if s.streamDocs(ctx, assetKind, store.Assets, "", func(int) string { return "" }) {
		return &managementv1.ListAssetsResponse{}, nil
	}
	docs, _, err := s.store.ListDocs(ctx, store.Assets, 0, -1)
	if err != nil {
		return nil, s.docError(assetKind, err)
	}
	var b bytes.Buffer
	writeDocs(&b, docs)
	return &managementv1.ListAssetsResponse{Body: &httpbody.HttpBody{ContentType: jsonType, Data: b.Bytes()}}, nil
}

func (s *Server) GetAsset(ctx context.Context, req *managementv1.GetAssetRequest) (*managementv1.GetAssetResponse, error) {
	body, err := s.getDoc(ctx, assetKind, req.GetAssetId())
	if err != nil {
		return nil, err
	}
	return &managementv1.GetAssetResponse{Body: body}, nil
}

func (s *Server) UpdateAsset(ctx context.Context, req *managementv1.UpdateAssetRequest) (*managementv1.UpdateAssetResponse, error) {
	dbID, err := s.updateDoc(ctx, assetKind, req.GetAssetId(), req.GetBody().GetData())
	if err != nil {
		return nil, err
	}
	return &managementv1.UpdateAssetResponse{Status: "success", Message: "asset updated", Meta: dbID}, nil
}

func (s *Server) DeleteAsset(ctx context.Context, req *managementv1.DeleteAssetRequest) (*managementv1.DeleteAssetResponse, error) {
	d, err := s.store.GetDoc(ctx, store.Assets, req.GetAssetId())
	if err == nil {
		err = s.store.DeleteDocument(ctx, store.Assets, d.DBID, nil)
	}
	if err != nil {
		return nil, s.docError(assetKind, err)
	}
	return &managementv1.DeleteAssetResponse{Status: "success", Message: "asset deleted", Meta: d.DBID}, nil
}
