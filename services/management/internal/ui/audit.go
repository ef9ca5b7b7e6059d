package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

func (u *UI) routeAudit() {
	u.mux.HandleFunc("GET /ui/audit", u.signedIn(u.audit))
}

type auditData struct {
	UserID, Action, From, To string
	Logs                     []*managementv1.AuditLogEntry
	Page, Pages              int
	Prev, Next               string
	Error                    string
}

// audit lists the audit log, filtered by user, action and time (the
// service's own filters and their messages).
func (u *UI) audit(w http.ResponseWriter, r *http.Request, q *request) {
	v := r.URL.Query()
	d := auditData{UserID: strings.TrimSpace(v.Get("user_id")), Action: strings.TrimSpace(v.Get("action")),
		From: strings.TrimSpace(v.Get("from")), To: strings.TrimSpace(v.Get("to"))}
	p, _ := strconv.ParseInt(v.Get("p"), 10, 64)
	p = max(p, 1)
	d.Page = int(p)
	res, err := u.svc.ListAuditLogs(q.ctx, &managementv1.ListAuditLogsRequest{P: &p, UserId: d.UserID, Action: d.Action, From: d.From, To: d.To})
	if err != nil {
		if code := httpStatus(statusOf(err)); code != http.StatusBadRequest {
			u.fail(w, r, q, err)
			return
		}
		d.Error = strings.Join(messages(err), "; ")
		u.render(w, r, http.StatusBadRequest, "audit", q, page{Title: "Audit log", Nav: "audit", Data: d})
		return
	}
	d.Logs, d.Pages = res.GetLogs(), max(int(res.GetPages()), 1)
	link := func(p int) string {
		x := url.Values{}
		for k, s := range map[string]string{"user_id": d.UserID, "action": d.Action, "from": d.From, "to": d.To} {
			if s != "" {
				x.Set(k, s)
			}
		}
		x.Set("p", strconv.Itoa(p))
		return "/ui/audit?" + x.Encode()
	}
	if d.Page > 1 {
		d.Prev = link(d.Page - 1)
	}
	if d.Page < d.Pages {
		d.Next = link(d.Page + 1)
	}
	u.render(w, r, http.StatusOK, "audit", q, page{Title: "Audit log", Nav: "audit", Data: d})
}
