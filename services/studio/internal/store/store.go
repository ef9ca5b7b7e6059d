// Package store keeps the studio's records — LLM settings, users and the
// index from API-key hash to user — in a kv engine (bbolt or etcd). It owns
// their encoding; the gRPC messages never reach the engine. Every method is
// one transaction; update functions may run more than once (kv).
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	fastjson "github.com/goccy/go-json"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

var (
	// ErrNotFound means no record has that id.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists means a user with that API-key hash exists.
	ErrAlreadyExists = errors.New("already exists")
)

// Store is the studio's domain store.
type Store struct{ kv kv.Engine }

// Open checks (and if needed upgrades) the layout of e's key space in one
// transaction and returns the store. The caller keeps owning e.
func Open(ctx context.Context, e kv.Engine) (*Store, error) {
	if err := kv.EnsureSchema(ctx, e, "studio", schemaVersion, upgrade); err != nil {
		return nil, fmt.Errorf("studio store: %w", err)
	}
	return &Store{kv: e}, nil
}

// Ready reports whether the engine answers (readiness).
func (s *Store) Ready(ctx context.Context) error { return s.kv.Ready(ctx) }

func putJSON(tx kv.WriteTx, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(key, raw)
}

// getJSON decodes key's value into v; ErrNotFound when absent.
func getJSON(tx kv.ReadTx, key []byte, v any, what string) error {
	raw, err := tx.Get(key)
	if err != nil {
		return err
	}
	return decode(raw, v, what)
}

func decode(raw []byte, v any, what string) error {
	if raw == nil {
		return ErrNotFound
	}
	// goccy/go-json decodes a record in about a third of encoding/json's
	// time; records are written with encoding/json.
	if err := fastjson.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}
