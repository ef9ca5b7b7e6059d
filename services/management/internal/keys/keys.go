// Package keys is management's Keys service (CONTRACT §2 "Keys"): it
// validates sessions against the APIs and policies management holds,
// issues, reads, updates and deletes keys through the gateways' own API
// (package gatewayapi), and keeps management's record of every key it
// issued (store.IssuedKey: the hash, never the key) in the same store
// transaction as the request's audit entry. The gateway's answer is the
// commit point: when the gateway call fails nothing is recorded.
//
// The key itself is handed back only by Create; everything else — records,
// audit entries (object id = hash), answers — names the hash.
package keys

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	stdstrings "strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/gatewayapi"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Messages of CONTRACT §2 "Keys".
var (
	ErrNotConfigured = rest.Error(codes.Unavailable, http.StatusServiceUnavailable, "key management needs --gateway-api-url")
	errUnreachable   = rest.Error(codes.Unavailable, http.StatusServiceUnavailable, "the gateway API did not answer; nothing was changed")
	errSecret        = rest.Error(codes.Unavailable, http.StatusServiceUnavailable, "the gateway API refused management's secret: check --gateway-api-secret-file")
	errKeyNotFound   = rest.Error(codes.NotFound, http.StatusNotFound, "Key not found")
	errAPINotFound   = rest.Error(codes.NotFound, http.StatusNotFound, "API not found")
	errKeyExists     = rest.Error(codes.AlreadyExists, http.StatusConflict, "Key already exists")
	errNoAccess      = badRequest("the session grants no access: give access_rights or apply_policies")
	errBasicAuth     = badRequest("basic auth users are not supported: issue keys")
	errUsername      = badRequest("username lookups are not supported: name the key or its hash")
)

func badRequest(msg string) error {
	return rest.Error(codes.InvalidArgument, http.StatusBadRequest, msg)
}

// Service issues and manages keys.
type Service struct {
	store *store.Store
	gw    *gatewayapi.Client // nil: no --gateway-api-url, every call answers ErrNotConfigured
	now   func() time.Time
	log   *slog.Logger
}

// New returns the service over st, calling the gateway API through gw
// (nil when none is configured).
func New(st *store.Store, gw *gatewayapi.Client, log *slog.Logger) *Service {
	return &Service{store: st, gw: gw, now: time.Now, log: log}
}

// Configured reports whether a gateway API is set.
func (s *Service) Configured() bool { return s.gw != nil }

// Key is a key with its session, as the Dashboard's KeyData answers it.
type Key struct {
	ID      string // the key itself (Create only) or its hash
	Hash    string
	Session []byte // the session's JSON
}

// JSON is the Dashboard's KeyData: {"api_model":{},"key_id","data","key_hash"}.
func (k Key) JSON() []byte {
	var b bytes.Buffer
	b.WriteString(`{"api_model":{},"key_id":`)
	b.Write(rawjson.Quote(k.ID))
	b.WriteString(`,"data":`)
	if len(k.Session) == 0 {
		b.WriteString("{}")
	} else {
		b.Write(k.Session)
	}
	b.WriteString(`,"key_hash":`)
	b.Write(rawjson.Quote(k.Hash))
	b.WriteByte('}')
	return b.Bytes()
}

// Ref names a key in a request: the key or its hash; Hashed says it is a
// hash (the Dashboard's ?hashed=), Username that it is a basic-auth user.
type Ref struct {
	Name     string
	Hashed   bool
	Username bool
	API      string // with ForAPI: the API the key must have access to
	ForAPI   bool
}

// ObjectID is what the audit log records for a key named in a path: the
// name itself when it is already a hash (hex of a gateway hash's length),
// else its hash, so that no entry holds a key.
func ObjectID(name string) string {
	if isHashForm(name) {
		return name
	}
	return gatewayapi.Hash(name)
}

