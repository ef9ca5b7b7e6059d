package ui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
)

// uiPageSize is the APIs page's length; the service lists 10 per page
// (listPageSize), so a UI page is five of the service's.
const (
	uiPageSize   = 50
	listPageSize = 10
)

func (u *UI) routeAPIs() {
	u.mux.HandleFunc("GET /ui/apis", u.signedIn(u.apis))
	u.mux.HandleFunc("GET /ui/apis/{id}", u.signedIn(u.api))
	u.mux.HandleFunc("GET /ui/apis/{id}/export", u.signedIn(u.export))
	u.mux.HandleFunc("POST /ui/apis/{id}/categories", u.signedIn(u.setCategories))
}

// apiRow is one API of a list.
type apiRow struct {
	ID, DBID, Name, ListenPath string
	OAS, Active                bool
	Categories                 []string
}

// listItem is what the UI reads of one item of ListAPIs.
type listItem struct {
	Def struct {
		APIID  string `json:"api_id"`
		ID     string `json:"id"`
		Name   string `json:"name"`
		Active bool   `json:"active"`
		Proxy  struct {
			ListenPath string `json:"listen_path"`
		} `json:"proxy"`
	} `json:"api_definition"`
	Categories []string `json:"categories"`
	OAS        *struct {
		X struct {
			Info struct {
				State struct {
					Active bool `json:"active"`
				} `json:"state"`
			} `json:"info"`
			Server struct {
				ListenPath struct {
					Value string `json:"value"`
				} `json:"listenPath"`
			} `json:"server"`
		} `json:"x-tyk-api-gateway"`
	} `json:"oas"`
}

func (it *listItem) row() apiRow {
	r := apiRow{ID: it.Def.APIID, DBID: it.Def.ID, Name: it.Def.Name, ListenPath: it.Def.Proxy.ListenPath, Active: it.Def.Active, Categories: it.Categories}
	if it.OAS != nil {
		r.OAS, r.Active, r.ListenPath = true, it.OAS.X.Info.State.Active, it.OAS.X.Server.ListenPath.Value
	}
	return r
}

