// Package etcdkv is the kv engine on an etcd v3 cluster: any number of
// processes of one service share one key prefix and behave as one store.
// It is the only package that imports the etcd client.
//
// # Key layout
//
// Everything lives under Config.Prefix (P):
//
//	P + "k/" + key   the records: the kv key space, bytewise ordered
//	P + "s/" + name  sequences, the last value handed out as decimal text
//	P + "g/" + dir   delete guards (see below), empty values
//
// # Transactions
//
// View reads one consistent snapshot. With the watch cache (cache.go, the
// default) that is the records in memory, fed by a watch: a View learns
// etcd's current revision with one quorum read, waits until the cache has
// applied it (asking etcd for a progress notification when the revision
// moved outside the records), and reads the cache's immutable snapshot; when
// the cache cannot catch up within a second it reads etcd as below. A View
// under kv.Recent(ctx, d) reads the cache's latest snapshot at once when a
// quorum read that started less than d ago was reached (it holds every write
// acknowledged before that read), and as above otherwise. Without
// the cache, the first read is linearizable and fixes the revision, and every
// later read (Scan pages included) asks for that revision.
//
// Update is optimistic and serializable. Its reads work as in View; its
// writes are buffered (the transaction reads its own writes) and committed
// with one etcd Txn whose compares cover everything the function read:
//
//   - a key read (Get, NextSeq): ModRevision(key) = the revision it had when
//     read (0 when absent), so an insert, an update and a delete all conflict;
//   - a range read (Scan, Count over prefix p): ModRevision over the range
//     below rev+1, which catches an insert into or an update inside the range,
//     and ModRevision(guard(dir(p))) below rev+1 for deletes: etcd keeps no
//     trace of a deleted key that a range compare could see, so every Delete
//     also writes the guard key of each directory above the deleted key (the
//     key's prefixes that end in '/', and the root ""). dir(p) is p cut after
//     its last '/', which is one of those directories for every key under p,
//     so a delete under p after rev moves that guard and the commit fails.
//
// When the compares would pass etcd's operation limit (a function that read
// hundreds of single keys), they are coarsened to whole directories (range
// and guard compares per directory, climbing towards the root until they
// fit): coarser compares only conflict more often, never less.
//
// A failed compare means another writer got there first: the function runs
// again on a fresh revision after a jittered backoff, up to maxAttempts times,
// then Update returns kv.ErrConflict. A sequence is a key read and written in
// the same transaction, so two transactions never hand out the same value.
//
// # Group commit
//
// Concurrent Updates of one engine share that Txn (batch.go): one committer
// runs the queued functions one after another over one transaction state at
// one revision, each seeing the writes of those before it (so creates that
// advance one sequence do not conflict with each other), undoes a function
// that fails or panics alone through its journal, cuts the batch before a
// function that would take it past the limits, and commits the batch as one
// Txn whose compares are the union of its reads. A failed compare runs the
// whole batch again. Each caller is answered after that commit.
//
// # Limits and failures
//
// A transaction whose operations or size pass etcd's --max-txn-ops or
// --max-request-bytes (128 and 1.5 MiB by default, Config overrides both) is
// refused before it is sent, whole, with kv.ErrTooLarge naming the limit.
// Every call to etcd carries a deadline (Config.RequestTimeout) and
// requires a leader, so a lost quorum or an unreachable cluster turns into
// kv.ErrUnavailable within that bound instead of a hanging request; the
// client spreads over all endpoints and follows leader changes by itself.
package etcdkv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/groupcommit"
)

// Defaults of etcd's own limits and of the engine's bounds.
const (
	DefaultMaxRequestBytes = 1536 * 1024 // etcd --max-request-bytes
	DefaultMaxTxnOps       = 128         // etcd --max-txn-ops
	DefaultRequestTimeout  = 5 * time.Second
	DefaultStartTimeout    = 10 * time.Second

	// A hot key under 32 concurrent writers needs the backoff window to
	// grow well past one commit's latency before every writer gets through.
	maxAttempts = 64
	minBackoff  = 2 * time.Millisecond
	maxBackoff  = 250 * time.Millisecond
	pageSize    = 128
)

// Config says where the cluster is and how to talk to it.
type Config struct {
	// Endpoints are "host:port" or "http(s)://host:port"; give all members.
	Endpoints []string
	// Prefix holds every key of this store, e.g. "/gatehouse/studio/".
	Prefix string
	// CACert, Cert and Key are PEM files for TLS to etcd (all optional:
	// CACert alone verifies the server, Cert and Key add a client identity).
	CACert, Cert, Key string
	// Username and Password for etcd authentication (optional).
	Username, Password string
	// MaxRequestBytes and MaxTxnOps mirror the cluster's --max-request-bytes
	// and --max-txn-ops; zero means etcd's defaults.
	MaxRequestBytes int
	MaxTxnOps       int
	// RequestTimeout bounds each call to etcd (a commit gets one more second
	// per 256 KiB it carries); zero means 5 s.
	RequestTimeout time.Duration
	// StartTimeout bounds Open's first contact; zero means 10 s.
	StartTimeout time.Duration
	// NoWatchCache makes every View read etcd instead of the watch cache
	// (cache.go); benchmarks compare the two.
	NoWatchCache bool
}

