package convert

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// Pre-normalisation: bring a stored classic definition into the shape Tyk's own migration expects
// (DecodeFromDB and the first steps of APIDefinition.Migrate), and refuse the settings that have no Tyk OAS
// equivalent. Problems are recorded on the converter; normalisation never stops early, so that one run
// reports every problem.

// Auth config names, as Tyk names the OAS security schemes.
const (
	authTokenType     = "authToken"
	jwtType           = "jwt"
	basicType         = "basic"
	oauthType         = "oauth"
	externalOAuthType = "externalOAuth"
	hmacType          = "hmac"
	oidcType          = "oidc"
	coprocessType     = "coprocess"
)

// httpMethods are the methods an OpenAPI 3.0 path item can hold.
var httpMethods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

// domainPattern is X-Tyk-DomainDef of the extension schema.
var domainPattern = regexp.MustCompile(`^([*a-zA-Z0-9-]+(\.[*a-zA-Z0-9-]+)*)(:\d+)?$`)

func (c *converter) normalise() {
	api := c.api
	c.decodeFromDB()
	c.refuseUnsupported()

	// migrateCustomPluginAuth
	if api.UseGoPluginAuth || api.EnableCoprocessAuth {
		api.CustomPluginAuthEnabled = true
	}
	// The gateway falls back to auth token authentication when an API is not keyless and enables no other
	// method; Tyk OAS has no such fallback, so make it explicit.
	if !api.UseKeyless && !api.UseStandardAuth && !api.UseBasicAuth && !api.EnableJWT && !api.UseOauth2 &&
		!api.EnableSignatureChecking && !api.UseOpenID && !api.CustomPluginAuthEnabled && !api.ExternalOAuth.Enabled {
		api.UseStandardAuth = true
	}
	c.migrateAuthConfigs()
	c.migrateScopes()

	for _, key := range sortedKeys(api.VersionData.Versions) {
		v := api.VersionData.Versions[key]
		if v == nil {
			v = &versionInfo{}
			api.VersionData.Versions[key] = v
		}
		c.normaliseVersion(key, v)
	}
}

// decodeFromDB undoes the Dashboard's EncodeForDB: base64 version keys, base64 certificate and public key
// domains, and validate_json schemas stored as schema_b64. Version keys are decoded only when every key
// decodes to printable text (a verbatim definition keeps its keys); domains only when they decode to a domain.
func (c *converter) decodeFromDB() {
	api := c.api
	if vs := api.VersionData.Versions; len(vs) > 0 {
		decoded := make(map[string]*versionInfo, len(vs))
		for k, v := range vs {
			d, ok := decodeBase64Text(k)
			if !ok || k == "" {
				decoded = nil
				break
			}
			if v != nil && v.Name == k {
				v.Name = d
			}
			decoded[d] = v
		}
		if len(decoded) == len(vs) {
			api.VersionData.Versions = decoded
		}
	}
	api.UpstreamCertificates = decodeDomainKeys(api.UpstreamCertificates)
	api.PinnedPublicKeys = decodeDomainKeys(api.PinnedPublicKeys)
}

// decodeBase64Text decodes standard base64 into printable UTF-8 text.
func decodeBase64Text(s string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || !utf8.Valid(b) || len(b) == 0 {
		return "", false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return "", false
		}
	}
	return string(b), true
}

func decodeDomainKeys(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if d, ok := decodeBase64Text(k); ok && domainPattern.MatchString(d) && !domainPattern.MatchString(k) {
			k = d
		}
		out[k] = v
	}
	return out
}

