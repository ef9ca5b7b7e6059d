package api

import (
	"context"
	"errors"
	"mime"

	"google.golang.org/genproto/googleapis/api/httpbody"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// ExportOASAPI answers the document as a file (specification 4.3). The
// format comes from the request's Content-Type, as in Tyk: YAML types give
// YAML, anything else JSON. mode=public leaves out the root x-tyk-api-gateway.
func (s *Server) ExportOASAPI(ctx context.Context, req *managementv1.ExportOASAPIRequest) (*managementv1.ExportOASAPIResponse, error) {
	a, err := s.getOAS(ctx, req.GetApiId())
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("export: read failed", "api_id", req.GetApiId(), "err", err)
		}
		return nil, errNoExport
	}
	ct := req.GetContentType()
	if ct == "" {
		ct = incoming(ctx, contentTypeKey)
	}
	format, ext := oasdoc.JSON, ".json"
	if oasdoc.IsYAML(ct) {
		format, ext = oasdoc.YAML, ".yaml"
	}
	public := req.GetMode() == "public"
	name := "TykOasApiDef-" + a.ID + ext
	if public {
		name = "oas-" + a.ID + ext
	}
	file, err := oasdoc.Export(a.Doc, format, public)
	if err != nil {
		s.log.Error("export failed", "api_id", a.ID, "err", err)
		return nil, errNoExport
	}
	rest.SetHeader(ctx, "Content-Disposition", contentDisposition(name))
	return &managementv1.ExportOASAPIResponse{
		File:     &httpbody.HttpBody{ContentType: "application/octet-stream", Data: file},
		Filename: name,
	}, nil
}

// contentDisposition names the file, quoted as the contract shows; a name
// that needs it is encoded (RFC 2231) instead.
func contentDisposition(name string) string {
	for _, r := range name {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return mime.FormatMediaType("attachment", map[string]string{"filename": name})
		}
	}
	return `attachment; filename="` + name + `"`
}
