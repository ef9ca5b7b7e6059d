// Package gateways lets real Tyk Gateways (v5, dashboard mode) run from the
// management service as they run from a Tyk Dashboard (CONTRACT §6): the
// routes they call with the node secret — register, heartbeat, de-register,
// /system/apis and /system/policies — and the reload notifications
// published on their Redis after every committed change to APIs or
// policies (notify.go).
//
// The routes speak the gateway's protocol, not the management API's: they
// are plain HTTP handlers (restfacade.Route) beside the REST facade, each
// checking the secret before it looks at anything else and reading no
// body. Two rules of the gateway's client shape every answer: a 403 whose
// body holds "nonce" or "No node ID Found" sends a gateway into a recovery
// path that can stop its reloads for good, so no answer holds them; and one
// malformed `_id` or `id` fails a gateway's whole list, so every policy and
// API definition sent carries a 24-hex db id (the store's rule).
package gateways

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Timing of node records: a gateway beats every Heartbeat; it is written
// to the store at most every HeartbeatWrite per node and replica, a node
// counts as live for LiveFor, and one that missed 10 heartbeats
// (PruneAfter, twice HeartbeatWrite so a live node is never pruned) is
// removed by the pruning every PruneEvery (Server.Prune); a gateway that
// beats again afterwards is recorded again.
const (
	Heartbeat      = 2 * time.Second
	HeartbeatWrite = 10 * time.Second
	LiveFor        = time.Minute
	PruneAfter     = 10 * Heartbeat
	PruneEvery     = 10 * time.Second
)

// Options configure the gateway routes.
type Options struct {
	Secret string       // the node secret; gateways send it as authorization
	Store  *store.Store // APIs, policies and node records
	// Records is the maker of the store's API records: while it derives
	// nothing, Tyk OAS APIs are left out of /system/apis (a gateway cannot
	// load them without their classic definition). The definitions it keeps
	// with each record are streamed as stored; Rederive brings records
	// written otherwise up to date.
	Records *apirecord.Maker
	// Audit, when set, records every registration and de-registration
	// (user "gateway", the node's id as object).
	Audit *audit.Log
	Log   *slog.Logger
}

// Server serves the gateway routes.
type Server struct {
	secret  [sha256.Size]byte
	store   *store.Store
	records *apirecord.Maker
	audit   *audit.Log
	log     *slog.Logger
	wrong   wrongSecrets

	mu      sync.Mutex
	written map[string]time.Time // node → last heartbeat this replica wrote

	typedMu sync.Mutex
	typed   map[string]uint64 // API ID → the revision found decodable (typedAPI)
}

// New returns the routes' server and makes gatehouse_gateway_nodes count
// its store's live nodes. Call it before the store is used.
func New(o Options) *Server {
	if o.Records == nil {
		o.Records = &apirecord.Maker{} // derives nothing
	}
	s := &Server{secret: sha256.Sum256([]byte(o.Secret)), store: o.Store, records: o.Records, audit: o.Audit, log: o.Log.With("component", "gateways"), written: map[string]time.Time{}, typed: map[string]uint64{}}
	metrics.GatewayNodes(s.liveNodes)
	return s
}

// Rederive makes every OAS API record keep the definition this build
// derives (records written by another build, or before records kept one),
// logging how many it rewrote; run it once, in the background, at start.
func (s *Server) Rederive(ctx context.Context) {
	if !s.records.Derives() {
		return
	}
	start := time.Now()
	n, err := s.records.Rederive(ctx, s.store)
	if err != nil {
		s.log.Warn("derived definitions not all brought up to date; /system/apis derives the rest", "rewritten", n, "err", err)
		return
	}
	if n > 0 {
		s.log.Info("derived definitions brought up to date", "rewritten", n, "took", time.Since(start).Round(time.Millisecond))
	}
}

// Paths are the gateway routes' paths (the route label of their metrics).
var Paths = []string{"/register/node", "/register/ping", "/system/node", "/system/apis", "/system/policies"}

// Routes are the gateway routes for the REST facade (restfacade.Options.Plain).
func (s *Server) Routes() []restfacade.PlainRoute {
	return []restfacade.PlainRoute{
		{Method: http.MethodGet, Path: Paths[0], Handler: s.guard(s.register)},
		{Method: http.MethodGet, Path: Paths[1], Handler: s.guard(s.ping)},
		{Method: http.MethodDelete, Path: Paths[2], Handler: s.guard(s.deregister)},
		{Method: http.MethodGet, Path: Paths[3], Handler: s.guard(s.apis)},
		{Method: http.MethodGet, Path: Paths[4], Handler: s.guard(s.policies)},
	}
}

// denied is the answer to a wrong secret. It must never contain "nonce" or
// "No node ID Found" (see the package comment).
const denied = `{"Status":"Error","Message":"Authorization failed: the node secret does not match","Meta":null}`

// guard checks the node secret (constant time, over hashes so that its
// length leaks nothing) before the handler runs. A wrong secret is counted
// (gatehouse_auth_failures_total) and, past a few from one address, answered
// only after a delay (wrongSecrets), so guessing goes at a few tries a
// second per connection, not thousands.
func (s *Server) guard(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vals := r.Header.Values("Authorization")
		var given [sha256.Size]byte
		if len(vals) == 1 {
			given = sha256.Sum256([]byte(vals[0]))
		}
		if len(vals) != 1 || subtle.ConstantTimeCompare(given[:], s.secret[:]) != 1 {
			metrics.CountAuthFailure(Service)
			if d := s.wrong.add(addrOf(r), time.Now()); d > 0 {
				select {
				case <-time.After(d):
				case <-r.Context().Done():
				}
			}
			writeJSON(w, http.StatusForbidden, []byte(denied))
			return
		}
		h(w, r)
	})
}

