package api

import (
	"context"
	"strconv"
	"strings"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// maxSearchPage bounds a search's page_size: a page's definitions are
// held whole.
const maxSearchPage = 100

// SearchAPIs answers GET /api/apis/search, the Dashboard's searchApis: the
// APIs whose name holds q, in ListAPIs' pages and item shape. kind,
// active, category and fields are management's own filters (its UI's
// APIs page searches with them), and page_size, which lets the UI read its
// page of 50 in one scan. The store reads each record's header;
// only an API that the header cannot decide has its document read (for
// its listen path or state), and only the page's matches are copied.
func (s *Server) SearchAPIs(ctx context.Context, req *managementv1.SearchAPIsRequest) (*managementv1.SearchAPIsResponse, error) {
	size := pageSize
	if req.PageSize != nil {
		if n := req.GetPageSize(); n < 1 || n > maxSearchPage {
			return nil, badRequest("page_size must be 1 to " + strconv.Itoa(maxSearchPage))
		}
		size = int(req.GetPageSize())
	}
	offset, limit, err := pagingBy(req.P, size)
	if err != nil {
		return nil, err
	}
	m, err := readAPISearch(req)
	if err != nil {
		return nil, err
	}
	cats := commaSet(req.GetCategory())
	if limit < 0 && s.streamAPIs(ctx, size, func(tx *store.Tx, item func(store.API) error) (int, error) {
		return tx.EachFound(cats, m.match, 0, -1, item)
	}) {
		return &managementv1.SearchAPIsResponse{}, nil
	}
	apis, total, err := s.store.SearchAPIs(ctx, cats, m.match, offset, limit)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.SearchAPIsResponse{Body: apiPage(apis, total, size)}, nil
}

// apiSearch is what an API must match.
type apiSearch struct {
	q      string     // lower case; "" matches every API
	kind   store.Kind // 0: either
	active *bool      // nil: either
	// what q is matched against
	name, listenPath, id bool
}

// readAPISearch reads a search's parameters; a value not listed is 400.
func readAPISearch(req *managementv1.SearchAPIsRequest) (apiSearch, error) {
	m := apiSearch{q: strings.ToLower(strings.TrimSpace(req.GetQ()))}
	switch req.GetKind() {
	case "":
	case "classic":
		m.kind = store.Classic
	case "oas":
		m.kind = store.OAS
	default:
		return m, badRequest("kind must be classic or oas")
	}
	switch req.GetActive() {
	case "":
	case "true", "false":
		active := req.GetActive() == "true"
		m.active = &active
	default:
		return m, badRequest("active must be true or false")
	}
	fields := commaSet(req.GetFields())
	if len(fields) == 0 {
		fields = []string{"name"}
	}
	for _, f := range fields {
		switch f {
		case "name":
			m.name = true
		case "listen_path":
			m.listenPath = true
		case "api_id":
			m.id = true
		default:
			return m, badRequest("fields must list name, listen_path or api_id")
		}
	}
	return m, nil
}

// match decides from the record's header (kind, name, IDs) first and reads
// a.Doc only for what the header does not hold: the listen path, when q
// matched nothing else, and the state.
func (m apiSearch) match(a store.API) bool {
	if m.kind != 0 && a.Kind != m.kind {
		return false
	}
	if m.q != "" && !(m.name && holds(a.Name, m.q) ||
		m.id && (holds(a.ID, m.q) || holds(a.DBID, m.q)) ||
		m.listenPath && holds(listenPath(a), m.q)) {
		return false
	}
	return m.active == nil || isActiveAPI(a) == *m.active
}

// holds reports whether s holds the lower-case q in any case.
func holds(s, q string) bool { return strings.Contains(strings.ToLower(s), q) }

// listenPath reads an API's listen path from its document: classic
// proxy.listen_path, OAS x-tyk-api-gateway.server.listenPath.value.
func listenPath(a store.API) string {
	path := []string{"proxy", "listen_path"}
	if a.Kind == store.OAS {
		path = []string{"x-tyk-api-gateway", "server", "listenPath", "value"}
	}
	raw, _, _ := rawjson.Lookup(a.Doc, path...)
	s, _ := rawjson.String(raw)
	return s
}

// isActiveAPI reads whether a gateway loads the API as active: classic
// active, OAS x-tyk-api-gateway.info.state.active, each only when true.
func isActiveAPI(a store.API) bool {
	path := []string{"active"}
	if a.Kind == store.OAS {
		path = []string{"x-tyk-api-gateway", "info", "state", "active"}
	}
	raw, _, _ := rawjson.Lookup(a.Doc, path...)
	return string(raw) == "true"
}
