package audit

import (
	"bytes"
	"context"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// ExpireBatch is how many entries one expiry transaction deletes at most,
// so that expiry never holds the store's writer for long.
const ExpireBatch = 500

// ExpireEvery is how often Run expires entries.
const ExpireEvery = time.Minute

// Start runs expiry in the background (Run) until stop is called; stop
// returns once it has ended, so the caller may close the store after it.
func (l *Log) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// Run expires entries at start and every ExpireEvery until ctx ends.
// Failures are logged and tried again at the next round.
func (l *Log) Run(ctx context.Context) {
	t := time.NewTicker(ExpireEvery)
	defer t.Stop()
	for {
		if _, err := l.Expire(ctx, time.Now()); err != nil && ctx.Err() == nil {
			l.log.Warn("audit expiry failed; tried again later", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Expire deletes the entries older than the retention at now, then the
// oldest beyond the entry limit, and returns how many it deleted. It finds
// them in a read transaction (oldest first, reading only those) and deletes
// at most ExpireBatch per write transaction, so that request writes wait
// for no more than one small batch.
func (l *Log) Expire(ctx context.Context, now time.Time) (int, error) {
	deleted := 0
	for {
		victims, err := l.oldest(ctx, oldestTimeKey(now.Add(-l.opts.Limits.Retention)))
		if err != nil || len(victims) == 0 {
			return deleted, err
		}
		err = l.e.Update(ctx, func(w kv.WriteTx) error {
			for _, v := range victims {
				if err := w.Delete(v.index); err != nil {
					return err
				}
				if err := w.Delete(entryKey(v.id)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return deleted, err
		}
		deleted += len(victims)
	}
}

type victim struct {
	index []byte
	id    string
}

// oldest lists up to ExpireBatch of the oldest entries that are before
// cutoff (an OldestPrefix key) or beyond the entry limit.
func (l *Log) oldest(ctx context.Context, cutoff []byte) ([]victim, error) {
	var out []victim
	err := l.e.View(ctx, func(r kv.ReadTx) error {
		out = nil
		total, err := r.Count(OldestPrefix)
		if err != nil {
			return err
		}
		over := total - l.opts.Limits.MaxEntries
		return r.Scan(OldestPrefix, nil, func(k, v []byte) error {
			if len(out) >= over && bytes.Compare(k, cutoff) >= 0 || len(out) >= ExpireBatch {
				return kv.ErrStop
			}
			out = append(out, victim{bytes.Clone(k), string(v)})
			return nil
		})
	})
	return out, err
}
