package store

import "encoding/binary"

// schemaVersion is the layout below; raise it with an upgrade when it
// changes. Version 1 was the bucket-per-kind bbolt layout (legacy.go).
const schemaVersion = 2

// The studio's key space, all of it. IDs are uint32 big-endian, so a scan
// walks records in ascending id order.
//
//	llm/<id>          → LLM settings record (llmRecord, JSON)
//	user/<id>         → user (userRecord, JSON)
//	userkey/<sha256>  → user id: the index from API-key hash to user
//	admin/<id>        → "1": the index of admin users, so "is there an admin" is one short scan
//	bootstrap         → SHA-256 of the last --bootstrap-token (RetireBootstrap)
//	meta/schema_version (kv.EnsureSchema)
//	meta/owner          "studio" (kv.EnsureSchema)
//
// Sequences: llm_settings (LLM settings ids), users (user ids); the names are
// the bbolt buckets of version 1, whose sequences the engine carries over.
var (
	llmPrefix     = []byte("llm/")
	userPrefix    = []byte("user/")
	userKeyPrefix = []byte("userkey/")
	adminPrefix   = []byte("admin/")
	bootstrapKey  = []byte("bootstrap")
)

const (
	llmSeq  = "llm_settings"
	userSeq = "users"
)

func idKey(prefix []byte, id uint32) []byte {
	return binary.BigEndian.AppendUint32(append(make([]byte, 0, len(prefix)+4), prefix...), id)
}

// idOf reads the id at the end of a key under prefix.
func idOf(key, prefix []byte) uint32 {
	if len(key) != len(prefix)+4 {
		return 0
	}
	return binary.BigEndian.Uint32(key[len(prefix):])
}

func llmKey(id uint32) []byte  { return idKey(llmPrefix, id) }
func userKey(id uint32) []byte { return idKey(userPrefix, id) }
func adminKey(id uint32) []byte {
	return idKey(adminPrefix, id)
}
func userKeyKey(hash []byte) []byte {
	return append(append(make([]byte, 0, len(userKeyPrefix)+len(hash)), userKeyPrefix...), hash...)
}
