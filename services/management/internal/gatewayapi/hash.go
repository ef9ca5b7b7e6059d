package gatewayapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strings"

	"github.com/TykTechnologies/murmur3"
)

// Hash is the name a Tyk Gateway with hash_keys stores a key under (and
// answers as key_hash): the hex digest of the key with the algorithm its
// token names ({"h":..} in a base64 JSON token: sha256, murmur64,
// murmur128; murmur32 otherwise, the gateways' legacy keys). It uses the
// gateways' own murmur3 module, whose 32-bit digest differs from the
// textbook one.
func Hash(key string) string {
	var h hash.Hash
	switch tokenAlgorithm(key) {
	case "sha256":
		h = sha256.New()
	case "murmur64":
		h = murmur3.New64()
	case "murmur128":
		h = murmur3.New128()
	default:
		h = murmur3.New32()
	}
	h.Write([]byte(key))
	return hex.EncodeToString(h.Sum(nil))
}

// tokenAlgorithm is the "h" of a base64 JSON token ("" for other keys).
func tokenAlgorithm(key string) string {
	if !strings.HasPrefix(key, "ey") {
		return ""
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return ""
	}
	var t struct {
		H string `json:"h"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return ""
	}
	return t.H
}
