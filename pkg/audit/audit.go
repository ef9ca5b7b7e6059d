// Package audit is the audit log every Gatehouse service keeps of its write
// requests (CONTRACT §2, "Audit log"): who (user id and e-mail), what
// ("<METHOD> <route pattern>" and the object's id from the path), the
// answer's status, when and from where — never a body, a key or a header.
//
// It is built of three parts, used alike by the three services:
//
//   - Interceptor, a gRPC unary interceptor that opens a record for every
//     write call (REST calls reach it through the in-process facade) and,
//     when the call is refused or wrote nothing, stores the entry itself;
//   - Engine, a kv.Engine decorator: a request's read-write transaction puts
//     the request's entry in the same transaction, so a write that commits
//     is always audited and one that rolls back never appears as a success;
//   - REST, a wrapper of the facade's authentication hook, for requests the
//     facade refuses (403) before the gRPC call is made.
//
// The service's authentication says who the caller is (auditctx.SetCaller). Calls
// without valid credentials are not stored, only counted
// (gatehouse_auth_failures_total), so that anonymous clients cannot fill the
// store; refused calls are stored at most RefusedPerCaller per caller and
// RefusedPerService in all in any minute (a sliding window), per process,
// and every id is cut to idsize.Max bytes. Expire drops entries older than the retention and
// beyond the entry limit, a batch per transaction.
package audit

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/idsize"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Entry is one audit record, stored as this JSON under Prefix.
type Entry struct {
	ID         string    `json:"id"`
	Time       time.Time `json:"time"`
	UserID     string    `json:"user_id"`
	UserEmail  string    `json:"user_email"`
	Action     string    `json:"action"`
	ObjectID   string    `json:"object_id"`
	Status     int       `json:"status"`
	RemoteAddr string    `json:"remote_addr"`
}

// Prefix is where entries live in a service's key space:
// audit/<id>, the id being <16 hex: MaxUint64 - time in ns><8 hex random>,
// so that an ascending scan (the only kind kv has) meets the newest entry
// first. OldestPrefix indexes the same entries oldest first —
// auditold/<16 hex: time in ns><8 hex random> → id — for expiry, which so
// reads only what it deletes.
var (
	Prefix       = []byte("audit/")
	OldestPrefix = []byte("auditold/")
)

// Options configure a Log.
type Options struct {
	// Service names the service in metrics (studio, management, portal).
	Service string
	// OpenAPI is the service's description: it maps each RPC to its REST
	// method, route pattern and success status.
	OpenAPI []byte
	// Limits bound what Expire keeps; zero fields take config's defaults.
	Limits config.Audit
	Log    *slog.Logger
	// Conceal names path parameters that may carry a secret (management's
	// key_id, which may be a key): an entry records what the function makes
	// of their value (a hash) instead of the value.
	Conceal map[string]func(string) string
}

// Log is one service's audit log over its kv engine.
type Log struct {
	e       kv.Engine
	opts    Options
	actions map[string]action // by RPC name, Service_Method
	log     *slog.Logger

	refused refusals
}

// New returns the audit log kept in e (the service's undecorated engine).
func New(e kv.Engine, opts Options) (*Log, error) {
	actions, err := parseActions(opts.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("audit: read the OpenAPI description: %w", err)
	}
	if opts.Limits.Retention <= 0 {
		opts.Limits.Retention = config.DefaultAuditRetention
	}
	if opts.Limits.MaxEntries <= 0 {
		opts.Limits.MaxEntries = config.DefaultAuditMaxEntries
	}
	lg := opts.Log
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Log{e: e, opts: opts, actions: actions, log: lg.With("component", "audit")}, nil
}

// newID is an entry id that sorts newest first (see Prefix).
func newID(t time.Time) string {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 12), math.MaxUint64-uint64(t.UnixNano()))
	b = b[:12]
	rand.Read(b[8:])
	return hex.EncodeToString(b)
}

// timeKey is the first key of entries at or before t.
func timeKey(t time.Time) []byte {
	b := binary.BigEndian.AppendUint64(nil, math.MaxUint64-uint64(t.UnixNano()))
	return append(append([]byte(nil), Prefix...), hex.EncodeToString(b)...)
}

// oldestTimeKey is the first key in OldestPrefix of entries at or after t.
func oldestTimeKey(t time.Time) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano()))
	return append(append([]byte(nil), OldestPrefix...), hex.EncodeToString(b)...)
}

func entryKey(id string) []byte { return append(append([]byte(nil), Prefix...), id...) }

func putEntry(w kv.WriteTx, e Entry) error {
	e.ObjectID = idsize.Cut(e.ObjectID)
	p, err := encodeEntry(e)
	if err != nil {
		return err
	}
	if err := w.Put(p.key, p.value); err != nil {
		return err
	}
	return w.Put(p.oldest, p.id)
}

// store writes e in its own transaction. An entry that cannot be stored is
// logged (never the request's answer).
func (l *Log) store(ctx context.Context, e Entry) {
	err := l.e.Update(context.WithoutCancel(ctx), func(w kv.WriteTx) error { return putEntry(w, e) })
	if err != nil {
		l.log.Error("audit entry not stored", "action", e.Action, "status", e.Status, "err", err)
	}
}

// BootstrapRetired records that the service retired the previous bootstrap
// credential at start (credential.Bootstrap's retired): user "service",
// action "RETIRE bootstrap credential", the retired user as object.
func (l *Log) BootstrapRetired(ctx context.Context, id string) {
	now := time.Now().UTC()
	l.store(ctx, Entry{ID: newID(now), Time: now, UserID: "service", Action: "RETIRE bootstrap credential", ObjectID: id, Status: 200})
}

// ServiceUserRetired records that a new key of service user name (the
// portal's, --portal-user-key-file) retired the user holding the previous one.
func (l *Log) ServiceUserRetired(ctx context.Context, name, id string) {
	now := time.Now().UTC()
	l.store(ctx, Entry{ID: newID(now), Time: now, UserID: "service", Action: "RETIRE " + name + " service credential", ObjectID: id, Status: 200})
}
