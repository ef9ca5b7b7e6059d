package store

import (
	"context"
	"encoding/json"
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

// SeenNode records that node n was seen at n.LastSeen: it creates the record
// (registered then) when there is none, else moves its last heartbeat
// forward and takes its hostname. Records not seen since prune are removed
// in the same transaction, so gateways that went away without
// de-registering do not pile up.
func (s *Store) SeenNode(ctx context.Context, n Node, prune time.Time) error {
	return s.Update(ctx, func(tx *Tx) error {
		var stale []string
		err := tx.r.Scan(nodePrefix, nil, func(k, v []byte) error {
			var old Node
			if err := json.Unmarshal(v, &old); err != nil {
				return fmt.Errorf("%w: node %q: %v", ErrCorrupt, k, err)
			}
			switch {
			case old.ID == n.ID:
				n.Registered = old.Registered
				if old.LastSeen.After(n.LastSeen) {
					n.LastSeen = old.LastSeen
				}
			case old.LastSeen.Before(prune):
				stale = append(stale, old.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range stale {
			if err := tx.del(key(nodePrefix, id)); err != nil {
				return err
			}
		}
		if n.Registered.IsZero() {
			n.Registered = n.LastSeen
		}
		v, err := json.Marshal(n)
		if err != nil {
			return err
		}
		return tx.put(key(nodePrefix, n.ID), v)
	})
}

// DeleteNode removes a node's record; an unknown node is no error.
func (s *Store) DeleteNode(ctx context.Context, id string) error {
	return s.Update(ctx, func(tx *Tx) error { return tx.del(key(nodePrefix, id)) })
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
