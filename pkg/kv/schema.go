package kv

import (
	"context"
	"fmt"
	"strconv"
)

// SchemaKey holds the layout version of a domain store, in the store's own
// key space; stores keep their records under other prefixes than "meta/".
var SchemaKey = []byte("meta/schema_version")

// EnsureSchema checks and records a store's layout version in one
// transaction, so that replicas starting together agree. A key space written
// by a newer version is refused. An older one (from is 0 for a key space that
// has none) is handed to upgrade, which runs in the same transaction and
// brings the layout to version; upgrade may be nil when there is nothing to
// convert.
func EnsureSchema(ctx context.Context, e Engine, version int, upgrade func(tx WriteTx, from int) error) error {
	return e.Update(ctx, func(tx WriteTx) error {
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
			return fmt.Errorf("schema version %d is newer than this binary's %d", from, version)
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
