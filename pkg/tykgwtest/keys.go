package tykgwtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/TykTechnologies/murmur3"
)

// KeyAPI is the key routes of a Tyk Gateway's own API, as Tyk Gateway
// v5.11.1 serves them (gateway/api.go keyHandler) with hash_keys on and the
// default hash_key_function (legacy keys: the org id and 32 hex digits;
// hashed with the gateways' murmur32):
//
//   - every call needs x-tyk-authorization = the gateway's secret, else
//     403 {"status":"error","message":"Attempted administrative access with invalid or missing key!"};
//   - POST /tyk/keys (and /tyk/keys/create) generates a key, POST
//     /tyk/keys/{key} takes that key (prefixed with the session's org_id
//     unless it starts with it); both answer 200
//     {"key","status":"ok","action":"added","key_hash"}, a body that is not
//     a session 400 "Request malformed";
//   - GET, PUT and DELETE /tyk/keys/{key} name the key, or with ?hashed=
//     (any value) its hash; an unknown one answers 404 ("Key not found",
//     "Key is not found", "There is no such key found").
//
// Sessions are kept as sent. Down makes every call fail at the connection
// (a gateway that is not reachable).
type KeyAPI struct {
	URL    string
	secret string
	srv    *http.Server
	ln     net.Listener

	mu       sync.Mutex
	sessions map[string][]byte // by hash
	calls    []string          // "METHOD path" of each authorized call
	down     bool
}

// StartKeyAPI serves the key routes on 127.0.0.1 (a port the OS picks)
// until Close.
func StartKeyAPI(secret string) (*KeyAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	k := &KeyAPI{URL: "http://" + ln.Addr().String(), secret: secret, ln: ln, sessions: map[string][]byte{}}
	k.srv = &http.Server{Handler: http.HandlerFunc(k.serve)}
	go k.srv.Serve(ln)
	return k, nil
}

// Close stops serving.
func (k *KeyAPI) Close() { k.srv.Close() }

// Down makes every later call fail (true) or be served again (false).
func (k *KeyAPI) Down(down bool) {
	k.mu.Lock()
	k.down = down
	k.mu.Unlock()
}

// Session returns the session kept for the key with that hash.
func (k *KeyAPI) Session(hash string) ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.sessions[hash]
	return s, ok
}

// Len is how many keys the double holds.
func (k *KeyAPI) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.sessions)
}

// Calls lists the authorized calls so far ("METHOD /tyk/keys/..." with
// the query), for tests that check which route management used.
func (k *KeyAPI) Calls() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.calls...)
}

// Accepts reports whether a request with key would be let through to
// apiID: the key exists, is not inactive and its access_rights name the
// API or it applies a policy (policies are the gateway's business; the
// double trusts them).
func (k *KeyAPI) Accepts(key, apiID string) bool {
	s, ok := k.Session(KeyHash(key))
	if !ok {
		return false
	}
	var sess struct {
		AccessRights  map[string]json.RawMessage `json:"access_rights"`
		ApplyPolicies []string                   `json:"apply_policies"`
		IsInactive    bool                       `json:"is_inactive"`
	}
	if json.Unmarshal(s, &sess) != nil || sess.IsInactive {
		return false
	}
	_, direct := sess.AccessRights[apiID]
	return direct || len(sess.ApplyPolicies) > 0
}