// listAPIs reads the rows of one page (p ≥ 1) of the APIs f finds, and
// the number of pages: a service page of ListAPIs without a search, a UI
// page of SearchAPIs (page_size 50) with one.
func (u *UI) listAPIs(q *request, f apiFilter, p int64) ([]apiRow, int, error) {
	var body []byte
	if f.searches() {
		active := map[string]string{"yes": "true", "no": "false"}[f.Active]
		size := int64(uiPageSize)
		res, err := u.svc.SearchAPIs(q.ctx, &managementv1.SearchAPIsRequest{Q: f.Q, P: &p, PageSize: &size, Kind: f.Kind,
			Active: active, Category: f.Category, Fields: "name,listen_path,api_id"})
		if err != nil {
			return nil, 0, err
		}
		body = res.GetBody().GetData()
	} else {
		res, err := u.svc.ListAPIs(q.ctx, &managementv1.ListAPIsRequest{P: &p, Category: f.Category})
		if err != nil {
			return nil, 0, err
		}
		body = res.GetBody().GetData()
	}
	var list struct {
		APIs  []json.RawMessage `json:"apis"`
		Pages int               `json:"pages"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, 0, err
	}
	rows := make([]apiRow, 0, len(list.APIs))
	for _, raw := range list.APIs {
		var it listItem
		if err := json.Unmarshal(raw, &it); err != nil {
			// a classic definition of unusual types: name what can be read
			var id struct {
				Def struct {
					APIID string `json:"api_id"`
				} `json:"api_definition"`
			}
			json.Unmarshal(raw, &id)
			rows = append(rows, apiRow{ID: id.Def.APIID, Name: "(definition not readable here)"})
			continue
		}
		rows = append(rows, it.row())
	}
	return rows, list.Pages, nil
}

// apiFilter is the APIs page's query.
type apiFilter struct {
	Q, Kind, Active, Category string
	Page                      int
}

func readFilter(v url.Values) apiFilter {
	f := apiFilter{Q: strings.TrimSpace(v.Get("q")), Kind: v.Get("kind"), Active: v.Get("active"), Category: strings.TrimSpace(v.Get("category"))}
	f.Page, _ = strconv.Atoi(v.Get("p"))
	f.Page = max(f.Page, 1)
	if f.Kind != "classic" && f.Kind != "oas" {
		f.Kind = ""
	}
	if f.Active != "yes" && f.Active != "no" {
		f.Active = ""
	}
	return f
}

// searches says whether the filter is a search (SearchAPIs) rather than a
// list, which filters by category only.
func (f apiFilter) searches() bool { return f.Q != "" || f.Kind != "" || f.Active != "" }

// query is the filter as a URL query for page p.
func (f apiFilter) query(p int) string {
	v := url.Values{}
	for k, s := range map[string]string{"q": f.Q, "kind": f.Kind, "active": f.Active, "category": f.Category} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if p > 1 {
		v.Set("p", strconv.Itoa(p))
	}
	return v.Encode()
}

// findAPIs is one UI page of the APIs matching f, and the number of
// pages. A search (q in any case against the name, listen path, API ID
// and db id, or a kind or state filter) is one SearchAPIs page of 50: the
// service decides from each record's header and reads a document's listen
// path or state only when it must, so no search reads every definition.
// Without one, the page is five of ListAPIs' (fewer when one comes back
// short).
func (u *UI) findAPIs(q *request, f apiFilter) ([]apiRow, int, error) {
	if f.searches() {
		return u.listAPIs(q, f, int64(f.Page))
	}
	per := int64(uiPageSize / listPageSize)
	var rows []apiRow
	pages := 0
	for i := range per {
		got, n, err := u.listAPIs(q, f, int64(f.Page-1)*per+i+1)
		if err != nil {
			return nil, 0, err
		}
		rows = append(rows, got...)
		pages = (n + int(per) - 1) / int(per)
		if len(got) < listPageSize {
			break
		}
	}
	return rows, pages, nil
}

type apisData struct {
	Filter     apiFilter
	Rows       []apiRow
	Pages      int
	Prev, Next string // links, "" when none
	Categories []string
}

func (u *UI) apis(w http.ResponseWriter, r *http.Request, q *request) {
	f := readFilter(r.URL.Query())
	rows, pages, err := u.findAPIs(q, f)
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	d := apisData{Filter: f, Rows: rows, Pages: max(pages, 1)}
	if f.Page > 1 {
		d.Prev = "/ui/apis?" + f.query(f.Page-1)
	}
	if f.Page < pages {
		d.Next = "/ui/apis?" + f.query(f.Page+1)
	}
	if cats, err := u.svc.ListCategories(q.ctx, &managementv1.ListCategoriesRequest{}); err == nil {
		for _, c := range cats.GetCategories() {
			d.Categories = append(d.Categories, c.GetName())
		}
	}
	u.render(w, r, http.StatusOK, "apis", q, page{Title: "APIs", Nav: "apis", Data: d})
}

type apiData struct {
	Row        apiRow
	JSON, YAML string
	Categories []string
	Errors     []string // of a refused categories change
}

// api shows one API's definition (the Tyk OAS document for an OAS API) as
// JSON and YAML.
func (u *UI) api(w http.ResponseWriter, r *http.Request, q *request) {
	res, err := u.svc.GetAPI(q.ctx, &managementv1.GetAPIRequest{ApiId: r.PathValue("id")})
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	var it listItem
	var doc struct {
		Def json.RawMessage `json:"api_definition"`
		OAS json.RawMessage `json:"oas"`
	}
	body := res.GetBody().GetData()
	json.Unmarshal(body, &it)
	if err := json.Unmarshal(body, &doc); err != nil {
		u.fail(w, r, q, err)
		return
	}
	src := doc.Def
	if doc.OAS != nil {
		src = doc.OAS
	}
	d := apiData{Row: it.row(), JSON: indent(src)}
	if y, err := oasdoc.JSONToYAML(src); err == nil {
		d.YAML = string(y)
	}
	if d.Row.OAS {
		if c, err := u.svc.GetAPICategories(q.ctx, &managementv1.GetAPICategoriesRequest{ApiId: d.Row.ID}); err == nil {
			d.Categories = c.GetCategories()
		}
	} else {
		d.Categories = d.Row.Categories
	}
	code := http.StatusOK
	if r.Method == http.MethodPost { // a refused categories change, shown on the page
		code, d.Errors = httpStatus(statusOf(q.refused)), messages(q.refused)
	}
	u.render(w, r, code, "api", q, page{Title: d.Row.Name, Nav: "apis", Data: d})
}

// setCategories replaces a Tyk OAS API's categories (the form's text,
// split at commas and spaces) with UpdateAPICategories.
func (u *UI) setCategories(w http.ResponseWriter, r *http.Request, q *request) {
	id := r.PathValue("id")
	cats := strings.FieldsFunc(r.PostForm.Get("categories"), func(c rune) bool { return c == ',' || c == ' ' || c == '\t' })
	_, err := u.svc.UpdateAPICategories(q.ctx, &managementv1.UpdateAPICategoriesRequest{ApiId: id, Categories: cats})
	if err != nil {
		if code := httpStatus(statusOf(err)); code != http.StatusBadRequest {
			u.fail(w, r, q, err)
			return
		}
		q.refused = err
		u.api(w, r, q)
		return
	}
	http.Redirect(w, r, "/ui/apis/"+pathEscape(id), http.StatusSeeOther)
}

func indent(b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

// export answers ExportOASAPI's file: format=yaml for YAML, public=1 for
// the document without x-tyk-api-gateway.
func (u *UI) export(w http.ResponseWriter, r *http.Request, q *request) {
	req := &managementv1.ExportOASAPIRequest{ApiId: r.PathValue("id"), ContentType: "application/json"}
	if r.URL.Query().Get("format") == "yaml" {
		req.ContentType = "application/x-yaml"
	}
	if r.URL.Query().Get("public") == "1" {
		req.Mode = "public"
	}
	res, err := u.svc.ExportOASAPI(q.ctx, req)
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFilename(res.GetFilename())+`"`)
	w.Write(res.GetFile().GetData())
}

func safeFilename(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, s)
}
