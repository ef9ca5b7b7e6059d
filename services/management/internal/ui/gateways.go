package ui

import (
	"net/http"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

func (u *UI) routeGateways() {
	u.mux.HandleFunc("GET /ui/gateways", u.signedIn(u.gateways))
}

// gateways lists the registered Tyk Gateway nodes and their last heartbeat.
func (u *UI) gateways(w http.ResponseWriter, r *http.Request, q *request) {
	res, err := u.svc.ListNodes(q.ctx, &managementv1.ListNodesRequest{})
	if err != nil {
		u.fail(w, r, q, err)
		return
	}
	u.render(w, r, http.StatusOK, "gateways", q, page{Title: "Gateways", Nav: "gateways", Data: res.GetNodes()})
}