func (k *KeyAPI) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	down := k.down
	k.mu.Unlock()
	if down {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
		return
	}
	if r.Header.Get("x-tyk-authorization") != k.secret {
		answer(w, http.StatusForbidden, apiError("Attempted administrative access with invalid or missing key!"))
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/tyk/keys")
	if !ok || (name != "" && !strings.HasPrefix(name, "/")) || strings.Count(name, "/") > 1 {
		answer(w, http.StatusNotFound, apiError("Not Found"))
		return
	}
	name = strings.TrimPrefix(name, "/")
	k.mu.Lock()
	k.calls = append(k.calls, r.Method+" "+r.URL.RequestURI())
	k.mu.Unlock()
	hashed := r.URL.Query().Get("hashed") != ""
	switch {
	case r.Method == http.MethodPost && (name == "" || name == "create"):
		k.add(w, r, "")
	case r.Method == http.MethodPost:
		k.add(w, r, name)
	case name == "" || name == "create" || name == "preview":
		answer(w, http.StatusMethodNotAllowed, apiError("Method not allowed"))
	case r.Method == http.MethodGet:
		k.mu.Lock()
		s, found := k.sessions[hashOf(name, hashed)]
		k.mu.Unlock()
		if !found {
			answer(w, http.StatusNotFound, apiError("Key not found"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(s)
	case r.Method == http.MethodPut:
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !isSession(body) {
			answer(w, http.StatusBadRequest, apiError("Request malformed"))
			return
		}
		h := hashOf(name, hashed)
		k.mu.Lock()
		_, found := k.sessions[h]
		if found {
			k.sessions[h] = body
		}
		k.mu.Unlock()
		if !found {
			answer(w, http.StatusNotFound, apiError("Key is not found"))
			return
		}
		answer(w, http.StatusOK, map[string]string{"key": name, "status": "ok", "action": "modified"})
	case r.Method == http.MethodDelete:
		h := hashOf(name, hashed)
		k.mu.Lock()
		_, found := k.sessions[h]
		delete(k.sessions, h)
		k.mu.Unlock()
		if !found {
			answer(w, http.StatusNotFound, apiError("There is no such key found"))
			return
		}
		answer(w, http.StatusOK, map[string]string{"key": name, "status": "ok", "action": "deleted"})
	default:
		answer(w, http.StatusMethodNotAllowed, apiError("Method not allowed"))
	}
}

// add creates a key: generated when custom is "", else custom in the
// legacy format (org id prefix).
func (k *KeyAPI) add(w http.ResponseWriter, r *http.Request, custom string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var sess struct {
		OrgID string `json:"org_id"`
	}
	if err != nil || !isSession(body) || json.Unmarshal(body, &sess) != nil {
		answer(w, http.StatusBadRequest, apiError("Request malformed"))
		return
	}
	key := custom
	if key == "" {
		key = strings.ReplaceAll(uuid(), "-", "")
	}
	key = sess.OrgID + strings.TrimPrefix(key, sess.OrgID)
	h := KeyHash(key)
	k.mu.Lock()
	k.sessions[h] = body
	k.mu.Unlock()
	answer(w, http.StatusOK, map[string]string{"key": key, "status": "ok", "action": "added", "key_hash": h})
}

func hashOf(name string, hashed bool) string {
	if hashed {
		return name
	}
	return KeyHash(name)
}

// isSession reports whether body decodes as a session: one JSON object.
func isSession(body []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(body, &m) == nil && m != nil
}

func apiError(msg string) map[string]string {
	return map[string]string{"status": "error", "message": msg}
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// KeyHash is the gateway's hash of a key (storage.HashKey with hash_keys):
// the hex digest with the algorithm a base64 JSON token names in "h"
// (sha256, murmur64, murmur128), murmur32 for every other key.
func KeyHash(key string) string {
	algo := ""
	if strings.HasPrefix(key, "ey") {
		if raw, err := base64.StdEncoding.DecodeString(key); err == nil {
			var t struct {
				H string `json:"h"`
			}
			if json.Unmarshal(raw, &t) == nil {
				algo = t.H
			}
		}
	}
	var h hash.Hash
	switch algo {
	case "sha256":
		h = sha256.New()
	case "murmur64":
		h = murmur3.New64()
	case "murmur128":
		h = murmur3.New128()
	default:
		h = murmur3.New32()
	}
	h.Write([]byte(key))
	return hex.EncodeToString(h.Sum(nil))
}
