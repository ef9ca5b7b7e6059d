package ui

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

// maxMigrate bounds the APIs of one migration from the UI, and maxDiffs
// those shown side by side after a dry run (each is a GetAPI and two
// documents on the page); the rest show their outcome only.
const (
	maxMigrate = 1000
	maxDiffs   = 100
)

// modes are the migration's modes (CONTRACT §2); every one but dryRun
// writes, and promote and direct replace classic APIs.
var modes = map[string]string{
	"dryRun":  "Dry run",
	"stage":   "Stage",
	"promote": "Promote",
	"direct":  "Migrate directly",
}

func (u *UI) routeMigrate() {
	u.mux.HandleFunc("GET /ui/migrate", u.signedIn(u.pickMigrate))
	u.mux.HandleFunc("POST /ui/migrate", u.signedIn(u.migrate))
}

type pickData struct {
	Filter     apiFilter
	Rows       []apiRow
	Pages      int
	Prev, Next string
}

// pickMigrate lists classic APIs to choose from.
func (u *UI) pickMigrate(w http.ResponseWriter, r *http.Request, q *request) {
	f := readFilter(r.URL.Query())
	f.Kind = "classic"
	rows, pages, err := u.findAPIs(q, f)
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	d := pickData{Filter: f, Rows: rows, Pages: max(pages, 1)}
	f.Kind = "" // the page's own filter
	if f.Page > 1 {
		d.Prev = "/ui/migrate?" + f.query(f.Page-1)
	}
	if f.Page < pages {
		d.Next = "/ui/migrate?" + f.query(f.Page+1)
	}
	u.render(w, r, http.StatusOK, "migrate", q, page{Title: "Migrate to Tyk OAS", Nav: "migrate", Data: d})
}

// report is the migration report as the UI reads it.
type report struct {
	Success struct {
		Count      int      `json:"count"`
		APIIDs     []string `json:"apiIDs"`
		StagedAPIs []struct {
			ClassicAPIID string `json:"classicAPIID"`
			OASAPIID     string `json:"oasAPIID"`
		} `json:"stagedAPIs"`
		Definitions []struct {
			APIID    string            `json:"apiID"`
			BaseAPI  json.RawMessage   `json:"baseAPI"`
			Versions []json.RawMessage `json:"versions"`
		} `json:"definitions"`
		Warnings []messagesOf `json:"warnings"`
	} `json:"success"`
	Failure struct {
		Count  int          `json:"count"`
		Errors []messagesOf `json:"errors"`
	} `json:"failure"`
	Skipped struct {
		Count int `json:"count"`
		APIs  []struct {
			APIID   string `json:"apiID"`
			Message string `json:"message"`
			Key     string `json:"key"`
		} `json:"apis"`
	} `json:"skipped"`
	Aborted bool `json:"abortedOnFailure"`
}

type messagesOf struct {
	APIID   string   `json:"apiID"`
	Message []string `json:"message"`
}

// apiResult is one API of a report: its outcome and, after a dry run,
// the classic definition beside its Tyk OAS documents.
type apiResult struct {
	ID       string
	Outcome  string // migrated, failed, skipped
	Warnings []string
	Failures []string
	Skipped  string
	StagedAs string
	Diff     *diff
	Versions int
}

type reportData struct {
	Mode, ModeName string
	DryRun         bool
	IDs            []string
	Results        []apiResult
	Report         *report
	Modes          []modeChoice
}

type modeChoice struct{ Value, Name string }

// migrate runs the chosen mode over the chosen APIs (apiIDs, repeated) and
// shows the report: after a dry run, each API's classic definition and
// converted document side by side, and the writing modes to choose from,
// each confirmed.
func (u *UI) migrate(w http.ResponseWriter, r *http.Request, q *request) {
	ids := slices.Compact(r.PostForm["apiIDs"])
	mode := r.PostForm.Get("mode")
	if _, ok := modes[mode]; !ok {
		u.render(w, r, http.StatusBadRequest, "error", q, page{Title: "Migrate", Nav: "migrate", Error: "Choose a mode: dry run, stage, promote or direct."})
		return
	}
	if len(ids) > maxMigrate {
		u.render(w, r, http.StatusBadRequest, "error", q, page{Title: "Migrate", Nav: "migrate",
			Error: "Choose at most " + strconv.Itoa(maxMigrate) + " APIs at a time; POST /api/apis/migrate with all:true migrates every classic API."})
		return
	}
	if len(ids) == 0 {
		u.render(w, r, http.StatusBadRequest, "error", q, page{Title: "Migrate", Nav: "migrate", Error: "Choose at least one API."})
		return
	}
	if mode != "dryRun" && r.PostForm.Get("confirm") != "yes" {
		u.render(w, r, http.StatusBadRequest, "error", q, page{Title: "Migrate", Nav: "migrate",
			Error: "Confirm the migration (tick the box) before running " + modes[mode] + "."})
		return
	}
	res, err := u.svc.Migrate(q.ctx, &managementv1.MigrateRequest{Mode: mode, ApiIds: ids})
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	var rep report
	if err := json.Unmarshal(res.GetReport().GetData(), &rep); err != nil {
		u.fail(w, r, q, err)
		return
	}
	d := reportData{Mode: mode, ModeName: modes[mode], DryRun: mode == "dryRun", IDs: ids, Report: &rep, Results: u.results(q, &rep, ids, mode == "dryRun")}
	for _, m := range []string{"stage", "promote", "direct"} {
		d.Modes = append(d.Modes, modeChoice{m, modes[m]})
	}
	u.render(w, r, http.StatusOK, "report", q, page{Title: "Migration: " + modes[mode], Nav: "migrate", Data: d})
}

// results orders the report by the IDs asked for; after a dry run each
// migrated API gets its classic definition (GetAPI, as the user) and its
// converted base document compared.
func (u *UI) results(q *request, rep *report, ids []string, dryRun bool) []apiResult {
	byID := map[string]*apiResult{}
	var out []*apiResult
	get := func(id string) *apiResult {
		if r := byID[id]; r != nil {
			return r
		}
		r := &apiResult{ID: id}
		byID[id] = r
		out = append(out, r)
		return r
	}
	for _, id := range ids {
		get(id)
	}
	for _, id := range rep.Success.APIIDs {
		get(id).Outcome = "migrated"
	}
	for _, m := range rep.Success.Warnings {
		get(m.APIID).Warnings = m.Message
	}
	for _, s := range rep.Success.StagedAPIs {
		get(s.ClassicAPIID).StagedAs = s.OASAPIID
	}
	for _, m := range rep.Failure.Errors {
		r := get(m.APIID)
		r.Outcome, r.Failures = "failed", m.Message
	}
	for _, s := range rep.Skipped.APIs {
		r := get(s.APIID)
		r.Outcome, r.Skipped = "skipped", s.Message
	}
	if dryRun {
		for i, d := range rep.Success.Definitions {
			r := get(d.APIID)
			r.Versions = len(d.Versions)
			if i >= maxDiffs {
				continue
			}
			classic, err := u.svc.GetAPI(q.ctx, &managementv1.GetAPIRequest{ApiId: d.APIID})
			if err != nil {
				continue
			}
			var def struct {
				Def json.RawMessage `json:"api_definition"`
			}
			if json.Unmarshal(classic.GetBody().GetData(), &def) == nil {
				r.Diff = compare(def.Def, d.BaseAPI)
			}
		}
	}
	res := make([]apiResult, 0, len(out))
	for _, r := range out {
		if r.Outcome == "" {
			r.Outcome = "not in the report"
		}
		res = append(res, *r)
	}
	return res
}