// refuseUnsupported fails the API-level settings that have no Tyk OAS equivalent (reference §3.2).
func (c *converter) refuseUnsupported() {
	api := c.api
	if api.EnableProxyProtocol {
		c.fail("enable_proxy_protocol: the PROXY protocol has no Tyk OAS equivalent")
	}
	if inUse(api.JWTJWKSURIs) {
		c.fail("jwt_jwks_uris: JWKS URI lists are not converted by this migration; remove them and set securitySchemes.jwt.jwksURIs on the migrated API")
	}
	if api.JSONRPCVersion != "" {
		c.fail("json_rpc_version: JSON-RPC APIs have no Tyk OAS equivalent")
	}
	if api.ApplicationProtocol != "" {
		c.fail("application_protocol: %q has no Tyk OAS equivalent", api.ApplicationProtocol)
	}
	if len(api.CustomMiddleware.TrafficLogs) > 0 {
		c.fail("custom_middleware.traffic_logs: traffic log plugins have no Tyk OAS equivalent")
	}
	if api.AuthProvider.Name != "" || api.AuthProvider.StorageEngine != "" {
		c.fail("auth_provider: a custom auth provider has no Tyk OAS equivalent")
	}
	if api.SessionProvider.Name != "" || api.SessionProvider.StorageEngine != "" {
		c.fail("session_provider: a custom session provider has no Tyk OAS equivalent")
	}
	if len(api.SecurityRequirements) > 0 {
		c.fail("security_requirements: multi-auth security requirements are not supported by this migration")
	}
	for i, p := range api.ResponseProcessors {
		switch p.Name {
		case "response_body_transform", "header_injector":
			// Implied in Tyk OAS by transformResponseBody and transformResponseHeaders.
			if !isEmptyJSON(p.Options) {
				c.fail("response_processors[%d]: options of %q have no Tyk OAS equivalent", i, p.Name)
			}
		default:
			c.fail("response_processors[%d]: response processor %q has no Tyk OAS equivalent", i, p.Name)
		}
	}
	if api.Definition.Enabled || len(api.Definition.Versions) > 0 {
		c.fail("definition: not migratable - new versioning is already enabled")
	}
	if api.VersionData.NotVersioned && len(api.VersionData.Versions) > 1 {
		c.fail("version_data: not migratable - if not versioned, there should be just one version info in versions map")
	}
}

// inUse reports whether a raw setting holds anything: not absent, null, false, 0, "" or empty.
func inUse(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "false", "0", `""`, "[]", "{}":
		return false
	}
	return true
}

func isEmptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// migrateAuthConfigs copies the deprecated auth block into auth_configs where token or JWT authentication
// uses it (as DecodeFromDB does, and also for the implicit auth token), gives every other enabled method
// without an entry the gateway's default (credentials in the Authorization header; Tyk's Fill would drop the
// method, weakening a multi-auth API), drops the auth configs of methods that are not enabled, and names each
// remaining config after its key.
func (c *converter) migrateAuthConfigs() {
	api := c.api
	if api.AuthConfigs == nil {
		api.AuthConfigs = map[string]authConfig{}
	}
	inUse := map[string]bool{
		authTokenType:     api.UseStandardAuth,
		jwtType:           api.EnableJWT,
		basicType:         api.UseBasicAuth,
		oauthType:         api.UseOauth2,
		externalOAuthType: api.ExternalOAuth.Enabled,
		hmacType:          api.EnableSignatureChecking,
		oidcType:          api.UseOpenID,
		coprocessType:     api.CustomPluginAuthEnabled && api.CustomMiddleware.Driver != "goplugin",
	}
	for t, used := range inUse {
		if _, ok := api.AuthConfigs[t]; !ok && used {
			if t == authTokenType || t == jwtType {
				api.AuthConfigs[t] = api.Auth
			} else {
				api.AuthConfigs[t] = authConfig{}
			}
		}
	}
	for name, ac := range api.AuthConfigs {
		if !inUse[name] {
			delete(api.AuthConfigs, name)
			continue
		}
		ac.Name = name
		api.AuthConfigs[name] = ac
	}
}

// migrateScopes moves jwt_scope_claim_name and jwt_scope_to_policy_mapping into scopes.jwt (scopes.oidc
// when OpenID Connect is used), unless the new fields are already set.
func (c *converter) migrateScopes() {
	api := c.api
	if api.JWTScopeClaimName == "" && len(api.JWTScopeToPolicyMapping) == 0 {
		return
	}
	dst := &api.Scopes.JWT
	if api.UseOpenID {
		dst = &api.Scopes.OIDC
	}
	if dst.ScopeClaimName == "" && len(dst.ScopeToPolicy) == 0 {
		dst.ScopeClaimName = api.JWTScopeClaimName
		dst.ScopeToPolicy = api.JWTScopeToPolicyMapping
	}
}

