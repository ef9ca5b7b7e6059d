package kv

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// SchemaKey holds the layout version of a domain store, in the store's own
// key space; stores keep their records under other prefixes than "meta/".
var SchemaKey = []byte("meta/schema_version")

// OwnerKey names the service whose store the key space is (CONTRACT §0,
// "Store files").
var OwnerKey = []byte("meta/owner")

// Errors of EnsureSchema: the key space is another service's, or was
// written by a newer binary. Either stops the service before it serves.
var (
	ErrForeignStore = errors.New("the store belongs to another service")
	ErrNewerSchema  = errors.New("the store was written by a newer version")
)

// EnsureSchema checks and records a store's owner and layout version in one
// transaction, so that replicas starting together agree. A key space that
// another service owns, or written by a newer version, is refused. A key
// space without an owner gets owner: a new one, or one written before
// owners were recorded (which is then taken to be owner's). An older layout
// (from is 0 for a key space that has none) is handed to upgrade, which runs
// in the same transaction and brings the layout to version; upgrade may be
// nil when there is nothing to convert.
func EnsureSchema(ctx context.Context, e Engine, owner string, version int, upgrade func(tx WriteTx, from int) error) error {
	return e.Update(ctx, func(tx WriteTx) error {
		if err := ensureOwner(tx, owner); err != nil {
			return err
		}
		from := 0
		raw, err := tx.Get(SchemaKey)
		if err != nil {
			return err
		}
		if raw != nil {
			if from, err = strconv.Atoi(string(raw)); err != nil {
				return fmt.Errorf("unreadable schema version %q", raw)
			}
		}
		switch {
		case from > version:
			return fmt.Errorf("%w: schema version %d, newer than this binary's %d", ErrNewerSchema, from, version)
		case from == version:
			return nil
		}
		if upgrade != nil {
			if err := upgrade(tx, from); err != nil {
				return fmt.Errorf("upgrade the layout from version %d to %d: %w", from, version, err)
			}
		}
		return tx.Put(SchemaKey, []byte(strconv.Itoa(version)))
	})
}

// ensureOwner refuses a key space another service owns and records owner
// in one that has none.
func ensureOwner(tx WriteTx, owner string) error {
	got, err := tx.Get(OwnerKey)
	if err != nil {
		return err
	}
	switch {
	case got == nil:
		return tx.Put(OwnerKey, []byte(owner))
	case string(got) != owner:
		return fmt.Errorf("%w: it is %s's, not %s's", ErrForeignStore, got, owner)
	}
	return nil
}
