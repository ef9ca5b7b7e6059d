package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/oasimport"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// errTemplateRights is the Dashboard's answer for a templateID from a
// caller who may not read assets.
var errTemplateRights = rest.Error(codes.PermissionDenied, http.StatusForbidden, "The user does not have the rights to apply templates.")

// importQuery is what the import, dry-run and patch requests share.
type importQuery interface {
	proto.Message
	GetUpstreamUrl() string
	GetListenPath() string
	GetCustomDomain() string
}

// importParams reads the query parameters of req, with the template
// templateID names.
func (s *Server) importParams(ctx context.Context, req importQuery) (oasimport.Params, error) {
	m := req.ProtoReflect()
	p := oasimport.Params{
		UpstreamURL: req.GetUpstreamUrl(), ListenPath: req.GetListenPath(), CustomDomain: req.GetCustomDomain(),
		AllowList: optBool(m, "allow_list"), ValidateRequest: optBool(m, "validate_request"),
		MockResponse: optBool(m, "mock_response"), Authentication: optBool(m, "authentication"),
	}
	if fd := m.Descriptor().Fields().ByName("template_id"); fd != nil && m.Get(fd).String() != "" {
		t, err := s.template(ctx, m.Get(fd).String())
		if err != nil {
			return oasimport.Params{}, err
		}
		p.Template = t
	}
	return p, nil
}

