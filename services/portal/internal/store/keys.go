package store

import "encoding/binary"

// schemaVersion is the layout below; raise it with an upgrade when it
// changes. Version 1 was the bucket-per-kind bbolt layout (legacy.go).
const schemaVersion = 2

// The portal's key space, all of it. IDs are uint32 big-endian, so a scan
// walks records in ascending id order.
//
//	product/<id>              → Product (JSON)
//	page/<product id><id>     → Page (JSON); the pages of a product are one range
//	pagehtml/<product id><id> → the page's Rendered (rendered.go): version, headings (JSON), HTML
//	order/<product id>        → its page ids in their order (uint32 big-endian each; order.go)
//	tag/<id>, category/<id>   → Label (JSON)
//	tagname/<name>            → tag id: the index that keeps names unique
//	categoryname/<name>       → category id, likewise
//	apikey/<sha256>           → Credential (JSON): admin API keys, known by hash
//	bootstrap                 → SHA-256 of the last --bootstrap-token (RetireBootstrap)
//	plan/<id>                 → Plan (JSON)
//	developer/<id>            → Developer (JSON)
//	developeremail/<e-mail>   → developer id: the index that keeps e-mails unique (lower case)
//	app/<id>                  → App (JSON), its credentials inside
//	appsof/<developer id><id> → empty: a developer's apps are one range
//	request/<id>              → AccessRequest (JSON)
//	session/<sha256>          → Session (JSON): developers' sign-ins, by the hash of the cookie
//	site/changed_at           → when pages last changed without an UpdatedAt moving (order.go)
//	meta/schema_version       (kv.EnsureSchema)
//	meta/owner                "portal" (kv.EnsureSchema)
//
// Sequences: products, pages (one for the pages of every product), tags,
// categories, and plans, developers, apps, credentials, requests (consumers.go): the names of the version-1 buckets, whose sequences the bbolt
// engine carries over.
var (
	productPrefix = []byte("product/")
	pagePrefix    = []byte("page/")
	orderPrefix   = []byte("order/")
	apiKeyPrefix  = []byte("apikey/")
	bootstrapKey  = []byte("bootstrap")
	changedKey    = []byte("site/changed_at")
)

const (
	productSeq = "products"
	pageSeq    = "pages"
)

// labelKeys is where a kind of label lives.
type labelKeys struct {
	prefix, namePrefix []byte
	seq                string
}

var labelLayout = map[LabelKind]labelKeys{
	Tags:       {[]byte("tag/"), []byte("tagname/"), "tags"},
	Categories: {[]byte("category/"), []byte("categoryname/"), "categories"},
}

func idKey(prefix []byte, ids ...uint32) []byte {
	k := append(make([]byte, 0, len(prefix)+4*len(ids)), prefix...)
	for _, id := range ids {
		k = binary.BigEndian.AppendUint32(k, id)
	}
	return k
}

func concat(prefix []byte, rest string) []byte {
	return append(append(make([]byte, 0, len(prefix)+len(rest)), prefix...), rest...)
}

func productKey(id uint32) []byte               { return idKey(productPrefix, id) }
func pagesOf(product uint32) []byte             { return idKey(pagePrefix, product) }
func pageKey(product, page uint32) []byte       { return idKey(pagePrefix, product, page) }
func orderKey(product uint32) []byte            { return idKey(orderPrefix, product) }
func labelKey(kind LabelKind, id uint32) []byte { return idKey(labelLayout[kind].prefix, id) }
func labelNameKey(kind LabelKind, name string) []byte {
	return concat(labelLayout[kind].namePrefix, name)
}
func apiKeyKey(hash []byte) []byte { return concat(apiKeyPrefix, string(hash)) }

// lastID reads the uint32 at the end of a key.
func lastID(key []byte) uint32 {
	if len(key) < 4 {
		return 0
	}
	return binary.BigEndian.Uint32(key[len(key)-4:])
}