// Service names management in the metrics the gateway routes count.
const Service = "management"

// addrOf is the host of the request's remote address.
func addrOf(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// audited serves a registration or de-registration of node id (serve
// returns the answer's status) and records it in the audit log.
func (s *Server) audited(r *http.Request, id string, serve func() int) {
	if s.audit == nil {
		serve()
		return
	}
	done, err := s.audit.Sensitive(r, func(req *http.Request) error {
		auditctx.SetCaller(req.Context(), "gateway", "")
		auditctx.SetObject(req.Context(), id)
		return nil
	})
	if err != nil {
		serve()
		return
	}
	done(serve())
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// nonce is a fresh random nonce; every answer carries one. Nonces are not
// enforced: a gateway's heartbeats, liveness pings and reload fetches share
// one value concurrently, so strict single use would race.
func nonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// header reads a header a gateway sends, bounded and valid UTF-8 ("" otherwise).
func header(r *http.Request, name string) string {
	v := r.Header.Get(name)
	if len(v) > 255 || !utf8.ValidString(v) {
		return ""
	}
	return v
}

// nodeID is the ID a gateway process gets: derived from its session id (one
// random UUID per gateway process), so that a re-registration of the same
// process keeps its ID, on any replica.
func nodeID(session string) string {
	if session == "" {
		session = nonce()
	}
	sum := sha256.Sum256([]byte("gatehouse-node\x00" + session))
	return hex.EncodeToString(sum[:12])
}

// validNodeID tells IDs this service hands out from anything else a
// gateway may send (such as its "solo-<uuid>" before registration).
func validNodeID(id string) bool {
	if len(id) != 24 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func nodeAnswer(msg string) []byte {
	return []byte(`{"Status":"ok","Message":` + msg + `,"Nonce":"` + nonce() + `"}`)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	id := nodeID(header(r, "X-Tyk-Session-Id"))
	s.audited(r, id, func() int {
		now := time.Now()
		n := store.Node{ID: id, Hostname: header(r, "X-Tyk-Hostname"), LastSeen: now}
		if err := s.store.SeenNode(r.Context(), n); err != nil {
			// A gateway retries registration every 5 s; a 503 is what it should see.
			msg := "store unavailable"
			if errors.Is(err, store.ErrTooManyNodes) {
				msg = fmt.Sprintf("too many gateway nodes: %d are registered", store.MaxNodes)
			}
			s.log.Warn("gateway registration not stored", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, []byte(`{"Status":"Error","Message":"`+msg+`","Meta":null}`))
			return http.StatusServiceUnavailable
		}
		s.wrote(id, now)
		writeJSON(w, http.StatusOK, nodeAnswer(`{"NodeID":"`+id+`"}`))
		return http.StatusOK
	})
}

// ping answers a heartbeat. It is written to the store at most every
// HeartbeatWrite per node; a store that does not answer costs the gateway
// nothing (it keeps serving what it has either way).
func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	id := header(r, "X-Tyk-Nodeid")
	now := time.Now()
	if validNodeID(id) && s.due(id, now) {
		n := store.Node{ID: id, Hostname: header(r, "X-Tyk-Hostname"), LastSeen: now}
		if err := s.store.SeenNode(r.Context(), n); err != nil {
			s.log.Warn("gateway heartbeat not stored", "err", err)
		} else {
			s.wrote(id, now)
		}
	}
	writeJSON(w, http.StatusOK, nodeAnswer(`{}`))
}

func (s *Server) deregister(w http.ResponseWriter, r *http.Request) {
	id := header(r, "X-Tyk-Nodeid")
	if !validNodeID(id) {
		writeJSON(w, http.StatusOK, nodeAnswer(`{}`))
		return
	}
	s.audited(r, id, func() int {
		if err := s.store.DeleteNode(r.Context(), id); err != nil {
			s.log.Warn("gateway de-registration not stored", "err", err)
		}
		s.mu.Lock()
		delete(s.written, id)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, nodeAnswer(`{}`))
		return http.StatusOK
	})
}

// due reports whether a heartbeat of node id should be written now.
func (s *Server) due(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.written[id]
	return !ok || now.Sub(last) >= HeartbeatWrite
}

// wrote remembers a heartbeat written; the memory is bounded (a full map
// is cleared, which costs one more write per node).
func (s *Server) wrote(id string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.written) >= 10000 {
		clear(s.written)
	}
	s.written[id] = now
}

// Prune removes, every PruneEvery until ctx ends, the records of nodes
// that missed 10 heartbeats (PruneAfter).
func (s *Server) Prune(ctx context.Context) {
	t := time.NewTicker(PruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if n, err := s.store.PruneNodes(ctx, now.Add(-PruneAfter)); err != nil {
				s.log.Warn("stale gateway nodes not pruned", "err", err)
			} else if n > 0 {
				s.log.Info("stale gateway nodes pruned", "nodes", n)
			}
		}
	}
}

// liveNodes counts the nodes seen in the last minute, for the gauge.
func (s *Server) liveNodes() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	nodes, err := s.store.Nodes(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, node := range nodes {
		if time.Since(node.LastSeen) <= LiveFor {
			n++
		}
	}
	return float64(n)
}
