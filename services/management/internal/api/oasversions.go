package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// errNoAPIDetail is the Dashboard's answer for the versions of an API it
// does not hold.
var errNoAPIDetail = rest.Error(codes.NotFound, http.StatusNotFound, "Could not retrieve API detail.")

// versionInfo is what the version list reads of a Tyk OAS document.
type versionInfo struct {
	XTyk struct {
		Info struct {
			Name       string `json:"name"`
			Expiration string `json:"expiration"`
			State      struct {
				Internal bool `json:"internal"`
			} `json:"state"`
			Versioning *struct {
				Name     string `json:"name"`
				Default  string `json:"default"`
				Versions []struct {
					ID   string `json:"id"`
					Name string `json:"name"`
				} `json:"versions"`
			} `json:"versioning"`
		} `json:"info"`
	} `json:"x-tyk-api-gateway"`
}

// versionMeta is one item of the Dashboard's VersionMetas.
type versionMeta struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	VersionName      string `json:"versionName"`
	Internal         bool   `json:"internal"`
	IsDefaultVersion bool   `json:"isDefaultVersion"`
	ExpirationDate   string `json:"expirationDate"`
}

// ListOASAPIVersions answers GET /api/apis/oas/{api_id}/versions: the base
// API, then each version its versioning block lists that is stored (a
// listed ID no API holds is left out), filtered by searchText (part of the
// version name) and accessType (internal or external).
func (s *Server) ListOASAPIVersions(ctx context.Context, req *managementv1.ListOASAPIVersionsRequest) (*managementv1.ListOASAPIVersionsResponse, error) {
	base, err := s.getOAS(ctx, req.GetApiId())
	if err != nil {
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrNotOAS) {
			return nil, errNoAPIDetail
		}
		return nil, s.storeError(err, errNoAPIDetail)
	}
	var b versionInfo
	if err := json.Unmarshal(base.Doc, &b); err != nil {
		return nil, errNoAPIDetail
	}
	vs := b.XTyk.Info.Versioning
	baseName, def := "", ""
	if vs != nil {
		baseName, def = vs.Name, vs.Default
	}
	isDefault := func(name, id string) bool { return def == name || def == id || (def == "self" && id == base.ID) }
	metas := []versionMeta{{ID: base.ID, Name: b.XTyk.Info.Name, VersionName: baseName, Internal: b.XTyk.Info.State.Internal,
		IsDefaultVersion: vs == nil || def == "" || isDefault(baseName, base.ID), ExpirationDate: b.XTyk.Info.Expiration}}
	if vs != nil {
		for _, v := range vs.Versions {
			if v.ID == base.ID {
				continue
			}
			child, err := s.getOAS(ctx, v.ID)
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrNotOAS) {
				continue
			}
			if err != nil {
				return nil, s.storeError(err, errNoAPIDetail)
			}
			var c versionInfo
			if json.Unmarshal(child.Doc, &c) != nil {
				continue
			}
			metas = append(metas, versionMeta{ID: child.ID, Name: c.XTyk.Info.Name, VersionName: v.Name, Internal: c.XTyk.Info.State.Internal,
				IsDefaultVersion: isDefault(v.Name, child.ID), ExpirationDate: c.XTyk.Info.Expiration})
		}
	}
	search, access := strings.ToLower(req.GetSearchText()), req.GetAccessType()
	kept := []versionMeta{}
	for _, m := range metas {
		if search != "" && !strings.Contains(strings.ToLower(m.VersionName), search) {
			continue
		}
		if (access == "internal" && !m.Internal) || (access == "external" && m.Internal) {
			continue
		}
		kept = append(kept, m)
	}
	out, err := json.Marshal(struct {
		APIs  []versionMeta `json:"apis"`
		Pages int           `json:"pages"`
	}{kept, 1})
	if err != nil {
		return nil, err
	}
	return &managementv1.ListOASAPIVersionsResponse{Body: &httpbody.HttpBody{ContentType: jsonType, Data: out}}, nil
}