// normaliseVersion checks and normalises the endpoint settings of one version: leading slashes, upper-case
// methods, method_actions expanded into one entry per method plus mock responses, simple cache lists turned
// into advanced cache entries, and base64 validate_json schemas decoded.
func (c *converter) normaliseVersion(key string, v *versionInfo) {
	if inUse(v.GlobalEnforceTimeout) && !v.GlobalEnforceTimeoutDisabled {
		c.fail("version_data.versions[%q].global_enforce_timeout: the global enforced timeout is not converted by this migration; remove it and set upstream.enforceTimeout on the migrated API", key)
	}
	at := "version_data.versions[" + strconv.Quote(key) + "]"
	ep := &v.ExtendedPaths
	field := func(name string) listField { return listField{at, name} }

	c.refuseLegacyLists(at, field, v)

	ep.WhiteList = c.expandEndpointMeta(field("white_list"), ep.WhiteList, &ep.MockResponse)
	ep.BlackList = c.expandEndpointMeta(field("black_list"), ep.BlackList, &ep.MockResponse)
	ep.Ignored = c.expandEndpointMeta(field("ignored"), ep.Ignored, &ep.MockResponse)
	for i := range ep.MockResponse {
		m := &ep.MockResponse[i]
		c.endpoint(field("mock_response"), &m.Path, &m.Method)
	}
	if !v.UseExtendedPaths && !c.api.UseKeyless {
		c.refuseInertAuthSkips(field, ep)
	}
	c.migrateCacheList(v)
	c.normaliseEndpoints(field, ep)
	c.normaliseValidateJSON(field, ep)
}

// refuseLegacyLists fails the legacy path lists (use_extended_paths false) and the lists that have no Tyk
// OAS equivalent.
func (c *converter) refuseLegacyLists(at string, field func(string) listField, v *versionInfo) {
	ep := &v.ExtendedPaths
	if !v.UseExtendedPaths {
		for _, l := range []struct {
			name string
			list []string
		}{{"ignored", v.Paths.Ignored}, {"white_list", v.Paths.WhiteList}, {"black_list", v.Paths.BlackList}} {
			for _, p := range l.list {
				c.fail("%s.paths.%s: %s: legacy (use_extended_paths false) path lists have no Tyk OAS equivalent; move the entry to extended_paths", at, l.name, p)
			}
		}
	}
	for _, l := range []struct {
		name string
		list []endpointRef
	}{{"transform_jq", ep.TransformJQ}, {"transform_jq_response", ep.TransformJQResponse}, {"persist_graphql", ep.PersistGraphQL}} {
		for _, e := range l.list {
			c.fail("%s: %s %s: %s has no Tyk OAS equivalent", field(l.name), e.Method, e.Path, l.name)
		}
	}
}

// migrateCacheList is MigrateCachePlugin: simple cache entries become GET, HEAD and OPTIONS advanced entries.
// Like Tyk, only when extended paths are in use; otherwise the list is inert in classic too.
func (c *converter) migrateCacheList(v *versionInfo) {
	ep := &v.ExtendedPaths
	if v.UseExtendedPaths && len(ep.Cached) > 0 {
		opts := c.api.CacheOptions
		timeout := opts.CacheTimeout
		if timeout == 0 {
			timeout = 60
		}
		var adv []cacheMeta
		for _, p := range ep.Cached {
			for _, m := range []string{"GET", "HEAD", "OPTIONS"} {
				adv = append(adv, cacheMeta{Disabled: !opts.EnableCache, Path: p, Method: m, Timeout: timeout,
					CacheOnlyResponseCodes: opts.CacheOnlyResponseCodes})
			}
		}
		ep.AdvanceCacheConfig = append(adv, ep.AdvanceCacheConfig...)
	}
	ep.Cached = nil
}

