package convert

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The constraints of the x-tyk-api-gateway JSON schema (draft-04, Tyk's apidef/oas/schema) that apply to what
// the converter writes, restated as the project's own tables so that every test checks them in a plain clone.
// The schema has no additionalProperties: false, so it constrains required members, types, enums, patterns
// and ranges; that is what is restated here. When the shared reference folder is present the tests also
// validate against the schema file itself (helpers_test.go), which keeps these tables honest.

// extRequired lists, for each object the converter can write (a location under x-tyk-api-gateway, "*" for
// any key or index), the members the schema requires of it.
var extRequired = []struct {
	at      string
	members []string
}{
	{"", []string{"info", "upstream", "server"}},
	{"info", []string{"name", "state"}},
	{"info.state", []string{"active"}},
	{"info.versioning", []string{"location"}},
	{"info.versioning.versions.*", []string{"name", "id"}},

	{"upstream.serviceDiscovery", []string{"enabled"}},
	{"upstream.serviceDiscovery.cache", []string{"enabled"}},
	{"upstream.uptimeTests", []string{"enabled"}},
	{"upstream.uptimeTests.serviceDiscovery", []string{"enabled"}},
	{"upstream.uptimeTests.serviceDiscovery.cache", []string{"enabled"}},
	{"upstream.mutualTLS", []string{"enabled", "domainToCertificateMapping"}},
	{"upstream.mutualTLS.domainToCertificateMapping.*", []string{"domain", "certificate"}},
	{"upstream.certificatePinning", []string{"enabled", "domainToPublicKeysMapping"}},
	{"upstream.rateLimit", []string{"enabled", "rate", "per"}},
	{"upstream.authentication", []string{"enabled"}},
	{"upstream.authentication.basicAuth", []string{"enabled", "username", "password"}},
	{"upstream.authentication.basicAuth.header", []string{"enabled"}},
	{"upstream.authentication.oauth", []string{"enabled", "allowedAuthorizeTypes"}},
	{"upstream.authentication.oauth.*.header", []string{"enabled"}},
	{"upstream.authentication.requestSigning", []string{"enabled"}},
	{"upstream.loadBalancing", []string{"enabled"}},
	{"upstream.loadBalancing.targets.*", []string{"url", "weight"}},
	{"upstream.preserveHostHeader", []string{"enabled"}},
	{"upstream.preserveTrailingSlash", []string{"enabled"}},
	{"upstream.proxy", []string{"enabled"}},

	{"server", []string{"listenPath"}},
	{"server.listenPath", []string{"value"}},
	{"server.authentication", []string{"enabled"}},
	{"server.authentication.securitySchemes.*", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.header", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.query", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.cookie", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.signatureValidation", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.signatureValidation.query", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.extractCredentialsFromBody", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.providers.*.jwt", []string{"enabled", "signingMethod", "source"}},
	{"server.authentication.securitySchemes.*.providers.*.introspection.cache", []string{"enabled", "timeout"}},
	{"server.authentication.hmac", []string{"enabled"}},
	{"server.authentication.oidc", []string{"enabled"}},
	{"server.authentication.custom", []string{"enabled"}},
	{"server.authentication.custom.config", []string{"enabled", "functionName"}},
	{"server.authentication.custom.config.idExtractor", []string{"enabled", "source", "with", "config"}},
	{"server.authentication.*.header", []string{"enabled"}},
	{"server.authentication.*.query", []string{"enabled"}},
	{"server.authentication.*.cookie", []string{"enabled"}},
	{"server.gatewayTags", []string{"enabled", "tags"}},
	{"server.customDomain", []string{"enabled", "name"}},
	{"server.detailedActivityLogs", []string{"enabled"}},
	{"server.detailedTracing", []string{"enabled"}},
	{"server.batchProcessing", []string{"enabled"}},

	{"middleware.global.pluginConfig.bundle", []string{"enabled", "path"}},
	{"middleware.global.pluginConfig.data", []string{"enabled", "value"}},
	{"middleware.global.cors", []string{"enabled"}},
	{"middleware.global.prePlugins.*", []string{"enabled", "functionName"}},
	{"middleware.global.postAuthenticationPlugins.*", []string{"enabled", "functionName"}},
	{"middleware.global.postPlugins.*", []string{"enabled", "functionName"}},
	{"middleware.global.responsePlugins.*", []string{"enabled", "functionName"}},
	{"middleware.global.transformRequestHeaders", []string{"enabled"}},
	{"middleware.global.transformResponseHeaders", []string{"enabled"}},
	{"middleware.global.*.add.*", []string{"name", "value"}},
	{"middleware.global.contextVariables", []string{"enabled"}},
	{"middleware.global.trafficLogs", []string{"enabled"}},
	{"middleware.global.trafficLogs.plugins.*", []string{"enabled"}},
	{"middleware.global.requestSizeLimit", []string{"enabled", "value"}},
	{"middleware.global.ignoreCase", []string{"enabled"}},

	{"middleware.operations.*.allow", []string{"enabled"}},
	{"middleware.operations.*.block", []string{"enabled"}},
	{"middleware.operations.*.ignoreAuthentication", []string{"enabled"}},
	{"middleware.operations.*.internal", []string{"enabled"}},
	{"middleware.operations.*.transformRequestMethod", []string{"enabled", "toMethod"}},
	{"middleware.operations.*.transformRequestBody", []string{"enabled", "format"}},
	{"middleware.operations.*.transformResponseBody", []string{"enabled", "format"}},
	{"middleware.operations.*.transformRequestHeaders", []string{"enabled"}},
	{"middleware.operations.*.transformResponseHeaders", []string{"enabled"}},
	{"middleware.operations.*.*.add.*", []string{"name", "value"}},
	{"middleware.operations.*.urlRewrite", []string{"enabled", "pattern", "rewriteTo"}},
	{"middleware.operations.*.urlRewrite.triggers.*", []string{"condition", "rewriteTo"}},
	{"middleware.operations.*.urlRewrite.triggers.*.rules.*", []string{"in", "pattern"}},
	{"middleware.operations.*.cache", []string{"enabled"}},
	{"middleware.operations.*.enforceTimeout", []string{"enabled"}},
	{"middleware.operations.*.validateRequest", []string{"enabled"}},
	{"middleware.operations.*.mockResponse", []string{"enabled"}},
	{"middleware.operations.*.mockResponse.headers.*", []string{"name", "value"}},
	{"middleware.operations.*.virtualEndpoint", []string{"enabled", "functionName"}},
	{"middleware.operations.*.postPlugins.*", []string{"enabled", "functionName", "path"}},
	{"middleware.operations.*.circuitBreaker", []string{"enabled", "threshold", "sampleSize", "coolDownPeriod", "halfOpenStateEnabled"}},
	{"middleware.operations.*.trackEndpoint", []string{"enabled"}},
	{"middleware.operations.*.doNotTrackEndpoint", []string{"enabled"}},
	{"middleware.operations.*.requestSizeLimit", []string{"enabled", "value"}},
	{"middleware.operations.*.rateLimit", []string{"enabled", "rate", "per"}},
}

// extValue is a constraint on the values at a location.
type extValue struct {
	at    string
	check func(v any) string // "" when the value is acceptable, else what is wrong
}

var (
	hmsDuration     = regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+s)?$`)
	domainDef       = regexp.MustCompile(`^([*a-zA-Z0-9-]+(\.[*a-zA-Z0-9-]+)*)(:\d+)?$`)
	timeoutDuration = regexp.MustCompile(`^(\d+(?:\.\d+)?m)?(\d+(?:\.\d+)?s)?(\d+(?:\.\d+)?ms)?$`)
)

func isBool(v any) string {
	if _, ok := v.(bool); !ok {
		return "must be a boolean"
	}
	return ""
}

func isString(v any) string {
	if _, ok := v.(string); !ok {
		return "must be a string"
	}
	return ""
}

// nonBlankString is the schema's "pattern": "\S+".
func nonBlankString(v any) string {
	if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" {
		return "must be a string with a non-space character"
	}
	return ""
}

func matches(re *regexp.Regexp) func(any) string {
	return func(v any) string {
		if s, ok := v.(string); !ok || !re.MatchString(s) {
			return "must match " + re.String()
		}
		return ""
	}
}

func oneOf(values ...string) func(any) string {
	return func(v any) string {
		if s, ok := v.(string); !ok || !slices.Contains(values, s) {
			return fmt.Sprintf("must be one of %q", values)
		}
		return ""
	}
}

// numberIn checks a JSON number, optionally an integer, against inclusive bounds.
func numberIn(integer bool, lo, hi float64) func(any) string {
	return func(v any) string {
		f, ok := jsonNumber(v)
		if !ok || (integer && f != float64(int64(f))) || f < lo || f > hi {
			kind := "number"
			if integer {
				kind = "integer"
			}
			return fmt.Sprintf("must be a %s in [%v, %v]", kind, lo, hi)
		}
		return ""
	}
}

func jsonNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case interface{ Float64() (float64, error) }:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func isArrayOf(item func(any) string) func(any) string {
	return func(v any) string {
		list, ok := v.([]any)
		if !ok {
			return "must be an array"
		}
		for i, e := range list {
			if p := item(e); p != "" {
				return fmt.Sprintf("item %d %s", i, p)
			}
		}
		return ""
	}
}

func orNull(check func(any) string) func(any) string {
	return func(v any) string {
		if v == nil {
			return ""
		}
		return check(v)
	}
}

func uniqueStrings(v any) string {
	list, ok := v.([]any)
	if !ok {
		return "must be an array"
	}
	for i, e := range list {
		if _, ok := e.(string); !ok || slices.Contains(list[:i], e) {
			return "must hold unique strings"
		}
	}
	return ""
}

const maxFloat = 1e308

var (
	anyInt     = numberIn(true, -maxFloat, maxFloat)
	nonNegInt  = numberIn(true, 0, maxFloat)
	anyNumber  = numberIn(false, -maxFloat, maxFloat)
	tlsVersion = oneOf("1.0", "1.1", "1.2", "1.3")
)

var extValues = []extValue{
	{"**.enabled", isBool},
	// members the schema types as booleans wherever they appear
	{"info.state.active", isBool},
	{"info.state.internal", isBool},
	{"info.versioning.stripVersioningData", isBool},
	{"info.versioning.fallbackToDefault", isBool},
	{"server.listenPath.strip", isBool},
	{"server.authentication.stripAuthorizationData", isBool},
	{"server.authentication.securitySchemes.*.enableClientCertificate", isBool},
	{"server.authentication.securitySchemes.*.skipKid", isBool},
	{"server.authentication.securitySchemes.*.refreshToken", isBool},
	{"middleware.operations.*.*.ignoreCase", isBool},
	{"**.negate", isBool},
	{"**.rawBodyOnly", isBool},
	{"**.requireSession", isBool},
	{"**.proxyOnError", isBool},
	{"**.allowCredentials", isBool},
	{"**.optionsPassthrough", isBool},
	{"**.cacheAllSafeRequests", isBool},
	{"**.enableUpstreamCacheControl", isBool},
	{"info.name", nonBlankString},
	{"info.id", isString},
	{"info.versioning.name", nonBlankString},
	{"info.versioning.default", isString},
	{"info.versioning.location", nonBlankString},
	{"info.versioning.key", nonBlankString},
	{"info.versioning.versions.*.name", nonBlankString},
	{"info.versioning.versions.*.id", nonBlankString},

	{"upstream.url", isString},
	{"upstream.serviceDiscovery.cacheTimeout", anyInt},
	{"upstream.serviceDiscovery.cache.timeout", anyInt},
	{"upstream.rateLimit.rate", anyNumber},
	{"upstream.rateLimit.per", matches(hmsDuration)},
	{"upstream.authentication.basicAuth.username", nonBlankString},
	{"upstream.authentication.basicAuth.password", nonBlankString},
	{"upstream.authentication.oauth.allowedAuthorizeTypes", orNull(isArrayOf(oneOf("clientCredentials", "password")))},
	{"upstream.mutualTLS.domainToCertificateMapping.*.domain", matches(domainDef)},
	{"upstream.loadBalancing.targets.*.url", isString},
	{"upstream.loadBalancing.targets.*.weight", anyNumber},
	{"upstream.tlsTransport.minVersion", tlsVersion},
	{"upstream.tlsTransport.maxVersion", tlsVersion},

	{"server.listenPath.value", nonBlankString},
	{"server.port", numberIn(true, 1, 65535)},
	{"server.protocol", oneOf("http", "https", "h2c")},
	{"server.gatewayTags.tags", uniqueStrings},
	{"server.customDomain.name", isString},
	{"server.authentication.baseIdentityProvider", oneOf("auth_token", "hmac_key", "basic_auth_user", "jwt_claim", "oidc_user", "oauth_key", "custom_auth", "")},
	{"server.authentication.securitySchemes.*.issuedAtValidationSkew", nonNegInt},
	{"server.authentication.securitySchemes.*.notBeforeValidationSkew", nonNegInt},
	{"server.authentication.securitySchemes.*.expiresAtValidationSkew", nonNegInt},
	{"server.authentication.securitySchemes.*.allowedAuthorizeTypes", isArrayOf(oneOf("code", "token"))},
	{"server.authentication.securitySchemes.*.signatureValidation.allowedClockSkew", anyInt},
	{"server.authentication.securitySchemes.*.providers.*.jwt.signingMethod", isString},
	{"server.authentication.securitySchemes.*.providers.*.jwt.source", isString},
	{"server.authentication.securitySchemes.*.providers.*.introspection.cache.timeout", anyInt},
	{"server.authentication.hmac.allowedClockSkew", anyNumber},
	{"server.authentication.custom.config.functionName", isString},
	{"server.authentication.custom.config.idExtractor.source", oneOf("body", "header", "form")},
	{"server.authentication.custom.config.idExtractor.with", oneOf("value", "xpath", "regex")},
	{"server.eventHandlers.*.trigger", oneOf("QuotaExceeded", "RatelimitExceeded", "RateLimitSmoothingUp", "RateLimitSmoothingDown",
		"AuthFailure", "UpstreamOAuthError", "KeyExpired", "VersionFailure", "OrgQuotaExceeded", "OrgRateLimitExceeded", "TriggerExceeded",
		"BreakerTriggered", "BreakerTripped", "BreakerReset", "HostDown", "HostUp", "TokenCreated", "TokenUpdated", "TokenDeleted",
		"CertificateExpiringSoon", "CertificateExpired")},
	{"server.eventHandlers.*.type", oneOf("webhook", "custom", "log")},
	{"server.eventHandlers.*.method", oneOf("GET", "PUT", "POST", "DELETE", "PATCH")},
	{"server.eventHandlers.*.cooldownPeriod", matches(hmsDuration)},

	{"middleware.global.pluginConfig.driver", oneOf("otto", "python", "lua", "grpc", "goplugin", "javascript")},
	{"middleware.global.pluginConfig.bundle.path", nonBlankString},
	{"middleware.global.*.*.functionName", isString},
	{"middleware.global.cache.timeout", anyInt},
	{"middleware.global.trafficLogs.customRetentionPeriod", matches(hmsDuration)},
	{"middleware.global.trafficLogs.tagHeaders", isArrayOf(isString)},
	{"middleware.global.requestSizeLimit.value", anyInt},
	{"middleware.global.skipRateLimit", isBool},
	{"middleware.global.skipQuota", isBool},
	{"middleware.global.skipQuotaReset", isBool},

	{"middleware.operations.*.transformRequestMethod.toMethod", isString},
	{"middleware.operations.*.transformRequestBody.format", oneOf("json", "xml")},
	{"middleware.operations.*.transformResponseBody.format", oneOf("json", "xml")},
	{"middleware.operations.*.*.add.*.name", isString},
	{"middleware.operations.*.*.add.*.value", isString},
	{"middleware.operations.*.urlRewrite.pattern", isString},
	{"middleware.operations.*.urlRewrite.rewriteTo", isString},
	{"middleware.operations.*.urlRewrite.triggers.*.condition", oneOf("any", "all")},
	{"middleware.operations.*.urlRewrite.triggers.*.rules.*.in", oneOf("query", "path", "header", "sessionMetadata", "requestContext", "requestBody")},
	{"middleware.operations.*.urlRewrite.triggers.*.rules.*.pattern", isString},
	{"middleware.operations.*.cache.timeout", nonNegInt},
	{"middleware.operations.*.enforceTimeout.value", nonNegInt},
	{"middleware.operations.*.enforceTimeout.duration", matches(timeoutDuration)},
	{"middleware.operations.*.requestSizeLimit.value", nonNegInt},
	{"middleware.operations.*.virtualEndpoint.functionName", isString},
	{"middleware.operations.*.postPlugins.*.functionName", isString},
	{"middleware.operations.*.postPlugins.*.path", isString},
	{"middleware.operations.*.circuitBreaker.threshold", numberIn(false, 0, 1)},
	{"middleware.operations.*.circuitBreaker.sampleSize", nonNegInt},
	{"middleware.operations.*.circuitBreaker.coolDownPeriod", nonNegInt},
	{"middleware.operations.*.circuitBreaker.halfOpenStateEnabled", isBool},
	{"middleware.operations.*.rateLimit.rate", anyNumber},
	{"middleware.operations.*.rateLimit.per", matches(hmsDuration)},
}

// locationMatches reports whether a location pattern matches a path of keys: "*" matches one key, a leading
// "**" any number of them.
func locationMatches(pattern string, path []string) bool {
	var parts []string
	if pattern != "" {
		parts = strings.Split(pattern, ".")
	}
	if len(parts) > 0 && parts[0] == "**" {
		rest := parts[1:]
		return len(path) >= len(rest) && segmentsMatch(rest, path[len(path)-len(rest):])
	}
	return len(parts) == len(path) && segmentsMatch(parts, path)
}

func segmentsMatch(parts, path []string) bool {
	for i, p := range parts {
		if p != "*" && p != path[i] {
			return false
		}
	}
	return true
}

// extensionProblems checks a decoded x-tyk-api-gateway object against the restated schema constraints.
func extensionProblems(x any) []string {
	var out []string
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		where := strings.Join(path, ".")
		for _, r := range extValues {
			if locationMatches(r.at, path) {
				if p := r.check(v); p != "" {
					out = append(out, fmt.Sprintf("x-tyk-api-gateway.%s: %s (got %v)", where, p, v))
				}
			}
		}
		switch x := v.(type) {
		case map[string]any:
			for _, r := range extRequired {
				if !locationMatches(r.at, path) {
					continue
				}
				for _, m := range r.members {
					if _, ok := x[m]; !ok {
						out = append(out, fmt.Sprintf("x-tyk-api-gateway.%s: missing required member %q", where, m))
					}
				}
			}
			for _, k := range sortedKeys(x) {
				walk(append(slices.Clone(path), k), x[k])
			}
		case []any:
			for i, e := range x {
				walk(append(slices.Clone(path), fmt.Sprint(i)), e)
			}
		}
	}
	obj, ok := x.(map[string]any)
	if !ok {
		return []string{"x-tyk-api-gateway must be an object"}
	}
	walk(nil, obj)
	out = append(out, extensionAnyOf(obj)...)
	return out
}

// extensionAnyOf restates the schema's conditional rules.
func extensionAnyOf(x map[string]any) []string {
	var out []string
	up, _ := x["upstream"].(map[string]any)
	if _, url := up["url"]; !url {
		if _, lb := up["loadBalancing"]; !lb {
			out = append(out, "x-tyk-api-gateway.upstream: needs url or loadBalancing")
		}
	}
	if lb, ok := up["loadBalancing"].(map[string]any); ok && lb["enabled"] == true {
		if t, _ := lb["targets"].([]any); len(t) == 0 {
			out = append(out, "x-tyk-api-gateway.upstream.loadBalancing: enabled needs at least one target")
		}
	}
	info, _ := x["info"].(map[string]any)
	if vs, ok := info["versioning"].(map[string]any); ok {
		switch vs["location"] {
		case "header", "url-param":
			if _, ok := vs["key"]; !ok {
				out = append(out, "x-tyk-api-gateway.info.versioning: location header or url-param needs a key")
			}
		case "url":
		default:
			out = append(out, fmt.Sprintf("x-tyk-api-gateway.info.versioning.location: %v is not header, url-param or url", vs["location"]))
		}
	}
	mw, _ := x["middleware"].(map[string]any)
	ops, _ := mw["operations"].(map[string]any)
	for _, id := range sortedKeys(ops) {
		op, _ := ops[id].(map[string]any)
		for _, f := range []string{"transformRequestBody", "transformResponseBody"} {
			if tb, ok := op[f].(map[string]any); ok {
				_, body := tb["body"]
				_, path := tb["path"]
				if !body && !path {
					out = append(out, fmt.Sprintf("x-tyk-api-gateway.middleware.operations.%s.%s: needs body or path", id, f))
				}
			}
		}
		if uw, ok := op["urlRewrite"].(map[string]any); ok {
			trig, _ := uw["triggers"].([]any)
			for i, t := range trig {
				rules, _ := t.(map[string]any)["rules"].([]any)
				for j, r := range rules {
					rule, _ := r.(map[string]any)
					if _, named := rule["name"]; rule["in"] != "requestBody" && !named {
						out = append(out, fmt.Sprintf("x-tyk-api-gateway.middleware.operations.%s.urlRewrite.triggers.%d.rules.%d: needs a name", id, i, j))
					}
				}
			}
		}
	}
	for i, h := range asList(lookupPath(x, "server", "eventHandlers")) {
		e, _ := h.(map[string]any)
		var need []string
		switch e["type"] {
		case "webhook":
			need = []string{"enabled", "trigger", "cooldownPeriod"}
			if _, id := e["id"]; !id {
				need = append(need, "url", "method", "bodyTemplate")
			}
		case "custom":
			need = []string{"enabled", "trigger", "name", "functionName", "path"}
		case "log":
			need = []string{"enabled", "trigger", "name", "logPrefix"}
		}
		for _, m := range need {
			if _, ok := e[m]; !ok {
				out = append(out, fmt.Sprintf("x-tyk-api-gateway.server.eventHandlers.%d: a %v handler needs %q", i, e["type"], m))
			}
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