// template is the data of the API template (asset of kind oas-template)
// id names, for a caller who may read assets.
func (s *Server) template(ctx context.Context, id string) ([]byte, error) {
	if c, ok := Caller(ctx); !ok || !allowed(c.Permissions, areaAssets, false) {
		return nil, errTemplateRights
	}
	noTemplate := badRequest("templateID: no API template " + strconv.Quote(id))
	d, err := s.store.GetDoc(ctx, store.Assets, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, noTemplate
	}
	if err != nil {
		return nil, s.storeError(err, noTemplate)
	}
	var a struct {
		Kind *string         `json:"kind"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(d.Doc, &a) != nil || (a.Kind != nil && *a.Kind != assetKindTemplate) {
		return nil, noTemplate
	}
	if len(a.Data) == 0 || string(a.Data) == "null" {
		return nil, badRequest("templateID: the template " + strconv.Quote(id) + " has no data")
	}
	return a.Data, nil
}

// optBool is the optional bool field name of m, nil when unset.
func optBool(m protoreflect.Message, name protoreflect.Name) *bool {
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil || !m.Has(fd) {
		return nil
	}
	b := m.Get(fd).Bool()
	return &b
}

// versionQuery is what the import and dry-run requests carry to make the
// new API a version of another.
type versionQuery interface {
	GetBaseApiId() string
	GetBaseApiVersionName() string
	GetNewVersionName() string
	GetSetDefault() bool
}

// errNewVersionRequired is Tyk's answer (422) for base_api_id without
// new_version_name.
var errNewVersionRequired = rest.Error(codes.InvalidArgument, http.StatusUnprocessableEntity, "The new version name is required")

// errNotBase is Tyk's answer for a base_api_id that names no Tyk OAS API.
func errNotBase(id string) error {
	return badRequest(id + " is not a valid Base API version")
}

// newVersion reads the versioning parameters of req as Tyk's gateway
// validates them (handleAddApi): nil without base_api_id (the others are
// then ignored); new_version_name required; the base a stored Tyk OAS API;
// base_api_version_name required when the base has no version name yet.
func (s *Server) newVersion(ctx context.Context, req versionQuery) (*oasimport.Version, error) {
	id := req.GetBaseApiId()
	if id == "" {
		return nil, nil
	}
	if req.GetNewVersionName() == "" {
		return nil, errNewVersionRequired
	}
	base, err := s.getOAS(ctx, id)
	if err != nil {
		return nil, s.storeError(err, errNotBase(id))
	}
	if req.GetBaseApiVersionName() == "" && oasimport.VersionName(base.Doc) == "" {
		return nil, badRequest("you need to provide a version name for the new Base API: " + id)
	}
	return &oasimport.Version{BaseName: req.GetBaseApiVersionName(), Name: req.GetNewVersionName(), SetDefault: req.GetSetDefault()}, nil
}

// importBody reads the OpenAPI document of an import or patch: the body
// itself (JSON, or YAML as bodyJSON reads it), or, in a multipart/form-data
// upload (the dashboard SDK's FormDataFile), its file field, YAML when the
// part's content type says so or it does not start with {.
func importBody(ctx context.Context, body *httpbody.HttpBody) ([]byte, error) {
	ct := body.GetContentType()
	if ct == "" {
		ct = incoming(ctx, contentTypeKey)
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" {
		return bodyJSON(ctx, body)
	}
	r := multipart.NewReader(bytes.NewReader(body.GetData()), params["boundary"])
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			return nil, badRequest("multipart upload: no file field; send the OpenAPI document in the form field file")
		}
		if err != nil {
			return nil, badRequest("multipart upload: " + err.Error())
		}
		if part.FormName() != "file" {
			continue
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, badRequest("multipart upload: " + err.Error())
		}
		yaml := oasdoc.IsYAML(part.Header.Get("Content-Type")) || !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
		doc, err := oasdoc.Parse(data, yaml)
		return doc, oasError(err)
	}
}

// importError is the answer for oasimport's refusals.
func importError(err error) error {
	var bad *oasimport.Error
	if errors.As(err, &bad) {
		return badRequest(bad.Msg)
	}
	return err
}

// imported is the record ImportOASAPI makes of an OpenAPI document, and
// what DryRunOASAPI answers.
func (s *Server) imported(ctx context.Context, p oasimport.Params, openapi []byte) (store.API, error) {
	doc, err := oasimport.Import(openapi, p)
	if err != nil {
		return store.API{}, importError(err)
	}
	if doc, err = checkOAS(ctx, doc); err != nil {
		return store.API{}, err
	}
	return s.newOAS(doc)
}

// ImportOASAPI answers POST /api/apis/oas/import: the API is stored as
// CreateOASAPI stores it.
func (s *Server) ImportOASAPI(ctx context.Context, req *managementv1.ImportOASAPIRequest) (*managementv1.ImportOASAPIResponse, error) {
	p, err := s.importParams(ctx, req)
	if err != nil {
		return nil, err
	}
	v, err := s.newVersion(ctx, req)
	if err != nil {
		return nil, err
	}
	openapi, err := importBody(ctx, req.GetBody())
	if err != nil {
		return nil, err
	}
	a, err := s.imported(ctx, p, openapi)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	if err := s.storeNew(ctx, a, req.GetBaseApiId(), v); err != nil {
		return nil, err
	}
	return &managementv1.ImportOASAPIResponse{Status: "OK", Message: "API imported", Meta: a.DBID, Id: a.ID}, nil
}

// storeNew stores a, a new Tyk OAS API: with v, as a version of the API
// baseRef names, whose versioning block lists it in the same write.
func (s *Server) storeNew(ctx context.Context, a store.API, baseRef string, v *oasimport.Version) error {
	if v == nil {
		if err := s.store.CreateAPI(ctx, a); err != nil {
			return s.storeError(err, errInternal)
		}
		return nil
	}
	err := s.store.CreateVersion(ctx, baseRef, a, func(base store.API) (store.API, error) {
		doc, err := oasimport.AddVersion(base.Doc, *v, a.ID)
		if err != nil {
			return base, importError(err)
		}
		if doc, err = checkOAS(ctx, doc); err != nil {
			return base, err
		}
		return s.records.OAS(base, doc)
	})
	if err != nil {
		return s.storeError(err, errNotBase(baseRef))
	}
	return nil
}

// DryRunOASAPI answers POST /api/apis/oas/dry-run with the document an
// import of the body's oas (or tyk_oas) would store; nothing is stored.
func (s *Server) DryRunOASAPI(ctx context.Context, req *managementv1.DryRunOASAPIRequest) (*managementv1.DryRunOASAPIResponse, error) {
	p, err := s.importParams(ctx, req)
	if err != nil {
		return nil, err
	}
	if _, err := s.newVersion(ctx, req); err != nil {
		return nil, err
	}
	body, err := oasdoc.Parse(req.GetBody().GetData(), false)
	if err != nil {
		return nil, oasError(err)
	}
	openapi, err := oasimport.DryRunDocument(body)
	if err != nil {
		return nil, badRequest("the request body must be {\"oas\": document} or {\"tyk_oas\": document}")
	}
	if openapi == nil {
		return nil, badRequest("oas: missing; want the OpenAPI document in oas (or a Tyk OAS document in tyk_oas)")
	}
	a, err := s.imported(ctx, p, openapi)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.DryRunOASAPIResponse{Body: &httpbody.HttpBody{ContentType: jsonType, Data: a.Doc}}, nil
}

// PatchOASAPI answers PATCH /api/apis/oas/{api_id}: the body's OpenAPI
// document replaces the stored one's, whose x-tyk-api-gateway is kept
// unless the body brings one; stored as UpdateOASAPI stores it.
func (s *Server) PatchOASAPI(ctx context.Context, req *managementv1.PatchOASAPIRequest) (*managementv1.PatchOASAPIResponse, error) {
	p, err := s.importParams(ctx, req)
	if err != nil {
		return nil, err
	}
	openapi, err := importBody(ctx, req.GetBody())
	if err != nil {
		return nil, err
	}
	err = s.updateOAS(ctx, req.GetApiId(), func(old store.API) ([]byte, error) {
		doc, err := oasimport.Patch(old.Doc, openapi, p)
		if err != nil {
			return nil, importError(err)
		}
		return checkOAS(ctx, doc)
	})
	if err != nil {
		return nil, err
	}
	return &managementv1.PatchOASAPIResponse{Status: "OK", Message: "API updated."}, nil
}
