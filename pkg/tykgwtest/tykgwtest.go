// Package tykgwtest is a Tyk Gateway double in dashboard mode, written from
// the protocol of Tyk Gateway v5.11.1 (restated in ../shared/reference/
// tyk-gateway-protocol.md), for tests of the management service's gateway
// routes and reload notifications. It behaves as the gateway's source does
// where a test can tell:
//
//   - it registers with GET /register/node (authorization = node secret,
//     x-tyk-hostname, x-tyk-session-id), needs 200 and Message.NodeID,
//     retries every RegisterRetry (5 s in the gateway) otherwise, and then
//     reloads everything;
//   - it beats GET /register/ping every 2 s with x-tyk-nodeid and
//     x-tyk-nonce, takes every answer's Nonce, and re-registers (and
//     reloads) on a 403;
//   - it subscribes to tyk.cluster.notifications, verifies each message's
//     signature (algorithm 5: hex SHA-256 of command + payload + node
//     secret; anything else is refused, as without public_key_path), and
//     queues a full reload for ApiAdded, ApiUpdated, ApiRemoved,
//     PolicyChanged and GroupReload; queued reloads run at the next tick of
//     a 1 s loop, several collapsing into one;
//   - a reload fetches /system/policies first and stops when that fails,
//     then /system/apis; it decodes each list as strictly as the gateway's
//     decoders (a policy `_id` or API `id` that is not null, "" or 24 hex
//     fails the whole list), skips an is_oas definition without its
//     document, and keeps what it had when a fetch fails;
//   - a 403 whose body holds "nonce" or "No node ID Found", which sends the
//     real gateway into a recovery path that can stop its reloads for good,
//     is recorded as a Pitfall;
//   - Stop de-registers with DELETE /system/node.
package tykgwtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config is what a gateway's tyk.conf says for dashboard mode.
type Config struct {
	Dashboard  string // db_app_conf_options.connection_string, e.g. http://127.0.0.1:3000
	NodeSecret string // node_secret
	Redis      string // storage host:port: where notifications arrive
	Hostname   string // what x-tyk-hostname says; default "gw-double"
	// RegisterRetry is the pause between registration attempts; the
	// gateway's is 5 s.
	RegisterRetry time.Duration
}

// API is one API definition the double loaded.
type API struct {
	Definition map[string]any  // api_definition, decoded with numbers as json.Number
	OAS        json.RawMessage // the document of an OAS API
}

// Gateway is a running double.
type Gateway struct {
	cfg     Config
	session string
	client  *http.Client
	rdb     *redis.Client
	cancel  context.CancelFunc
	done    sync.WaitGroup
	reload  chan struct{}

	mu            sync.Mutex
	nodeID, nonce string
	apis          map[string]API
	policies      map[string]map[string]any
	reloads       int
	notices       []time.Time // when each verified notification arrived
	badSignatures int
	errs          []string
	pitfalls      []string
	changed       chan struct{} // closed and replaced at every reload
}

// Start runs a double until Stop (or the test's end).
func Start(cfg Config) *Gateway {
	if cfg.Hostname == "" {
		cfg.Hostname = "gw-double"
	}
	if cfg.RegisterRetry <= 0 {
		cfg.RegisterRetry = 5 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{
		cfg: cfg, session: uuid(), client: &http.Client{Timeout: 30 * time.Second}, cancel: cancel,
		reload: make(chan struct{}, 1), nodeID: "solo-" + uuid(), changed: make(chan struct{}),
	}
	if cfg.Redis != "" {
		g.rdb = redis.NewClient(&redis.Options{Addr: cfg.Redis})
		sub := g.rdb.Subscribe(ctx, "tyk.cluster.notifications")
		sub.Receive(ctx) // the subscription is live before Start returns
		g.done.Go(func() { g.listen(ctx, sub) })
	}
	g.done.Go(func() {
		if !g.register(ctx) {
			return
		}
		g.done.Go(func() { g.beat(ctx) })
		g.reloadLoop(ctx)
	})
	return g
}

// Stop de-registers (as a gateway's graceful shutdown does) and stops.
func (g *Gateway) Stop() {
	g.cancel()
	g.done.Wait()
	if g.rdb != nil {
		g.rdb.Close()
	}
	g.call(context.Background(), http.MethodDelete, "/system/node", true)
}

func uuid() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// nodeAnswer is the gateway's NodeResponseOK.
type nodeAnswer struct {
	Status  string
	Message map[string]string
	Nonce   string
}

// call sends a request with the gateway's headers and returns status and body.
func (g *Gateway) call(ctx context.Context, method, path string, withNode bool) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, g.cfg.Dashboard+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("authorization", g.cfg.NodeSecret)
	req.Header.Set("x-tyk-hostname", g.cfg.Hostname)
	req.Header.Set("x-tyk-session-id", g.session)
	if withNode {
		g.mu.Lock()
		req.Header.Set("x-tyk-nodeid", g.nodeID)
		req.Header.Set("x-tyk-nonce", g.nonce)
		g.mu.Unlock()
	}
	res, err := g.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusForbidden && (strings.Contains(strings.ToLower(string(body)), "nonce") || strings.Contains(string(body), "No node ID Found")) {
		g.note(&g.pitfalls, fmt.Sprintf("%s %s: 403 whose body would send a real gateway into recovery: %s", method, path, body))
	}
	return res.StatusCode, body, err
}

