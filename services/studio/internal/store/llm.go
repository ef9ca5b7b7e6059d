package store

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// LlmSettings is a stored LLM settings record. The JSON names are the
// store's encoding.
type LlmSettings struct {
	ID                uint32   `json:"-"`
	ModelName         string   `json:"model_name"`
	MaxLength         int32    `json:"max_length,omitempty"`
	MaxTokens         int32    `json:"max_tokens,omitempty"`
	MinLength         int32    `json:"min_length,omitempty"`
	Seed              int32    `json:"seed,omitempty"`
	TopK              int32    `json:"top_k,omitempty"`
	Temperature       float64  `json:"temperature,omitempty"`
	TopP              float64  `json:"top_p,omitempty"`
	RepetitionPenalty float64  `json:"repetition_penalty,omitempty"`
	StopWords         []string `json:"stop_words,omitempty"`
	// Metadata is a JSON object, or empty for none.
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	SystemPrompt string          `json:"system_prompt,omitempty"`
}

// CreateLlmSettings stores rec under a new id and returns it with the id.
func (s *Store) CreateLlmSettings(ctx context.Context, rec LlmSettings) (LlmSettings, error) {
	var id uint32
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		n, err := kv.NextID32(tx, llmSeq)
		if err != nil {
			return err
		}
		auditctx.SetObject(ctx, strconv.FormatUint(uint64(n), 10)) // the request's audit entry names the new record
		if err := putJSON(tx, llmKey(n), rec); err != nil {
			return err
		}
		id = n
		return nil
	})
	rec.ID = id
	return rec, err
}

// GetLlmSettings reads one record.
func (s *Store) GetLlmSettings(ctx context.Context, id uint32) (LlmSettings, error) {
	var rec LlmSettings
	err := s.kv.View(ctx, func(tx kv.ReadTx) error { return getJSON(tx, llmKey(id), &rec, "llm settings") })
	rec.ID = id
	return rec, err
}

// UpdateLlmSettings runs change on the stored record and stores the result
// unless change fails, in one transaction. change may run more than once,
// each time on a fresh copy of the stored record.
func (s *Store) UpdateLlmSettings(ctx context.Context, id uint32, change func(*LlmSettings) error) (LlmSettings, error) {
	var out LlmSettings
	err := s.kv.Update(ctx, func(tx kv.WriteTx) error {
		var rec LlmSettings
		if err := getJSON(tx, llmKey(id), &rec, "llm settings"); err != nil {
			return err
		}
		rec.ID = id
		if err := change(&rec); err != nil {
			return err
		}
		rec.ID = id
		if err := putJSON(tx, llmKey(id), rec); err != nil {
			return err
		}
		out = rec
		return nil
	})
	return out, err
}

// DeleteLlmSettings removes a record; its id is never handed out again.
func (s *Store) DeleteLlmSettings(ctx context.Context, id uint32) error {
	return s.kv.Update(ctx, func(tx kv.WriteTx) error {
		v, err := tx.Get(llmKey(id))
		if err != nil {
			return err
		}
		if v == nil {
			return ErrNotFound
		}
		return tx.Delete(llmKey(id))
	})
}

// ListLlmSettings returns up to limit records after skipping offset, in
// ascending id order, and the number of records, from one snapshot.
func (s *Store) ListLlmSettings(ctx context.Context, offset, limit int) ([]LlmSettings, int, error) {
	var out []LlmSettings
	var total int
	err := s.kv.View(ctx, func(tx kv.ReadTx) error {
		var err error
		if total, err = tx.Count(llmPrefix); err != nil {
			return err
		}
		out = nil
		i := 0
		return tx.Scan(llmPrefix, nil, func(k, v []byte) error {
			if len(out) >= limit {
				return kv.ErrStop
			}
			if i++; i <= offset {
				return nil
			}
			var rec LlmSettings
			if err := decode(v, &rec, "llm settings"); err != nil {
				return err
			}
			rec.ID = idOf(k, llmPrefix)
			out = append(out, rec)
			return nil
		})
	})
	return out, total, err
}
