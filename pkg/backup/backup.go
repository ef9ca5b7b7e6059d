// Package backup serves a service's store backup, GET <REST base>/admin/backup
// (/api/v1, /api, /portal-api): admins only, audited, and answered with one
// consistent snapshot of the bbolt store streamed as it is read (bbolt's
// Tx.WriteTo, one read transaction; writes go on meanwhile). The answer is a
// store file: restoring is stopping the service, putting the file in place of
// --db and starting it again. On etcd the answer is 409 naming etcdctl
// snapshot save, which backs up the whole cluster consistently.
//
// It is a plain REST route (restfacade.Options.Plain), not an RPC: a store
// file is a byte stream of any size, which a unary gRPC message cannot carry
// and the in-process facade does not stream.
package backup

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// Path is the backup route under a service's REST base.
const Path = "/admin/backup"

// ErrEtcd answers a backup request on etcd.
var ErrEtcd = rest.Error(codes.FailedPrecondition, http.StatusConflict,
	"this service stores its data in etcd: back up the etcd cluster with etcdctl snapshot save (see deploy/README.md, Backup and restore)")

// Options describe one service's backup route.
type Options struct {
	// Service names the service (the file name offered: <service>-<UTC time>.db).
	Service string
	// Engine is the service's store; a kv.Snapshotter (bbolt) or one
	// decorating it is backed up, any other engine answered ErrEtcd.
	Engine kv.Engine
	// Admin returns nil for a request that carries an admin's credentials,
	// else the service's 401 or 403 (a rest.Error).
	Admin func(*http.Request) error
	// Audit records every request a caller was known for; nil: not audited
	// (tests).
	Audit *audit.Log
	Log   *slog.Logger
}

// Routes returns the backup route under the REST base, GET and HEAD, for
// restfacade.Options.Plain (which answers other methods 405 with Allow).
func Routes(base string, o Options) []restfacade.PlainRoute {
	return []restfacade.PlainRoute{
		{Method: http.MethodGet, Path: base + Path, Serve: o.serve},
		{Method: http.MethodHead, Path: base + Path, Serve: o.serve},
	}
}

func (o Options) serve(w http.ResponseWriter, r *http.Request) error {
	done := func(int) {}
	if o.Audit != nil {
		var err error
		if done, err = o.Audit.Sensitive(r, o.Admin); err != nil {
			return err
		}
	} else if err := o.Admin(r); err != nil {
		return err
	}
	snap, ok := kv.SnapshotterOf(o.Engine)
	if !ok {
		done(http.StatusConflict)
		return ErrEtcd
	}
	started, sending := time.Now(), false
	var written int64
	err := snap.Snapshot(r.Context(), func(size int64, content io.WriterTo) error {
		sending = true
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.db"`, o.Service, started.UTC().Format("20060102T150405Z")))
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return nil
		}
		n, err := content.WriteTo(w)
		written = n
		return err
	})
	switch {
	case err == nil:
		done(http.StatusOK)
		o.log().Info("store backup sent", "bytes", written, "duration", time.Since(started))
	case !sending:
		// Nothing was sent: the facade answers 500 internal error.
		o.log().Error("store backup failed", "err", err)
		done(http.StatusInternalServerError)
		return err
	default:
		// The client went away or the stream broke: the answer is cut, so
		// the client sees a body shorter than its Content-Length.
		o.log().Warn("store backup cut", "bytes", written, "err", err)
		done(http.StatusOK)
	}
	return nil
}

func (o Options) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log.With("component", "backup")
}