// Engine is a kv.Engine on etcd.
type Engine struct {
	cli    *clientv3.Client
	cfg    Config
	data   string // P + "k/"
	seqs   string // P + "s/"
	guards string // P + "g/"

	queue *groupcommit.Queue
	cache *watchCache // nil with Config.NoWatchCache
	// cacheMisses counts the Views that read etcd because the cache did not
	// reach etcd's revision in time (tests read it).
	cacheMisses atomic.Int64
	// reruns counts batches run again after a failed compare, and
	// serialReads the reads a batch's serial run made of etcd (tests read
	// them).
	reruns, serialReads atomic.Int64
}

var _ kv.Engine = (*Engine)(nil)

// Open connects to the cluster and waits (up to Config.StartTimeout) for one
// linearizable read to succeed; when none does, the error names the endpoints.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints given")
	}
	if cfg.Prefix == "" {
		return nil, errors.New("etcd: empty key prefix")
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxTxnOps <= 0 {
		cfg.MaxTxnOps = DefaultMaxTxnOps
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	tlsConfig, err := tlsFrom(cfg)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            cfg.Endpoints,
		DialTimeout:          cfg.RequestTimeout,
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		TLS:                  tlsConfig,
		Username:             cfg.Username,
		Password:             cfg.Password,
		// Room above the request limit so that etcd, not the client,
		// is the one that refuses a request we let through.
		MaxCallSendMsgSize: cfg.MaxRequestBytes + 512*1024,
		Logger:             zap.NewNop(),
		Context:            context.WithoutCancel(ctx),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	e := &Engine{cli: cli, cfg: cfg, data: cfg.Prefix + "k/", seqs: cfg.Prefix + "s/", guards: cfg.Prefix + "g/"}
	pctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), cfg.StartTimeout)
	defer cancel()
	if _, err := cli.Get(pctx, e.data, clientv3.WithCountOnly()); err != nil {
		_ = cli.Close()
		if err := e.mapErr(ctx, err); !errors.Is(err, kv.ErrUnavailable) {
			// etcd answered and refused (authentication, permissions).
			return nil, fmt.Errorf("etcd at %s: %w", strings.Join(cfg.Endpoints, ", "), err)
		}
		return nil, fmt.Errorf("%w: no etcd endpoint answered within %s (%s): %v",
			kv.ErrUnavailable, cfg.StartTimeout, strings.Join(cfg.Endpoints, ", "), err)
	}
	e.queue = groupcommit.Start(maxBatch, e.commitBatch)
	if !cfg.NoWatchCache {
		e.cache = startCache(e)
	}
	return e, nil
}

func tlsFrom(cfg Config) (*tls.Config, error) {
	if cfg.CACert == "" && cfg.Cert == "" && cfg.Key == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CACert != "" {
		pem, err := os.ReadFile(cfg.CACert)
		if err != nil {
			return nil, fmt.Errorf("etcd CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd CA certificate %s: no PEM certificate in it", cfg.CACert)
		}
		c.RootCAs = pool
	}
	if (cfg.Cert == "") != (cfg.Key == "") {
		return nil, errors.New("etcd TLS: the client certificate and key go together")
	}
	if cfg.Cert != "" {
		pair, err := tls.LoadX509KeyPair(cfg.Cert, cfg.Key)
		if err != nil {
			return nil, fmt.Errorf("etcd client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// Prefix is the key prefix the engine keeps everything under.
func (e *Engine) Prefix() string { return e.cfg.Prefix }

// Close commits what is queued, stops the committer and releases the client.
func (e *Engine) Close() error {
	if !e.queue.Close() {
		return nil
	}
	if e.cache != nil {
		e.cache.close()
	}
	return e.cli.Close()
}

// Ready is one linearizable read with a short deadline, then the cluster's
// alarms: with NOSPACE raised etcd still reads but refuses every write, so
// the engine is not ready (kv.ErrNoSpace) until the alarm is disarmed.
func (e *Engine) Ready(ctx context.Context) error {
	cctx, cancel := e.callCtx(ctx)
	defer cancel()
	if _, err := e.cli.Get(cctx, e.data, clientv3.WithCountOnly()); err != nil {
		return e.mapErr(ctx, err)
	}
	alarms, err := e.cli.AlarmList(cctx)
	if err != nil {
		return e.mapErr(ctx, err)
	}
	for _, a := range alarms.Alarms {
		if a.Alarm == etcdserverpb.AlarmType_NOSPACE {
			return fmt.Errorf("%w (etcd NOSPACE alarm)", kv.ErrNoSpace)
		}
	}
	return nil
}

// View runs fn on one snapshot: the watch cache's once it has applied etcd's
// current revision (cache.go), otherwise etcd's own at one revision. Under
// kv.Recent it reads the cache's latest snapshot without the quorum read
// when that is known fresh enough.
func (e *Engine) View(ctx context.Context, fn func(kv.ReadTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.cache != nil {
		if within, ok := kv.RecentWithin(ctx); ok {
			if s := e.cache.recent(within); s != nil {
				return fn(snapTx{s})
			}
		}
		s, err := e.cache.at(ctx)
		if err != nil {
			return err
		}
		if s != nil {
			return fn(snapTx{s})
		}
		e.cacheMisses.Add(1)
	}
	return fn(&tx{e: e, ctx: ctx})
}

// Update queues fn for the committer (batch.go) and waits until the batch
// that ran it has committed; see the package comment.
func (e *Engine) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	return e.queue.Update(ctx, fn)
}
