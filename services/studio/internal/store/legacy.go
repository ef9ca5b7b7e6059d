package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

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
		rec, err := decodeV1LlmSettings(v)
		if err != nil {
			return fmt.Errorf("decode version-1 llm settings: %w", err)
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

// decodeV1LlmSettings reads a version-1 record: the protobuf encoding of the
// API's LlmSettingsAttributes message as it was then (model_name 1,
// max_length 2, max_tokens 3, min_length 4, seed 5, top_k 6 (int32);
// temperature 7, top_p 8, repetition_penalty 9 (double); stop_words 10
// (repeated string); metadata 11 (google.protobuf.Struct); system_prompt 12).
// It is read field by field here, so the store does not link the API's
// generated package (and with it the REST gateway's runtime).
func decodeV1LlmSettings(b []byte) (LlmSettings, error) {
	var rec LlmSettings
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return rec, protowire.ParseError(n)
		}
		b = b[n:]
		want := map[protowire.Number]protowire.Type{1: protowire.BytesType, 7: protowire.Fixed64Type, 8: protowire.Fixed64Type,
			9: protowire.Fixed64Type, 10: protowire.BytesType, 11: protowire.BytesType, 12: protowire.BytesType}[num]
		if num >= 2 && num <= 6 {
			want = protowire.VarintType
		}
		if want != typ || num < 1 || num > 12 {
			// a field this version did not write, or one of another type: skip it as protobuf does
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return rec, protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return rec, protowire.ParseError(n)
			}
			b = b[n:]
			*[...]*int32{2: &rec.MaxLength, 3: &rec.MaxTokens, 4: &rec.MinLength, 5: &rec.Seed, 6: &rec.TopK}[num] = int32(v)
		case protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return rec, protowire.ParseError(n)
			}
			b = b[n:]
			*[...]*float64{7: &rec.Temperature, 8: &rec.TopP, 9: &rec.RepetitionPenalty}[num] = math.Float64frombits(v)
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return rec, protowire.ParseError(n)
			}
			b = b[n:]
			switch num {
			case 1:
				rec.ModelName = string(v)
			case 10:
				rec.StopWords = append(rec.StopWords, string(v))
			case 12:
				rec.SystemPrompt = string(v)
			case 11:
				var m structpb.Struct
				if err := proto.Unmarshal(v, &m); err != nil {
					return rec, err
				}
				meta, err := protojson.Marshal(&m)
				if err != nil {
					return rec, err
				}
				rec.Metadata = meta
			}
		}
	}
	return rec, nil
}