// normaliseEndpoints checks the path and method of the entries of the other lists. In each per-method list
// the gateway applies the first entry that matches, so an empty path converts as in the transform lists
// (emptyPathsToRoot).
func (c *converter) normaliseEndpoints(field func(string) listField, ep *extendedPaths) {
	transformEndpoints(c, field("advance_cache_config"), ep.AdvanceCacheConfig, func(e *cacheMeta) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
	transformEndpoints(c, field("transform"), ep.Transform, templateRef)
	transformEndpoints(c, field("transform_response"), ep.TransformResponse, templateRef)
	transformEndpoints(c, field("transform_headers"), ep.TransformHeader, headerRef)
	transformEndpoints(c, field("transform_response_headers"), ep.TransformResponseHeader, headerRef)
	transformEndpoints(c, field("hard_timeouts"), ep.HardTimeouts, func(e *hardTimeoutMeta) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
	transformEndpoints(c, field("circuit_breakers"), ep.CircuitBreaker, func(e *circuitBreakerMeta) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
	transformEndpoints(c, field("url_rewrites"), ep.URLRewrite, func(e *urlRewriteMeta) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
	transformEndpoints(c, field("virtual"), ep.Virtual, func(e *virtualMeta) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
	transformEndpoints(c, field("size_limits"), ep.SizeLimit, func(e *sizeLimitMeta) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
	transformEndpoints(c, field("method_transforms"), ep.MethodTransforms, func(e *methodTransform) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
	ref := func(e *endpointRef) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled }
	transformEndpoints(c, field("track_endpoints"), ep.TrackEndpoints, ref)
	transformEndpoints(c, field("do_not_track_endpoints"), ep.DoNotTrackEndpoints, ref)
	transformEndpoints(c, field("internal"), ep.Internal, ref)
	transformEndpoints(c, field("go_plugin"), ep.GoPlugin, func(e *goPluginMeta) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
	transformEndpoints(c, field("rate_limit"), ep.RateLimit, func(e *endpointRateLimit) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled })
}

// normaliseValidateJSON checks the validate_json entries and decodes the schemas stored as schema_b64.
func (c *converter) normaliseValidateJSON(field func(string) listField, ep *extendedPaths) {
	for i := range ep.ValidateJSON {
		e := &ep.ValidateJSON[i]
		if !c.endpoint(field("validate_json"), &e.Path, &e.Method) {
			continue
		}
		if len(e.Schema) == 0 && e.SchemaB64 != "" {
			raw, err := base64.StdEncoding.DecodeString(e.SchemaB64)
			if err == nil {
				err = json.Unmarshal(raw, &e.Schema)
			}
			if err != nil {
				c.fail("%s: %s %s: schema_b64 is not a base64-encoded JSON schema: %v", field("validate_json"), e.Method, e.Path, err)
				continue
			}
		}
		if len(e.Schema) == 0 {
			c.fail("%s: %s %s: the entry has no schema", field("validate_json"), e.Method, e.Path)
		}
	}
}

// refuseInertAuthSkips fails the entries of an inert extended_paths (use_extended_paths false: the gateway
// reads only the legacy path lists) that would skip authentication in Tyk OAS: ignored entries and mock
// responses. Classic authenticates those endpoints; every other inert entry converts as Tyk converts it.
func (c *converter) refuseInertAuthSkips(field func(string) listField, ep *extendedPaths) {
	const why = "use_extended_paths is false, so classic ignores this entry and authenticates the endpoint, " +
		"while Tyk OAS would skip authentication there; set use_extended_paths to true or remove the entry"
	for _, e := range ep.Ignored {
		if !e.Disabled {
			c.fail("%s: %s %s: %s", field("ignored"), e.Method, e.Path, why)
		}
	}
	for _, m := range ep.MockResponse {
		if f := m.origin; !m.Disabled {
			if f.name == "" {
				f = field("mock_response")
			}
			c.fail("%s: %s %s: %s", f, m.Method, m.Path, why)
		}
	}
}

// expandEndpointMeta implements MigrateEndpointMeta for one allow, block or ignore list: each method of
// method_actions becomes an entry of its own, and a "reply" action also becomes a mock response. Entries
// that use the newer "method" field instead of method_actions are kept (Tyk drops them, which would remove
// an allow list). An entry with neither applies to no method; it cannot be expressed and fails.
func (c *converter) expandEndpointMeta(field listField, list []endpointMeta, mocks *[]mockResponseMeta) []endpointMeta {
	if len(list) == 0 {
		return nil
	}
	n := 0
	for _, e := range list {
		n += max(len(e.MethodActions), 1)
	}
	out := make([]endpointMeta, 0, n)
	actions := listField{field.at, field.name + ".method_actions"}
	for _, e := range list {
		if !c.endpoint(field, &e.Path, nil) {
			continue
		}
		if len(e.MethodActions) == 0 {
			if e.Method == "" {
				c.fail("%s: %s: the entry has neither method nor method_actions", field, e.Path)
				continue
			}
			if c.endpoint(field, &e.Path, &e.Method) {
				out = append(out, endpointMeta{Disabled: e.Disabled, Path: e.Path, Method: e.Method, IgnoreCase: e.IgnoreCase})
			}
			continue
		}
		for _, m := range sortedKeys(e.MethodActions) {
			action := e.MethodActions[m]
			method := m
			if !c.endpoint(actions, &e.Path, &method) {
				continue
			}
			out = append(out, endpointMeta{Disabled: e.Disabled, Path: e.Path, Method: method, IgnoreCase: e.IgnoreCase})
			switch action.Action {
			case "", "no_action":
			case "reply":
				*mocks = append(*mocks, mockResponseMeta{Disabled: e.Disabled, Path: e.Path, Method: method,
					IgnoreCase: e.IgnoreCase, Code: action.Code, Body: action.Data, Headers: action.Headers, origin: actions})
			default:
				c.fail("%s: %s %s: method action %q is not one of no_action, reply", field, method, e.Path, action.Action)
			}
		}
	}
	return out
}

// listField names a list of a version's extended_paths in messages; its text is built only for a message.
type listField struct{ at, name string }

func (f listField) String() string { return f.at + ".extended_paths." + f.name }

// transformEndpoints normalises the entries of a per-method list: empty paths first (emptyPathsToRoot), then
// every entry's path and method (endpoint). ref gives an entry's path, method and disabled flag.
func transformEndpoints[E any](c *converter, f listField, list []E, ref func(e *E) (path, method *string, disabled bool)) {
	c.emptyPathsToRoot(f, len(list), func(i int) (*string, string, bool) {
		p, m, off := ref(&list[i])
		return p, *m, off
	})
	for i := range list {
		p, m, _ := ref(&list[i])
		c.endpoint(f, p, m)
	}
}

func templateRef(e *templateMeta) (*string, *string, bool)  { return &e.Path, &e.Method, e.Disabled }
func headerRef(e *headerInjection) (*string, *string, bool) { return &e.Path, &e.Method, e.Disabled }

// emptyPathsToRoot converts the entries of a per-method list (entry i given by at) whose path is empty.
// The gateway compiles an entry's path into an unanchored regular expression and applies, per method, the
// first entry of the list that matches (gateway/model_apispec.go, CheckSpecMatchesStatus): an empty path
// matches every path, as "/" does, and the Tyk OAS operation "/" sorts after every other path when the
// gateway turns operations back into these lists (oasutil.SortByPathLength). So an empty-path entry becomes
// the operation "/" when it is the last enabled entry for its method and no other entry of the method has
// the path "/" or "" (both would be one operation); otherwise its path stays empty and endpoint refuses it.
func (c *converter) emptyPathsToRoot(f listField, n int, at func(i int) (path *string, method string, disabled bool)) {
	for i := range n {
		p, m, off := at(i)
		if *p != "" {
			continue
		}
		method := strings.ToUpper(strings.TrimSpace(m))
		keep := true
		for j := range n {
			q, m2, off2 := at(j)
			if j == i || strings.ToUpper(strings.TrimSpace(m2)) != method {
				continue
			}
			if *q == "" || *q == "/" || (j > i && !off && !off2) {
				keep = false
			}
		}
		if !keep {
			continue
		}
		*p = "/"
		c.warn("%s: %s entry with an empty path: it is the operation %s /, which matches every path as the empty path "+
			"does, unless the gateway sets http_server_options.enable_path_suffix_matching (then it matches only paths "+
			"that end in /)", f, method, method)
	}
}

// endpoint normalises the path (a leading slash) and, when method is not nil, the method (upper case) of
// one endpoint entry. It reports whether they are usable.
func (c *converter) endpoint(field listField, path, method *string) bool {
	if strings.TrimSpace(*path) == "" {
		m := ""
		if method != nil {
			m = *method + " "
		}
		c.fail("%s: %sentry has an empty path", field, m)
		return false
	}
	if !strings.HasPrefix(*path, "/") {
		*path = "/" + *path
	}
	if method == nil {
		return true
	}
	m := strings.ToUpper(strings.TrimSpace(*method))
	if !slices.Contains(httpMethods, m) {
		c.fail("%s: %s: unsupported HTTP method %q", field, *path, *method)
		return false
	}
	*method = m
	return true
}
