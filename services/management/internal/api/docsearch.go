package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// The Dashboard's filters on the policy and asset lists (the dashboard SDK's
// requests): ?active= on the policy list, the policy search, ?kind= on the
// asset list, and the one asset kind the Dashboard knows.

// assetKindTemplate is the one asset kind the Dashboard stores.
const assetKindTemplate = "oas-template"

// checkAssetKind refuses an asset whose kind is not one the Dashboard knows
// (422, the Dashboard's message); an asset without kind is a template.
func checkAssetKind(doc []byte) error {
	var a struct {
		Kind *string `json:"kind"`
	}
	if json.Unmarshal(doc, &a) != nil {
		return badRequest("kind must be a string")
	}
	if a.Kind == nil || *a.Kind == assetKindTemplate {
		return nil
	}
	return rest.Error(codes.InvalidArgument, http.StatusUnprocessableEntity, "unsupported asset kind: '"+*a.Kind+"'.")
}

// matchingDocs reads every document of c and keeps those match accepts,
// each decoded once (numbers as json.Number).
func (s *Server) matchingDocs(ctx context.Context, k docKind, match func(d store.Document, v map[string]any) bool) ([]store.Document, []map[string]any, error) {
	docs, _, err := s.store.ListDocs(ctx, k.coll, 0, -1)
	if err != nil {
		return nil, nil, s.docError(k, err)
	}
	var out []store.Document
	var vals []map[string]any
	for _, d := range docs {
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(d.Doc))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			continue
		}
		if match(d, v) {
			out, vals = append(out, d), append(vals, v)
		}
	}
	return out, vals, nil
}

// pagedDocs is `{"Data":[..],"Pages":n}` of the page of docs that p names.
func pagedDocs(docs []store.Document, p *int64) (*httpbody.HttpBody, error) {
	offset, limit, err := paging(p)
	if err != nil {
		return nil, err
	}
	total := len(docs)
	page := docs[min(offset, total):]
	if limit >= 0 {
		page = page[:min(limit, len(page))]
	}
	var b bytes.Buffer
	b.WriteString(`{"Data":`)
	writeDocs(&b, page)
	b.WriteString(`,"Pages":` + strconv.Itoa(int(pages(total))) + `}`)
	return &httpbody.HttpBody{ContentType: jsonType, Data: b.Bytes()}, nil
}

// isActive is the Dashboard's ?active=: a policy whose `active` is true.
func isActive(v map[string]any) bool { return v["active"] == true }

// commaSet splits a comma-separated parameter into its non-blank items.
func commaSet(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// SearchPolicies answers GET /api/portal/policies/search as the Dashboard:
// every parameter given must match. q names a policy by `id` or `_id`
// when one has it, otherwise it matches a case-insensitive part of the
// name; policy_ids, when given, replaces q.
func (s *Server) SearchPolicies(ctx context.Context, req *managementv1.SearchPoliciesRequest) (*managementv1.SearchPoliciesResponse, error) {
	ids, apis := commaSet(req.GetPolicyIds()), commaSet(req.GetApiId())
	q := strings.TrimSpace(req.GetQ())
	if len(ids) > 0 {
		q = ""
	}
	qIsID := false
	if q != "" {
		if _, err := s.store.GetDoc(ctx, store.Policies, q); err == nil {
			qIsID = true
		}
	}
	docs, vals, err := s.matchingDocs(ctx, policyKind, func(d store.Document, v map[string]any) bool {
		switch {
		case len(ids) > 0 && !slices.Contains(ids, d.ID) && !slices.Contains(ids, d.DBID):
			return false
		case qIsID && d.ID != q && d.DBID != q:
			return false
		case q != "" && !qIsID && !strings.Contains(strings.ToLower(fmt.Sprint(v["name"])), strings.ToLower(q)):
			return false
		case req.GetActive() != "" && !isActive(v):
			return false
		case req.GetState() != "" && v["state"] != req.GetState():
			return false
		case req.GetAuthType() != "" && v["auth_type"] != req.GetAuthType():
			return false
		}
		if len(apis) > 0 {
			rights, _ := v["access_rights"].(map[string]any)
			return slices.ContainsFunc(apis, func(a string) bool { _, ok := rights[a]; return ok })
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if field := strings.TrimSpace(req.GetSort()); field != "" {
		desc := strings.HasPrefix(field, "-")
		field = strings.TrimPrefix(field, "-")
		order := make([]int, len(docs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			c := strings.Compare(fmt.Sprint(vals[a][field]), fmt.Sprint(vals[b][field]))
			if desc {
				return -c
			}
			return c
		})
		sorted := make([]store.Document, len(docs))
		for i, j := range order {
			sorted[i] = docs[j]
		}
		docs = sorted
	}
	body, err := pagedDocs(docs, req.P)
	if err != nil {
		return nil, err
	}
	return &managementv1.SearchPoliciesResponse{Body: body}, nil
}
