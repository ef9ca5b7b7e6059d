package api

import (
	"context"
	"errors"
	"mime"
	"strings"

	"google.golang.org/genproto/googleapis/api/httpbody"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/oasimport"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

const yamlType = "application/x-yaml"

// oasDocument reads and validates a Tyk OAS document from a request body:
// YAML when the body's content type (gRPC) or the request's Content-Type
// header (REST) says so, JSON otherwise.
func oasDocument(ctx context.Context, body *httpbody.HttpBody) ([]byte, error) {
	doc, err := bodyJSON(ctx, body)
	if err != nil {
		return nil, err
	}
	return checkOAS(ctx, doc)
}

// bodyJSON reads a request body as a JSON object, converting YAML as
// oasDocument does.
func bodyJSON(ctx context.Context, body *httpbody.HttpBody) ([]byte, error) {
	ct := body.GetContentType()
	if ct == "" {
		ct = incoming(ctx, contentTypeKey)
	}
	doc, err := oasdoc.Parse(body.GetData(), oasdoc.IsYAML(ct))
	return doc, oasError(err)
}

// checkOAS validates a Tyk OAS document.
func checkOAS(ctx context.Context, doc []byte) ([]byte, error) {
	if err := oasError(oasdoc.Validate(ctx, doc)); err != nil {
		return nil, err
	}
	return doc, nil
}

func oasError(err error) error {
	var inv *oasdoc.Invalid
	switch {
	case err == nil:
		return nil
	case errors.Is(err, oasdoc.ErrNoExtension):
		return errNoExtension
	case errors.As(err, &inv):
		return badRequest(inv.Msg)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err // the request ended while its document waited (grpcserver.CallerError)
	}
	return badRequest("invalid Tyk OAS document")
}

func (s *Server) CreateOASAPI(ctx context.Context, req *managementv1.CreateOASAPIRequest) (*managementv1.CreateOASAPIResponse, error) {
	v, err := s.newVersion(ctx, req)
	if err != nil {
		return nil, err
	}
	doc, err := s.createdDoc(ctx, req)
	if err != nil {
		return nil, err
	}
	a, err := s.newOAS(doc)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	if err := s.storeNew(ctx, a, req.GetBaseApiId(), v); err != nil {
		return nil, err
	}
	return &managementv1.CreateOASAPIResponse{Status: "OK", Message: "API created", Meta: a.DBID, Id: a.ID}, nil
}

// createdDoc is the validated document of a create: the body, laid over
// the template templateID names when set.
func (s *Server) createdDoc(ctx context.Context, req *managementv1.CreateOASAPIRequest) ([]byte, error) {
	if req.GetTemplateId() == "" {
		return oasDocument(ctx, req.GetBody())
	}
	t, err := s.template(ctx, req.GetTemplateId())
	if err != nil {
		return nil, err
	}
	doc, err := bodyJSON(ctx, req.GetBody())
	if err != nil {
		return nil, err
	}
	if doc, err = oasimport.WithTemplate(doc, t); err != nil {
		return nil, importError(err)
	}
	return checkOAS(ctx, doc)
}

// newOAS is the record of a new Tyk OAS API from a validated document: its
// ID, or a new one, and the db id it brings (a db id the document brings is
// kept, as for classic definitions: tyk-sync publishes with the ids it
// dumped), or a new one.
func (s *Server) newOAS(doc []byte) (store.API, error) {
	id, _, err := oasdoc.ID(doc)
	if err != nil {
		return store.API{}, badRequest(err.Error())
	}
	if id != "" {
		if err := checkAPIID("x-tyk-api-gateway.info.id", id); err != nil {
			return store.API{}, err
		}
	}
	givenDBID, err := oasdoc.DBID(doc)
	if err != nil {
		return store.API{}, badRequest(err.Error())
	}
	return s.records.OAS(newIDs(id, givenDBID), doc)
}

// getOAS reads a Tyk OAS API; a classic API is not found.
func (s *Server) getOAS(ctx context.Context, id string) (store.API, error) {
	a, err := s.store.GetAPI(ctx, id)
	if err == nil && a.Kind != store.OAS {
		return store.API{}, store.ErrNotOAS
	}
	return a, err
}

// wantsYAML reports whether a media type list (an Accept header) asks for YAML before JSON.
func wantsYAML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if oasdoc.IsYAML(mt) {
			return true
		}
		if mt == jsonType {
			return false
		}
	}
	return false
}

func (s *Server) GetOASAPI(ctx context.Context, req *managementv1.GetOASAPIRequest) (*managementv1.GetOASAPIResponse, error) {
	a, err := s.getOAS(ctx, req.GetApiId())
	if err != nil {
		return nil, s.storeError(err, errAPINotFound)
	}
	accept := req.GetAccept()
	if accept == "" {
		// several Accept fields are one list in their order (RFC 9110 5.3),
		// as generated clients send them: the first acceptable type wins
		accept = strings.Join(incomingAll(ctx, acceptKey), ",")
	}
	if wantsYAML(accept) {
		y, err := oasdoc.JSONToYAML(a.Doc)
		if err != nil {
			return nil, s.storeError(err, errInternal)
		}
		return &managementv1.GetOASAPIResponse{Body: &httpbody.HttpBody{ContentType: yamlType, Data: y}}, nil
	}
	return &managementv1.GetOASAPIResponse{Body: &httpbody.HttpBody{ContentType: jsonType, Data: a.Doc}}, nil
}

func (s *Server) UpdateOASAPI(ctx context.Context, req *managementv1.UpdateOASAPIRequest) (*managementv1.UpdateOASAPIResponse, error) {
	doc, err := oasDocument(ctx, req.GetBody())
	if err != nil {
		return nil, err
	}
	err = s.updateOAS(ctx, req.GetApiId(), func(store.API) ([]byte, error) { return doc, nil })
	if err != nil {
		return nil, err
	}
	return &managementv1.UpdateOASAPIResponse{Status: "OK", Message: "API updated."}, nil
}

// updateOAS replaces the document of the Tyk OAS API id with the validated
// one newDoc makes from the stored record; the document's info.id and
// info.dbId, when set, must be the API's.
func (s *Server) updateOAS(ctx context.Context, id string, newDoc func(old store.API) ([]byte, error)) error {
	err := s.store.UpdateAPI(ctx, id, store.OAS, func(old store.API) (store.API, error) {
		doc, err := newDoc(old)
		if err != nil {
			return old, err
		}
		bodyID, _, err := oasdoc.ID(doc)
		if err != nil {
			return old, badRequest(err.Error())
		}
		bodyDBID, err := oasdoc.DBID(doc)
		if err != nil {
			return old, badRequest(err.Error())
		}
		if err := namesAPI(old, "x-tyk-api-gateway.info.id", bodyID, "x-tyk-api-gateway.info.dbId", bodyDBID); err != nil {
			return old, err
		}
		return s.records.OAS(old, doc) // categories, db id and links are kept
	})
	if err != nil {
		return s.storeError(err, errAPINotFound)
	}
	return nil
}

func (s *Server) DeleteOASAPI(ctx context.Context, req *managementv1.DeleteOASAPIRequest) (*managementv1.DeleteOASAPIResponse, error) {
	var check func(*store.Tx, store.API) error
	if !req.GetForce() {
		check = keys.APIInUse
	}
	err := s.store.DeleteAPI(ctx, req.GetApiId(), store.OAS, check)
	if err != nil {
		return nil, s.storeError(err, errAPINotFound)
	}
	return &managementv1.DeleteOASAPIResponse{Status: "OK", Message: "API deleted."}, nil
}
