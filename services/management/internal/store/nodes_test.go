package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestNodesBounded (issue 32): a node's heartbeat reads its own record only;
// a new node beyond MaxNodes is refused; PruneNodes removes the stale ones,
// after which new nodes register again.
func TestNodesBounded(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Now().UTC()
	stale := now.Add(-time.Hour)
	err := s.Update(ctx, func(tx *Tx) error {
		for i := range MaxNodes {
			seen := now
			if i%2 == 0 {
				seen = stale
			}
			b, _ := json.Marshal(Node{ID: fmt.Sprintf("%024x", i), Registered: seen, LastSeen: seen})
			if err := tx.put(key(nodePrefix, fmt.Sprintf("%024x", i)), b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SeenNode(ctx, Node{ID: "new", LastSeen: now}); !errors.Is(err, ErrTooManyNodes) {
		t.Fatalf("node %d: %v, want ErrTooManyNodes", MaxNodes+1, err)
	}
	if err := s.SeenNode(ctx, Node{ID: fmt.Sprintf("%024x", 1), Hostname: "h", LastSeen: now.Add(time.Second)}); err != nil {
		t.Fatalf("a registered node's heartbeat at the limit: %v", err)
	}
	n, err := s.PruneNodes(ctx, now.Add(-time.Minute))
	if err != nil || n != MaxNodes/2 {
		t.Fatalf("pruned %d (%v), want %d", n, err, MaxNodes/2)
	}
	if err := s.SeenNode(ctx, Node{ID: "new", LastSeen: now}); err != nil {
		t.Fatalf("a new node after pruning: %v", err)
	}
	nodes, err := s.Nodes(ctx)
	if err != nil || len(nodes) != MaxNodes/2+1 {
		t.Fatalf("%d nodes (%v), want %d", len(nodes), err, MaxNodes/2+1)
	}
}

// BenchmarkSeenNode is a heartbeat's write with MaxNodes-1 other nodes
// stored: before issue 32 it scanned (and decoded) every node record,
// about 20 a second at 10,000 nodes.
func BenchmarkSeenNode(b *testing.B) {
	s := open(b)
	ctx := context.Background()
	now := time.Now().UTC()
	err := s.Update(ctx, func(tx *Tx) error {
		for i := range MaxNodes - 1 {
			v, _ := json.Marshal(Node{ID: fmt.Sprintf("%024x", i), Registered: now, LastSeen: now})
			if err := tx.put(key(nodePrefix, fmt.Sprintf("%024x", i)), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := s.SeenNode(ctx, Node{ID: fmt.Sprintf("%024x", i%(MaxNodes-1)), LastSeen: now.Add(time.Duration(i))}); err != nil {
			b.Fatal(err)
		}
	}
}