func (g *Gateway) note(list *[]string, msg string) {
	g.mu.Lock()
	*list = append(*list, msg)
	g.mu.Unlock()
}

// register registers until it succeeds (true) or ctx ends, then reloads.
func (g *Gateway) register(ctx context.Context) bool {
	for {
		status, body, err := g.call(ctx, http.MethodGet, "/register/node", false)
		var a nodeAnswer
		if err == nil && status == http.StatusOK {
			err = json.Unmarshal(body, &a)
		}
		if err == nil && status == http.StatusOK && a.Message["NodeID"] != "" {
			g.mu.Lock()
			g.nodeID, g.nonce = a.Message["NodeID"], a.Nonce
			g.mu.Unlock()
			g.doReload(ctx)
			return true
		}
		g.note(&g.errs, fmt.Sprintf("register: %d %s %v", status, body, err))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(g.cfg.RegisterRetry):
		}
	}
}

// beat sends a heartbeat every 2 s.
func (g *Gateway) beat(ctx context.Context) {
	for {
		status, body, err := g.call(ctx, http.MethodGet, "/register/ping", true)
		switch {
		case err != nil:
		case status == http.StatusOK:
			var a nodeAnswer
			if json.Unmarshal(body, &a) == nil {
				g.mu.Lock()
				g.nonce = a.Nonce
				g.mu.Unlock()
			} else {
				g.note(&g.errs, "ping: answer not a NodeResponseOK: "+string(body))
			}
		case status == http.StatusForbidden:
			g.register(ctx)
		default:
			g.note(&g.errs, fmt.Sprintf("ping: %d %s", status, body))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

// Notification is the message a gateway decodes.
type Notification struct {
	Command   string `json:"command"`
	Payload   string `json:"payload"`
	Signature string `json:"signature"`
	Algorithm int    `json:"algorithm"`
}

// listen verifies notifications and queues reloads.
func (g *Gateway) listen(ctx context.Context, sub *redis.PubSub) {
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			var n Notification
			if json.Unmarshal([]byte(m.Payload), &n) != nil || !g.signed(n) {
				g.mu.Lock()
				g.badSignatures++
				g.mu.Unlock()
				continue
			}
			switch n.Command {
			case "ApiUpdated", "ApiAdded", "ApiRemoved", "PolicyChanged", "GroupReload":
				g.mu.Lock()
				g.notices = append(g.notices, time.Now())
				g.mu.Unlock()
				select {
				case g.reload <- struct{}{}:
				default:
				}
			}
		}
	}
}

func (g *Gateway) signed(n Notification) bool {
	if n.Algorithm != 5 {
		return false // needs public_key_path, which a double has not
	}
	return n.Signature == sign(n.Command+n.Payload+g.cfg.NodeSecret)
}

// sign is lowercase hex SHA-256.
func sign(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// reloadLoop runs queued reloads at each 1 s tick.
func (g *Gateway) reloadLoop(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case <-g.reload:
			g.doReload(ctx)
		default:
		}
	}
}