// isHashForm reports whether name looks like a gateway key hash: lowercase
// hex of 8, 16, 32 or 64 digits (murmur32, murmur64, murmur128, sha256).
func isHashForm(name string) bool {
	switch len(name) {
	case 8, 16, 32, 64:
	default:
		return false
	}
	for _, c := range []byte(name) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Validate checks a session as Create would, writing nothing, and returns
// it as it would be issued (org_id set to the installation's).
func (s *Service) Validate(ctx context.Context, body []byte) ([]byte, store.IssuedKey, error) {
	sess, err := parseSession(body)
	if err != nil {
		return nil, store.IssuedKey{}, err
	}
	if sess.BasicAuth != nil && sess.BasicAuth.Password != "" {
		return nil, store.IssuedKey{}, errBasicAuth
	}
	rec := store.IssuedKey{Alias: sess.Alias, APIs: sess.apis(), Policies: sess.policies()}
	if len(rec.APIs) == 0 && len(rec.Policies) == 0 {
		return nil, store.IssuedKey{}, errNoAccess
	}
	err = s.store.View(ctx, func(tx *store.Tx) error { return refsExist(tx, rec) })
	if err != nil {
		return nil, store.IssuedKey{}, err
	}
	doc, err := rawjson.Set(bytes.TrimSpace(body), rawjson.Quote(s.store.OrgID()), "org_id")
	if err != nil {
		return nil, store.IssuedKey{}, badRequest("the request body is not a session")
	}
	return doc, rec, nil
}

// refsExist checks that every API and policy rec names exists: 400 naming
// the first that does not.
func refsExist(tx *store.Tx, rec store.IssuedKey) error {
	for _, id := range rec.APIs {
		if _, err := tx.API(id); errors.Is(err, store.ErrNotFound) {
			return badRequest("access_rights: API " + strconv.Quote(id) + " does not exist")
		} else if err != nil {
			return err
		}
	}
	for _, p := range rec.Policies {
		if _, err := tx.Doc(store.Policies, p); errors.Is(err, store.ErrNotFound) {
			return badRequest("apply_policies: policy " + strconv.Quote(p) + " does not exist")
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Create issues a key for the session in body: the gateway generates it,
// or, when custom is not empty, takes that key.
func (s *Service) Create(ctx context.Context, body []byte, custom string) (Key, error) {
	if s.gw == nil {
		return Key{}, ErrNotConfigured
	}
	if custom != "" {
		auditctx.SetObject(ctx, ObjectID(custom))
		if err := checkCustom(custom); err != nil {
			return Key{}, err
		}
	}
	doc, rec, err := s.Validate(ctx, body)
	if err != nil {
		return Key{}, err
	}
	var created gatewayapi.Created
	if custom != "" {
		// a gateway stores a custom key as is or prefixed with the org id
		// (its legacy token format): either already issued is a conflict
		err := s.store.View(ctx, func(tx *store.Tx) error {
			for _, name := range []string{custom, s.store.OrgID() + stdstrings.TrimPrefix(custom, s.store.OrgID())} {
				if _, err := tx.IssuedKey(gatewayapi.Hash(name)); err == nil {
					return errKeyExists
				} else if !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return Key{}, err
		}
		created, err = s.gw.CreateCustom(ctx, custom, doc)
		if err != nil {
			return Key{}, gatewayError(err)
		}
	} else if created, err = s.gw.Create(ctx, doc); err != nil {
		return Key{}, gatewayError(err)
	}
	auditctx.SetObject(ctx, created.Hash)
	now := s.now().UTC()
	rec.Hash, rec.Created, rec.Updated = created.Hash, now, now
	// checked again where the record is written: an API or policy deleted
	// since Validate (whose delete saw no key using it) refuses the key
	err = s.store.Update(ctx, func(tx *store.Tx) error {
		if err := refsExist(tx, rec); err != nil {
			return err
		}
		return tx.PutIssuedKey(rec)
	})
	if err != nil {
		s.undo(created.Hash)
		return Key{}, err
	}
	return Key{ID: created.Key, Hash: created.Hash, Session: doc}, nil
}

// undo removes a key the gateway created but management could not record,
// so that no key lives on the gateways without a record.
func (s *Service) undo(hash string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.gw.Delete(ctx, hash)
}

// checkCustom refuses a custom key a path cannot carry.
func checkCustom(key string) error {
	if len(key) > 255 {
		return badRequest("key_id must be at most 255 bytes")
	}
	for _, r := range key {
		if r <= ' ' || r == 0x7f || stdstrings.ContainsRune(`/?#%"\`, r) {
			return badRequest("key_id must not contain spaces, control characters or any of / ? # % \" \\")
		}
	}
	return nil
}

// resolve finds the record of the key ref names (and checks its access to
// ref.API).
func (s *Service) resolve(ctx context.Context, ref Ref) (store.IssuedKey, error) {
	if s.gw == nil {
		return store.IssuedKey{}, ErrNotConfigured
	}
	if ref.Username {
		return store.IssuedKey{}, errUsername
	}
	var rec store.IssuedKey
	err := s.store.View(ctx, func(tx *store.Tx) error {
		r, err := tx.IssuedKey(ref.Name)
		if errors.Is(err, store.ErrNotFound) && !ref.Hashed {
			r, err = tx.IssuedKey(gatewayapi.Hash(ref.Name))
		}
		if errors.Is(err, store.ErrNotFound) {
			return errKeyNotFound
		}
		if err != nil {
			return err
		}
		if ref.ForAPI {
			a, err := tx.Resolve(ref.API)
			if errors.Is(err, store.ErrNotFound) {
				return errAPINotFound
			} else if err != nil {
				return err
			}
			ok, err := grants(tx, r, a.ID)
			if err != nil {
				return err
			}
			if !ok {
				return errKeyNotFound
			}
		}
		rec = r
		return nil
	})
	if err == nil {
		auditctx.SetObject(ctx, rec.Hash)
	}
	return rec, err
}

// grants reports whether the key has access to the API, directly or
// through one of its policies.
func grants(tx *store.Tx, rec store.IssuedKey, apiID string) (bool, error) {
	for _, a := range rec.APIs {
		if a == apiID {
			return true, nil
		}
	}
	pols, err := policiesGranting(tx, apiID)
	if err != nil {
		return false, err
	}
	for _, p := range rec.Policies {
		for _, q := range pols {
			if p == q {
				return true, nil
			}
		}
	}
	return false, nil
}

// policiesGranting lists the names (`id` and `_id`) of the policies whose
// access_rights name the API. It reads every policy, inside an API delete's
// transaction (on the store's one committer), so a policy is walked only
// when its bytes hold the API ID as a JSON string or hold an escape: without
// a backslash every string of a document is written literally, so one
// without `"<apiID>"` cannot name the API, and is passed over undecoded
// (BenchmarkAPIInUse, CPU a check: 100 policies 282 → 42 µs, 1,000
// policies 2.8 → 0.42 ms, 20 allocations either way; it still reads every
// policy's bytes).
func policiesGranting(tx *store.Tx, apiID string) ([]string, error) {
	var out []string
	id := []byte(apiID + `"`)
	mayName := func(doc []byte) bool { return containsString(doc, id) || bytes.IndexByte(doc, '\\') >= 0 }
	err := tx.EachDocWhere(store.Policies, mayName, func(d store.Document) error {
		if _, ok, _ := rawjson.Lookup(d.Doc, "access_rights", apiID); ok {
			out = append(out, d.ID, d.DBID)
		}
		return nil
	})
	return out, err
}

// containsString reports whether doc holds `"` followed by idQuote (an ID
// and its closing quote). The search starts at the ID, whose first byte is
// rarer in JSON than the quote.
func containsString(doc, idQuote []byte) bool {
	for from := 0; ; {
		i := bytes.Index(doc[from:], idQuote)
		if i < 0 {
			return false
		}
		if i += from; i > 0 && doc[i-1] == '"' {
			return true
		}
		from = i + 1
	}
}

// Get reads a key's session from the gateway.
func (s *Service) Get(ctx context.Context, ref Ref) (Key, error) {
	rec, err := s.resolve(ctx, ref)
	if err != nil {
		return Key{}, err
	}
	sess, err := s.gw.Get(ctx, rec.Hash)
	if err != nil {
		return Key{}, gatewayError(err)
	}
	return Key{ID: rec.Hash, Hash: rec.Hash, Session: sess}, nil
}

// Update replaces a key's record, then its session on the gateway. The
// record goes first, in a transaction that checks the APIs and policies it
// names still exist: an API delete then sees the key's new references (and
// refuses, 409) or has already removed the API (and the update is refused,
// 400, before the gateway is told). When the gateway refuses or does not
// answer, the record is put back as it was.
func (s *Service) Update(ctx context.Context, ref Ref, body []byte, suppressReset bool) (Key, error) {
	if s.gw == nil {
		return Key{}, ErrNotConfigured
	}
	doc, next, err := s.Validate(ctx, body)
	if err != nil {
		return Key{}, err
	}
	rec, err := s.resolve(ctx, ref)
	if err != nil {
		return Key{}, err
	}
	var old store.IssuedKey
	next.Hash, next.Updated = rec.Hash, s.now().UTC()
	// the request's audit entry is not in this transaction: the update may
	// still fail at the gateway
	err = s.store.Update(auditctx.WithoutEntry(ctx), func(tx *store.Tx) error {
		if old, err = tx.IssuedKey(rec.Hash); err != nil {
			return err
		}
		if err := refsExist(tx, next); err != nil {
			return err
		}
		next.Created = old.Created
		return tx.PutIssuedKey(next)
	})
	if errors.Is(err, store.ErrNotFound) {
		return Key{}, errKeyNotFound // deleted meanwhile
	}
	if err != nil {
		return Key{}, err
	}
	if err := s.gw.Update(ctx, rec.Hash, doc, suppressReset); err != nil {
		s.restore(old, next.Updated)
		return Key{}, gatewayError(err)
	}
	return Key{ID: rec.Hash, Hash: rec.Hash, Session: doc}, nil
}

// restore puts back a key's record an update wrote (stamped updated) when
// the gateway did not take the update, unless the record changed since.
func (s *Service) restore(old store.IssuedKey, updated time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.store.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.IssuedKey(old.Hash)
		if err != nil || !cur.Updated.Equal(updated) {
			return err
		}
		return tx.PutIssuedKey(old)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Warn("keys: a key's record could not be put back after the gateway refused its update", "key_hash", old.Hash, "error", err)
	}
}

// Delete revokes a key on the gateways, then drops its record. A key the
// gateway no longer holds (expired, removed there) is dropped too; any
// other failure keeps the record, so that a retry can finish the job.
func (s *Service) Delete(ctx context.Context, ref Ref) error {
	rec, err := s.resolve(ctx, ref)
	if err != nil {
		return err
	}
	var refusal *gatewayapi.Refusal
	if err := s.gw.Delete(ctx, rec.Hash); err != nil && !(errors.As(err, &refusal) && refusal.Status == http.StatusNotFound) {
		return gatewayError(err)
	}
	return s.store.Update(ctx, func(tx *store.Tx) error { return tx.DeleteIssuedKey(rec.Hash) })
}

// gatewayError is what a caller sees of a failed gateway call: 503 when
// it did not answer, else its status and message.
func gatewayError(err error) error {
	var refusal *gatewayapi.Refusal
	switch {
	case errors.As(err, &refusal):
		status := refusal.Status
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			return errSecret
		}
		if status >= 500 {
			status = http.StatusBadGateway // the gateway's own failure, not the caller's
		}
		return rest.Error(grpcCode(status), status, refusal.Message)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return errUnreachable
}

// grpcCode is the gRPC code of an HTTP status a gateway answered.
func grpcCode(status int) codes.Code {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return codes.InvalidArgument
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.AlreadyExists
	}
	return codes.Unavailable
}

// List returns a page of the issued keys' hashes and how many there are.
func (s *Service) List(ctx context.Context, offset, limit int) ([]string, int, error) {
	if s.gw == nil {
		return nil, 0, ErrNotConfigured
	}
	return s.store.IssuedKeyHashes(ctx, offset, limit)
}

// Each calls begin, then each with every issued key's hash, in order, from
// one snapshot, and returns how many there were.
func (s *Service) Each(ctx context.Context, begin func() error, each func(hash string) error) (int, error) {
	if s.gw == nil {
		return 0, ErrNotConfigured
	}
	var total int
	err := s.store.View(ctx, func(tx *store.Tx) error {
		if err := begin(); err != nil {
			return err
		}
		n := 0
		err := tx.EachIssuedKeyHash(func(h string) error { n++; return each(h) })
		total = n
		return err
	})
	return total, err
}

// EachDetailed calls each with every issued key whose hash or alias holds
// q, as Detailed answers them, from one snapshot, and returns how many
// there were.
func (s *Service) EachDetailed(ctx context.Context, q string, each func(Key) error) (int, error) {
	if s.gw == nil {
		return 0, ErrNotConfigured
	}
	var total int
	err := s.store.View(ctx, func(tx *store.Tx) error {
		n := 0
		err := tx.EachIssuedKey(func(k store.IssuedKey) error {
			if !matches(k, q) {
				return nil
			}
			n++
			return each(Key{ID: k.Hash, Hash: k.Hash, Session: recordJSON(k)})
		})
		total = n
		return err
	})
	return total, err
}

// Detailed returns a page of the issued keys whose hash or alias holds q,
// as KeyData with management's record as data, and how many match.
func (s *Service) Detailed(ctx context.Context, q string, offset, limit int) ([]Key, int, error) {
	if s.gw == nil {
		return nil, 0, ErrNotConfigured
	}
	var out []Key
	var total int
	if q == "" { // a page of records, only those decoded
		recs, n, err := s.store.IssuedKeys(ctx, offset, limit)
		for _, k := range recs {
			out = append(out, Key{ID: k.Hash, Hash: k.Hash, Session: recordJSON(k)})
		}
		return out, n, err
	}
	err := s.store.View(ctx, func(tx *store.Tx) error {
		var page []Key
		n := 0
		err := tx.EachIssuedKey(func(k store.IssuedKey) error {
			if !matches(k, q) {
				return nil
			}
			if n++; n > offset && (limit < 0 || len(page) < limit) {
				page = append(page, Key{ID: k.Hash, Hash: k.Hash, Session: recordJSON(k)})
			}
			return nil
		})
		out, total = page, n
		return err
	})
	return out, total, err
}

// APIKeys returns a page of the hashes of the keys with access to the API
// (directly or through a policy) whose hash or alias holds q.
func (s *Service) APIKeys(ctx context.Context, apiRef, q string, offset, limit int) ([]string, int, error) {
	var out []string
	total, err := s.EachAPIKey(ctx, apiRef, q, func() error { out = nil; return nil }, func(n int, h string) error {
		if n > offset && (limit < 0 || len(out) < limit) {
			out = append(out, h)
		}
		return nil
	})
	return out, total, err
}

// EachAPIKey calls begin once the API is found, then each with the count so
// far (from 1) and the hash of every key with access to the API (directly
// or through a policy) whose hash or alias holds q, in hash order, from one
// snapshot, and returns how many there were: a whole list written as it
// is read.
func (s *Service) EachAPIKey(ctx context.Context, apiRef, q string, begin func() error, each func(n int, hash string) error) (int, error) {
	if s.gw == nil {
		return 0, ErrNotConfigured
	}
	var total int
	err := s.store.View(ctx, func(tx *store.Tx) error {
		a, err := tx.Resolve(apiRef)
		if errors.Is(err, store.ErrNotFound) {
			return errAPINotFound
		} else if err != nil {
			return err
		}
		pols, err := policiesGranting(tx, a.ID)
		if err != nil {
			return err
		}
		if err := begin(); err != nil {
			return err
		}
		n := 0
		err = tx.EachKeyHashByAPI(a.ID, pols, func(h string) error {
			if q != "" {
				k, err := tx.IssuedKey(h)
				if err != nil {
					return err
				}
				if !matches(k, q) {
					return nil
				}
			}
			n++
			return each(n, h)
		})
		total = n
		return err
	})
	return total, err
}

func matches(k store.IssuedKey, q string) bool {
	return q == "" || stdstrings.Contains(k.Hash, q) || stdstrings.Contains(k.Alias, q)
}

// recordJSON is management's record of a key as a session-like object:
// alias, apply_policies, access_rights (API IDs), date_created, last_updated.
func recordJSON(k store.IssuedKey) []byte {
	// written by hand, as encoding/json writes the map it stands for (keys
	// in order, each API once): a detailed list of every key writes one per
	// key, and the map and reflection were most of its garbage
	b := make([]byte, 0, 192+100*len(k.APIs)+40*len(k.Policies))
	b = append(b, `{"access_rights":{`...)
	apis := slices.Compact(slices.Sorted(slices.Values(k.APIs)))
	for i, a := range apis {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, a)
		b = append(b, `:{"api_id":`...)
		b = appendJSONString(b, a)
		b = append(b, '}')
	}
	b = append(b, `},"alias":`...)
	b = appendJSONString(b, k.Alias)
	b = append(b, `,"apply_policies":[`...)
	for i, p := range k.Policies {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, p)
	}
	b = append(b, `],"date_created":"`...)
	b = k.Created.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","last_updated":"`...)
	b = k.Updated.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

// appendJSONString appends s as encoding/json writes a string.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// APIInUse refuses deleting API a while issued keys use it, directly or
// through one of their policies (CONTRACT §2 "Keys": 409 naming how many,
// unless ?force=true): the check of the delete's own transaction
// (store.DeleteAPI), so a key recorded meanwhile is seen.
func APIInUse(tx *store.Tx, a store.API) error {
	pols, err := policiesGranting(tx, a.ID)
	if err != nil {
		return err
	}
	n := 0
	if err := tx.EachKeyHashByAPI(a.ID, pols, func(string) error { n++; return nil }); err != nil {
		return err
	}
	return inUse(n, "API")
}

// PolicyInUse refuses deleting policy d while issued keys apply it (by id
// or db id), in the delete's transaction (store.DeleteDocument).
func PolicyInUse(tx *store.Tx, d store.Document) error {
	n, err := tx.KeysUsingPolicy(d.ID, d.DBID)
	if err != nil {
		return err
	}
	return inUse(n, "policy")
}

func inUse(n int, what string) error {
	if n == 0 {
		return nil
	}
	return rest.Error(codes.FailedPrecondition, http.StatusConflict, strconv.Itoa(n)+" issued keys use this "+what+
		": delete or update them first, or add ?force=true")
}
