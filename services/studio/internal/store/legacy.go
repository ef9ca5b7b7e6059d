package store

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Version 1 of the layout was a bbolt file with one bucket per kind:
// llm_settings (id → the gRPC message LlmSettingsAttributes, protobuf),
// users (id → JSON with the id and key_hash), user_keys (hash → id) and meta.
// The bbolt engine moves such buckets under legacy/<bucket>/ when it opens
// the file, carrying each bucket's sequence over to the sequence of the same
// name; upgrade converts the records to this layout and deletes the legacy
// keys, in the schema transaction.
var (
	legacyPrefix  = []byte("legacy/")
	legacyVersion = []byte("legacy/meta/schema_version")
	legacyLlm     = []byte("legacy/llm_settings/")
	legacyUsers   = []byte("legacy/users/")
)

func upgrade(tx kv.WriteTx, from int) error {
	v, err := tx.Get(legacyVersion)
	if err != nil || v == nil {
		return err // a new key space: nothing to convert
	}
	if string(v) != "1" {
		return fmt.Errorf("a bbolt file of studio layout version %q, which this binary cannot convert", v)
	}
	err = tx.Scan(legacyLlm, nil, func(k, v []byte) error {
		var m studiov1.LlmSettingsAttributes
		if err := proto.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("decode version-1 llm settings: %w", err)
		}
		rec := LlmSettings{ModelName: m.GetModelName(), MaxLength: m.GetMaxLength(), MaxTokens: m.GetMaxTokens(),
			MinLength: m.GetMinLength(), Seed: m.GetSeed(), TopK: m.GetTopK(), Temperature: m.GetTemperature(),
			TopP: m.GetTopP(), RepetitionPenalty: m.GetRepetitionPenalty(), StopWords: m.GetStopWords(), SystemPrompt: m.GetSystemPrompt()}
		if m.GetMetadata() != nil {
			if rec.Metadata, err = protojson.Marshal(m.GetMetadata()); err != nil {
				return err
			}
		}
		id, err := legacyID(k, legacyLlm)
		if err != nil {
			return err
		}
		return putJSON(tx, llmKey(id), rec)
	})
	if err != nil {
		return err
	}
	err = tx.Scan(legacyUsers, nil, func(k, v []byte) error {
		var u User
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("decode version-1 user: %w", err)
		}
		id, err := legacyID(k, legacyUsers)
		if err != nil {
			return err
		}
		if err := putJSON(tx, userKey(id), u); err != nil {
			return err
		}
		if err := tx.Put(userKeyKey(u.KeyHash), idKey(nil, id)); err != nil {
			return err
		}
		if u.IsAdmin {
			return tx.Put(adminKey(id), []byte("1"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tx.Scan(legacyPrefix, nil, func(k, _ []byte) error { return tx.Delete(bytes.Clone(k)) })
}

func legacyID(k, prefix []byte) (uint32, error) {
	if id := idOf(k, prefix); id != 0 {
		return id, nil
	}
	return 0, fmt.Errorf("version-1 key %q does not end in an id", k)
}