// doReload loads policies, then (only when they loaded) APIs.
func (g *Gateway) doReload(ctx context.Context) {
	pols, err := g.fetchPolicies(ctx)
	if err != nil {
		g.note(&g.errs, "policies: "+err.Error())
		return
	}
	apis, err := g.fetchAPIs(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.policies = pols
	if err != nil {
		g.errs = append(g.errs, "apis: "+err.Error())
	} else {
		g.apis = apis
	}
	g.reloads++
	close(g.changed)
	g.changed = make(chan struct{})
}

// fetch reads a /system list's Message and takes its Nonce.
func (g *Gateway) fetch(ctx context.Context, path string) (json.RawMessage, error) {
	status, body, err := g.call(ctx, http.MethodGet, path, true)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d: %s", path, status, body)
	}
	var list struct {
		Message json.RawMessage
		Nonce   string
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	g.mu.Lock()
	g.nonce = list.Nonce
	g.mu.Unlock()
	return list.Message, nil
}

// objectID checks a value as mgo's ObjectId decoder does.
func objectID(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `""` {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && len(s) == 24 {
		if _, err := hex.DecodeString(s); err == nil {
			return nil
		}
	}
	return fmt.Errorf("invalid ObjectId in JSON: %s", raw)
}

func decode(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

func (g *Gateway) fetchPolicies(ctx context.Context) (map[string]map[string]any, error) {
	msg, err := g.fetch(ctx, "/system/policies")
	if err != nil {
		return nil, err
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(msg, &list); err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for _, raw := range list {
		if err := objectID(raw["_id"]); err != nil {
			return nil, err // the whole list fails
		}
	}
	for _, raw := range list {
		var p map[string]any
		b, _ := json.Marshal(raw)
		decode(b, &p)
		id, _ := p["id"].(string)
		if id == "" {
			id, _ = p["_id"].(string)
		}
		if id == "" || out[id] != nil {
			continue // dropped, or a duplicate: later ones skipped
		}
		out[id] = p
	}
	return out, nil
}

func (g *Gateway) fetchAPIs(ctx context.Context) (map[string]API, error) {
	msg, err := g.fetch(ctx, "/system/apis")
	if err != nil {
		return nil, err
	}
	var list []struct {
		Definition json.RawMessage `json:"api_definition"`
		OAS        json.RawMessage `json:"oas"`
	}
	if err := json.Unmarshal(msg, &list); err != nil {
		return nil, err
	}
	out := map[string]API{}
	for _, item := range list {
		var ids struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(item.Definition, &ids); err != nil {
			return nil, err
		}
		if err := objectID(ids.ID); err != nil {
			return nil, err // the whole list fails
		}
	}
	for _, item := range list {
		var def map[string]any
		if err := decode(item.Definition, &def); err != nil {
			return nil, err
		}
		isOAS, _ := def["is_oas"].(bool)
		if isOAS && (len(item.OAS) == 0 || string(item.OAS) == "null") {
			g.note(&g.errs, fmt.Sprintf("skipping %v: is_oas without its document", def["api_id"]))
			continue
		}
		a := API{Definition: def}
		if isOAS {
			a.OAS = item.OAS
		}
		id, _ := def["api_id"].(string)
		out[id] = a
	}
	return out, nil
}

// APIs returns what the double loaded last, by api_id.
func (g *Gateway) APIs() map[string]API {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.apis
}

// Policies returns the policies loaded last, by policy ID.
func (g *Gateway) Policies() map[string]map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.policies
}

// NodeID is the ID the double registered with ("solo-…" before).
func (g *Gateway) NodeID() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.nodeID
}

// Stats are the double's counters.
type Stats struct {
	Reloads       int
	Notifications []time.Time
	BadSignatures int
	Errors        []string
	Pitfalls      []string
}

// Stats returns a copy of the counters.
func (g *Gateway) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Stats{Reloads: g.reloads, Notifications: append([]time.Time(nil), g.notices...), BadSignatures: g.badSignatures,
		Errors: append([]string(nil), g.errs...), Pitfalls: append([]string(nil), g.pitfalls...)}
}

// ErrTimeout is WaitFor's answer when the condition did not hold in time.
var ErrTimeout = errors.New("tykgwtest: condition not met in time")

// WaitFor waits until ok holds after a reload (checked at once too).
func (g *Gateway) WaitFor(within time.Duration, ok func(g *Gateway) bool) error {
	deadline := time.After(within)
	for {
		g.mu.Lock()
		ch := g.changed
		g.mu.Unlock()
		if ok(g) {
			return nil
		}
		select {
		case <-ch:
		case <-deadline:
			return ErrTimeout
		}
	}
}
