package store

import (
	"encoding/binary"
	"fmt"
)

// The key layout of the management store, all of it. Every index lives
// beside the records in the one key space and changes in the same
// transaction as the record it points at.
//
//	meta/schema_version                     layout version (kv.SchemaKey)
//	meta/owner                              "management": the service the store is (kv.OwnerKey)
//	api/<api_id>                            API record (encodeAPI)
//	apidb/<db id>                           → api_id
//	apicat/<u16 len><category><api_id>      → empty: APIs by category
//	apistaged/<classic api_id>              → the staged copy's api_id
//	apichild/<u16 len><base api_id><child>  → empty: child versions by base
//	user/<user id>                          user record (encodeUser)
//	userkey/<SHA-256 of the access key>     → user id
//	useremail/<lower-cased email>           → user id
//	settings/org_id                         the installation's organisation id (24 hex)
//	settings/bootstrap                      SHA-256 of the last --bootstrap-token (RetireBootstrap)
//	settings/service/<name>                 SHA-256 of the last key of service user <name> (EnsureServiceUser)
//	policy/<_id>                            security policy (encodeDoc: its id, exact bytes)
//	policyid/<id>                           → _id
//	asset/<_id>                             asset (encodeDoc)
//	assetid/<id>                            → _id
//	node/<node id>                          registered gateway node (encodeNode)
//	issuedkey/<key hash>                    a key issued through the gateways (encodeIssuedKey; never the key)
//	keyapi/<u16 len><api_id><key hash>      → empty: issued keys by API of their access_rights
//	keypolicy/<u16 len><policy><key hash>   → empty: issued keys by policy they apply
//
// Category counts are not stored: GET /api/apis/categories scans apicat/
// (once per revision of the key space, Store.CategoryCounts), so no single
// key is written by every API change.
var (
	apiPrefix       = []byte("api/")
	dbIDPrefix      = []byte("apidb/")
	categoryPrefix  = []byte("apicat/")
	stagedPrefix    = []byte("apistaged/")
	childPrefix     = []byte("apichild/")
	userPrefix      = []byte("user/")
	userKeyPrefix   = []byte("userkey/")
	userEmailPrefix = []byte("useremail/")
	orgIDKey        = []byte("settings/org_id")
	bootstrapKey    = []byte("settings/bootstrap")
	serviceKey      = []byte("settings/service/")
	policyPrefix    = []byte("policy/")
	policyIDPrefix  = []byte("policyid/")
	assetPrefix     = []byte("asset/")
	assetIDPrefix   = []byte("assetid/")
	nodePrefix      = []byte("node/")
	issuedKeyPrefix = []byte("issuedkey/")
	keyAPIPrefix    = []byte("keyapi/")
	keyPolicyPrefix = []byte("keypolicy/")
)

// key joins a prefix and one name.
func key(prefix []byte, name string) []byte {
	return appendKey(make([]byte, 0, len(prefix)+len(name)), prefix, name)
}

// appendKey appends key(prefix, name) to k.
func appendKey(k, prefix []byte, name string) []byte {
	return append(append(k, prefix...), name...)
}

// pairKey joins a prefix, a length-prefixed a and b; the length keeps
// "ab"+"c" apart from "a"+"bc", and every b of one a shares a prefix.
func pairKey(prefix []byte, a, b string) []byte {
	return appendPair(make([]byte, 0, len(prefix)+2+len(a)+len(b)), prefix, a, b)
}

// appendPair appends pairKey(prefix, a, b) to k.
func appendPair(k, prefix []byte, a, b string) []byte {
	k = append(k, prefix...)
	k = binary.BigEndian.AppendUint16(k, uint16(len(a)))
	k = append(k, a...)
	return append(k, b...)
}

// splitPair reads a pairKey back.
func splitPair(prefix, k []byte) (a, b string, err error) {
	k = k[len(prefix):]
	if len(k) < 2 || int(binary.BigEndian.Uint16(k)) > len(k)-2 {
		return "", "", fmt.Errorf("%w: index key %q", ErrCorrupt, k)
	}
	n := int(binary.BigEndian.Uint16(k))
	return string(k[2 : 2+n]), string(k[2+n:]), nil
}
