package kvtest

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Twice wraps e so that every update function runs twice: once in a
// transaction that is rolled back, then for real, as an engine that retries
// on conflict may run it. A domain store's tests open their store through it,
// so an update function that is not safe to run again fails them.
func Twice(e kv.Engine) kv.Engine { return twice{e} }

type twice struct{ kv.Engine }

// Unwrap returns the engine inside, so that its own methods are found
// (kv.CheckerOf, kv.SnapshotterOf).
func (e twice) Unwrap() kv.Engine { return e.Engine }

var errFirstRun = errors.New("kvtest: first run, rolled back")

func (e twice) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	err := e.Engine.Update(ctx, func(w kv.WriteTx) error {
		if err := fn(w); err != nil {
			return err
		}
		return errFirstRun
	})
	if !errors.Is(err, errFirstRun) {
		return err
	}
	return e.Engine.Update(ctx, fn)
}
