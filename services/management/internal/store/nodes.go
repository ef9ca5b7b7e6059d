package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Node is a Tyk Gateway registered with the service (CONTRACT §6). The
// record's encoding is this struct as JSON: the store's own type.
type Node struct {
	ID         string    `json:"id"`
	Hostname   string    `json:"hostname"`
	Registered time.Time `json:"registered"`
	LastSeen   time.Time `json:"last_seen"`
}

// MaxNodes is how many gateway nodes the store keeps; a node beyond it is
// refused (ErrTooManyNodes) until stale ones are pruned.
const MaxNodes = 10_000

// ErrTooManyNodes refuses a new node when MaxNodes are registered.
var ErrTooManyNodes = errors.New("too many gateway nodes registered")

// SeenNode records that node n was seen at n.LastSeen: it creates the record
// (registered then) when there is none — unless MaxNodes are registered
// (ErrTooManyNodes) — else moves its last heartbeat forward and takes its
// hostname. It reads the node's own record only (and, for a new node, the
// count of records), whatever the number of nodes; PruneNodes removes those
// that went away without de-registering.
func (s *Store) SeenNode(ctx context.Context, n Node) error {
	return s.Update(ctx, func(tx *Tx) error {
		v, err := tx.r.Get(key(nodePrefix, n.ID))
		if err != nil {
			return err
		}
		if v != nil {
			var old Node
			if err := json.Unmarshal(v, &old); err != nil {
				return fmt.Errorf("%w: node %q: %v", ErrCorrupt, n.ID, err)
			}
			n.Registered = old.Registered
			if old.LastSeen.After(n.LastSeen) {
				n.LastSeen = old.LastSeen
			}
		} else {
			count, err := tx.r.Count(nodePrefix)
			if err != nil {
				return err
			}
			if count >= MaxNodes {
				return ErrTooManyNodes
			}
		}
		if n.Registered.IsZero() {
			n.Registered = n.LastSeen
		}
		b, err := json.Marshal(n)
		if err != nil {
			return err
		}
		return tx.put(key(nodePrefix, n.ID), b)
	})
}

// PruneNodes removes the records of nodes not seen since before, and
// returns how many it removed.
func (s *Store) PruneNodes(ctx context.Context, before time.Time) (int, error) {
	removed := 0
	err := s.Update(ctx, func(tx *Tx) error {
		var stale [][]byte
		err := tx.r.Scan(nodePrefix, nil, func(k, v []byte) error {
			var old Node
			if err := json.Unmarshal(v, &old); err != nil || old.LastSeen.Before(before) {
				stale = append(stale, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range stale {
			if err := tx.del(k); err != nil {
				return err
			}
		}
		removed = len(stale)
		return nil
	})
	return removed, err
}

// DeleteNode removes a node's record; an unknown node is no error.
func (s *Store) DeleteNode(ctx context.Context, id string) error {
	return s.Update(ctx, func(tx *Tx) error { return tx.delKey(nodePrefix, id) })
}

// Nodes lists the registered nodes in ID order.
func (s *Store) Nodes(ctx context.Context) ([]Node, error) {
	var out []Node
	err := s.View(ctx, func(tx *Tx) error {
		var list []Node
		err := tx.r.Scan(nodePrefix, nil, func(k, v []byte) error {
			var n Node
			if err := json.Unmarshal(v, &n); err != nil {
				return fmt.Errorf("%w: node %q: %v", ErrCorrupt, k, err)
			}
			list = append(list, n)
			return nil
		})
		out = list
		return err
	})
	return out, err
}
