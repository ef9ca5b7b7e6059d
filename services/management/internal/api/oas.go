package api

import (
	"context"
	"errors"
	"mime"
	"strings"

	"google.golang.org/genproto/googleapis/api/httpbody"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

const yamlType = "application/x-yaml"

// oasDocument reads and validates a Tyk OAS document from a request body:
// YAML when the body's content type (gRPC) or the request's Content-Type
// header (REST) says so, JSON otherwise.
func oasDocument(ctx context.Context, body *httpbody.HttpBody) ([]byte, error) {
	ct := body.GetContentType()
	if ct == "" {
		ct = incoming(ctx, contentTypeKey)
	}
	doc, err := oasdoc.Parse(body.GetData(), oasdoc.IsYAML(ct))
	if err == nil {
		err = oasdoc.Validate(ctx, doc)
	}
	var inv *oasdoc.Invalid
	switch {
	case errors.Is(err, oasdoc.ErrNoExtension):
		return nil, errNoExtension
	case errors.As(err, &inv):
		return nil, badRequest(inv.Msg)
	case err != nil:
		return nil, badRequest("invalid Tyk OAS document")
	}
	return doc, nil
}

func (s *Server) CreateOASAPI(ctx context.Context, req *managementv1.CreateOASAPIRequest) (*managementv1.CreateOASAPIResponse, error) {
	doc, err := oasDocument(ctx, req.GetBody())
	if err != nil {
		return nil, err
	}
	id, _, err := oasdoc.ID(doc)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	if id != "" {
		if err := checkAPIID("x-tyk-api-gateway.info.id", id); err != nil {
			return nil, err
		}
	}
	givenDBID, err := oasdoc.DBID(doc)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	// a db id the document brings is kept, as for classic definitions:
	// tyk-sync publishes with the ids it dumped
	a, err := s.records.OAS(newIDs(id, givenDBID), doc)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	if err := s.store.CreateAPI(ctx, a); err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.CreateOASAPIResponse{Status: "OK", Message: "API created", Meta: a.DBID, Id: a.ID}, nil
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
	bodyID, _, err := oasdoc.ID(doc)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	bodyDBID, err := oasdoc.DBID(doc)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	err = s.store.UpdateAPI(ctx, req.GetApiId(), store.OAS, func(old store.API) (store.API, error) {
		if err := namesAPI(old, "x-tyk-api-gateway.info.id", bodyID, "x-tyk-api-gateway.info.dbId", bodyDBID); err != nil {
			return old, err
		}
		return s.records.OAS(old, doc) // categories, db id and links are kept
	})
	if err != nil {
		return nil, s.storeError(err, errAPINotFound)
	}
	return &managementv1.UpdateOASAPIResponse{Status: "OK", Message: "API updated."}, nil
}

func (s *Server) DeleteOASAPI(ctx context.Context, req *managementv1.DeleteOASAPIRequest) (*managementv1.DeleteOASAPIResponse, error) {
	if !req.GetForce() {
		if err := s.keys.InUse(ctx, req.GetApiId(), false); err != nil {
			return nil, s.storeError(err, errAPINotFound)
		}
	}
	err := s.store.DeleteAPI(ctx, req.GetApiId(), store.OAS)
	if err != nil {
		return nil, s.storeError(err, errAPINotFound)
	}
	return &managementv1.DeleteOASAPIResponse{Status: "OK", Message: "API deleted."}, nil
}
