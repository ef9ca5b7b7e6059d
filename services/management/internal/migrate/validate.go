package migrate

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Validation of every produced document: the OpenAPI 3.0 rules a converted document can break and the
// structural rules of the x-tyk-api-gateway schema (required members, non-blank names, enums, ranges). The
// checks work on the typed document before serialisation; their patterns are compiled once, with the
// package. The full JSON schema is checked by the package's tests.

var (
	readableSeconds = regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+s)?$`)
	readableFull    = regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+s)?(\d+ms)?(\d+µs)?(\d+ns)?$`)
)

// nonBlank matches the schema's \S+: some character that is not white space.
func nonBlank(s string) bool { return strings.TrimSpace(s) != "" }

// responseKey reports whether k is "default" or a status code such as 200 or 4XX.
func responseKey(k string) bool {
	if k == "default" {
		return true
	}
	if len(k) != 3 || k[0] < '1' || k[0] > '5' {
		return false
	}
	digits := k[1] >= '0' && k[1] <= '9' && k[2] >= '0' && k[2] <= '9'
	return digits || k[1:] == "XX"
}

// pathParamNames lists the {name} templates of an OpenAPI path.
func pathParamNames(p string) []string {
	var names []string
	for {
		open := strings.IndexByte(p, '{')
		if open < 0 {
			return names
		}
		end := strings.IndexAny(p[open+1:], "{}")
		if end < 0 {
			return names
		}
		if p[open+1+end] == '}' && end > 0 {
			names = append(names, p[open+1:open+1+end])
		}
		p = p[open+1+end:]
	}
}

// validateDocument returns one message per problem, each naming the document field.
func validateDocument(d *oasDocument) []string {
	v := &validator{}
	v.openAPI(d)
	v.extension(&d.XTyk)
	slices.Sort(v.problems) // maps are walked in any order
	return v.problems
}

type validator struct {
	problems []string
}

func (v *validator) add(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) check(ok bool, format string, args ...any) {
	if !ok {
		v.add(format, args...)
	}
}

func (v *validator) openAPI(d *oasDocument) {
	v.check(strings.HasPrefix(d.OpenAPI, "3.0."), "openapi: %q is not 3.0.x", d.OpenAPI)
	v.check(d.Info.Title != "", "info.title: must be a non-empty string")
	v.check(d.Info.Version != "", "info.version: must be a non-empty string")
	for p, item := range d.Paths {
		v.check(strings.HasPrefix(p, "/"), "paths: path %q does not start with /", p)
		names := pathParamNames(p)
		for i, n := range names {
			v.check(!slices.Contains(names[:i], n), "paths.%s: more than one path parameter is named %q", p, n)
		}
		for _, n := range names {
			declared := slices.ContainsFunc(item.Parameters, func(q parameter) bool { return q.Name == n && q.In == "path" && q.Required })
			v.check(declared, "paths.%s.parameters: path parameter %q is not declared", p, n)
		}
		for _, m := range httpMethods {
			op := *item.operation(m)
			if op == nil {
				continue
			}
			at := "paths." + p + "." + strings.ToLower(m)
			v.check(nonBlank(op.OperationID), "%s.operationId: must not be blank", at)
			v.check(len(op.Responses) > 0, "%s.responses: must be a non-empty object", at)
			for code := range op.Responses {
				v.check(responseKey(code), "%s.responses: %q is not a status code", at, code)
			}
			if op.RequestBody != nil {
				v.check(len(op.RequestBody.Content) > 0, "%s.requestBody.content: must not be empty", at)
			}
		}
	}
	var schemes map[string]*securityScheme
	if d.Components != nil {
		schemes = d.Components.SecuritySchemes
	}
	for _, name := range sortedKeys(schemes) {
		s := schemes[name]
		v.check(literalSegment(name), "components.securitySchemes: %q is not a valid name", name)
		switch s.Type {
		case "apiKey":
			v.check(s.Name != "" && slices.Contains([]string{"header", "query", "cookie"}, s.In),
				"components.securitySchemes.%s: an apiKey scheme needs a name and in (header, query or cookie)", name)
		case "http":
			v.check(s.Scheme != "", "components.securitySchemes.%s.scheme: must not be empty", name)
		case "oauth2":
			v.check(s.Flows != nil, "components.securitySchemes.%s.flows: must be present", name)
		default:
			v.add("components.securitySchemes.%s.type: %q is not a security scheme type", name, s.Type)
		}
	}
	for _, req := range d.Security {
		for _, name := range sortedKeys(req) {
			v.check(schemes[name] != nil, "security: Missing required Security Scheme %q in components.securitySchemes", name)
		}
	}
}

func (v *validator) extension(x *xTykAPIGateway) {
	const at = "x-tyk-api-gateway"
	v.check(nonBlank(x.Info.Name), "%s.info.name: must not be blank", at)
	if vs := x.Info.Versioning; vs != nil {
		switch vs.Location {
		case "header", "url-param":
			v.check(nonBlank(vs.Key), "%s.info.versioning.key: must not be blank for location %s", at, vs.Location)
		case "url":
		default:
			v.add("%s.info.versioning.location: %q is not one of header, url-param, url", at, vs.Location)
		}
		for i, e := range vs.Versions {
			v.check(e.Name != "" && e.ID != "", "%s.info.versioning.versions.%d: name and id are required", at, i)
		}
	}
	v.upstream(&x.Upstream)
	v.server(&x.Server)
	if x.Middleware != nil {
		v.middleware(x.Middleware)
	}
}

func (v *validator) upstream(u *xUpstream) {
	const at = "x-tyk-api-gateway.upstream"
	hasTargets := u.LoadBalancing != nil && u.LoadBalancing.Enabled && len(u.LoadBalancing.Targets) > 0
	discovered := u.ServiceDiscovery != nil && u.ServiceDiscovery.Enabled
	if strings.TrimSpace(u.URL) == "" {
		v.check(hasTargets || discovered, "%s.url: must not be empty (no load balancing targets or service discovery either)", at)
	} else if _, err := url.Parse(u.URL); err != nil {
		v.add("%s.url: %q is not a URI reference", at, u.URL)
	}
	if lb := u.LoadBalancing; lb != nil {
		v.check(!lb.Enabled || len(lb.Targets) > 0, "%s.loadBalancing.targets: must not be empty when load balancing is enabled", at)
		for i, t := range lb.Targets {
			v.check(nonBlank(t.URL), "%s.loadBalancing.targets.%d.url: must not be blank", at, i)
		}
	}
	if ut := u.UptimeTests; ut != nil {
		for _, d := range []string{ut.HostDownRetestPeriod, ut.LogRetentionPeriod} {
			v.check(readableFull.MatchString(d), "%s.uptimeTests: %q is not a duration", at, d)
		}
		for i, t := range ut.Tests {
			v.check(readableFull.MatchString(t.Timeout), "%s.uptimeTests.tests.%d.timeout: %q is not a duration", at, i, t.Timeout)
		}
	}
	if rl := u.RateLimit; rl != nil {
		v.check(readableSeconds.MatchString(rl.Per), "%s.rateLimit.per: %q is not a duration", at, rl.Per)
	}
	if a := u.Authentication; a != nil {
		if b := a.BasicAuth; b != nil {
			v.check(nonBlank(b.Username) && nonBlank(b.Password), "%s.authentication.basicAuth: username and password must not be blank", at)
		}
		if o := a.OAuth; o != nil {
			if cc := o.ClientCredentials; cc != nil {
				v.check(nonBlank(cc.ClientID) && nonBlank(cc.ClientSecret) && nonBlank(cc.TokenURL),
					"%s.authentication.oauth.clientCredentials: clientId, clientSecret and tokenUrl must not be blank", at)
			}
			if pw := o.Password; pw != nil {
				v.check(nonBlank(pw.ClientID) && nonBlank(pw.TokenURL) && nonBlank(pw.Username) && nonBlank(pw.Password),
					"%s.authentication.oauth.password: clientId, tokenUrl, username and password must not be blank", at)
			}
		}
	}
	if mt := u.MutualTLS; mt != nil {
		for i, m := range mt.DomainToCertificateMapping {
			v.check(domainPattern.MatchString(m.Domain), "%s.mutualTLS.domainToCertificateMapping.%d.domain: %q is not a domain", at, i, m.Domain)
		}
	}
	if cp := u.CertificatePinning; cp != nil {
		for i, m := range cp.DomainToPublicKeysMapping {
			v.check(domainPattern.MatchString(m.Domain), "%s.certificatePinning.domainToPublicKeysMapping.%d.domain: %q is not a domain", at, i, m.Domain)
		}
	}
	if tr := u.TLSTransport; tr != nil {
		for _, ver := range []string{tr.MinVersion, tr.MaxVersion} {
			v.check(ver == "" || slices.Contains([]string{"1.0", "1.1", "1.2", "1.3"}, ver), "%s.tlsTransport: %q is not a TLS version", at, ver)
		}
	}
}

func (v *validator) server(s *xServer) {
	const at = "x-tyk-api-gateway.server"
	v.check(nonBlank(s.ListenPath.Value), "%s.listenPath.value: must not be blank", at)
	v.check(s.Port == 0 || (s.Port >= 1 && s.Port <= 65535), "%s.port: %d is not a port", at, s.Port)
	v.check(slices.Contains([]string{"", "http", "https", "h2c"}, s.Protocol), "%s.protocol: %q is not one of http, https, h2c", at, s.Protocol)
	if gt := s.GatewayTags; gt != nil {
		for i, t := range gt.Tags {
			v.check(!slices.Contains(gt.Tags[:i], t), "%s.gatewayTags.tags: %q is listed twice", at, t)
		}
	}
	for i, e := range s.EventHandlers {
		v.check(slices.Contains(eventTriggers, e.Trigger), "%s.eventHandlers.%d.trigger: %q is not an event", at, i, e.Trigger)
		v.check(readableSeconds.MatchString(e.CooldownPeriod), "%s.eventHandlers.%d.cooldownPeriod: %q is not a duration", at, i, e.CooldownPeriod)
		switch e.Type {
		case "webhook":
			v.check(slices.Contains(webhookMethods, e.Method), "%s.eventHandlers.%d.method: %q is not one of %v", at, i, e.Method, webhookMethods)
			v.check(e.BodyTemplate != nil, "%s.eventHandlers.%d.bodyTemplate: is required", at, i)
		case "custom":
			v.check(e.Path != nil, "%s.eventHandlers.%d.path: is required", at, i)
		case "log":
			v.check(e.LogPrefix != nil, "%s.eventHandlers.%d.logPrefix: is required", at, i)
		default:
			v.add("%s.eventHandlers.%d.type: %q is not one of webhook, custom, log", at, i, e.Type)
		}
	}
	a := s.Authentication
	if a == nil {
		return
	}
	v.check(slices.Contains(baseIdentityProviders, a.BaseIdentityProvider), "%s.authentication.baseIdentityProvider: %q is not a provider", at, a.BaseIdentityProvider)
	if kl := a.CustomKeyLifetime; kl != nil && kl.Value != "" {
		v.check(readableSeconds.MatchString(kl.Value) && kl.Value != "0s", "%s.authentication.customKeyLifetime.value: %q is not a positive duration", at, kl.Value)
	}
	if cu := a.Custom; cu != nil && cu.Config != nil && cu.Config.IDExtractor != nil {
		ex := cu.Config.IDExtractor
		v.check(slices.Contains([]string{"body", "header", "form"}, ex.Source), "%s.authentication.custom.config.idExtractor.source: %q is not one of body, header, form", at, ex.Source)
		v.check(slices.Contains([]string{"value", "xpath", "regex"}, ex.With), "%s.authentication.custom.config.idExtractor.with: %q is not one of value, xpath, regex", at, ex.With)
	}
	if a.Enabled {
		v.check(a.SecuritySchemes != nil || a.HMAC != nil || a.OIDC != nil || a.Custom != nil,
			"%s.authentication: authentication is enabled but no method is configured", at)
	}
}

func (v *validator) middleware(m *xMiddleware) {
	const at = "x-tyk-api-gateway.middleware"
	if g := m.Global; g != nil {
		if tl := g.TrafficLogs; tl != nil && tl.CustomRetentionPeriod != "" {
			v.check(readableSeconds.MatchString(tl.CustomRetentionPeriod), "%s.global.trafficLogs.customRetentionPeriod: %q is not a duration", at, tl.CustomRetentionPeriod)
		}
		if rs := g.RequestSizeLimit; rs != nil {
			v.check(rs.Value >= 0, "%s.global.requestSizeLimit.value: %d is negative", at, rs.Value)
		}
	}
	for id, op := range m.Operations {
		o := at + ".operations." + id
		v.check(nonBlank(id), "%s: the operationId must not be blank", o)
		for _, tb := range []*xTransformBody{op.TransformRequestBody, op.TransformResponseBody} {
			if tb != nil {
				v.check(tb.Format == "json" || tb.Format == "xml", "%s: transform body format %q is not one of json, xml", o, tb.Format)
				v.check(tb.Body != nil || tb.Path != nil, "%s: a body transform needs a body or a path", o)
			}
		}
		if tm := op.TransformRequestMethod; tm != nil {
			v.check(validMethod(tm.ToMethod), "%s.transformRequestMethod.toMethod: %q is not an HTTP method", o, tm.ToMethod)
		}
		if c := op.Cache; c != nil {
			v.check(c.Timeout >= 0, "%s.cache.timeout: %d is negative", o, c.Timeout)
		}
		if et := op.EnforceTimeout; et != nil {
			v.check(et.Value >= 0, "%s.enforceTimeout.value: %d is negative", o, et.Value)
		}
		if cb := op.CircuitBreaker; cb != nil {
			v.check(cb.Threshold >= 0 && cb.Threshold <= 1, "%s.circuitBreaker.threshold: %v is not between 0 and 1", o, cb.Threshold)
			v.check(cb.SampleSize >= 0 && cb.CoolDownPeriod >= 0, "%s.circuitBreaker: sampleSize and coolDownPeriod must not be negative", o)
		}
		if rs := op.RequestSizeLimit; rs != nil {
			v.check(rs.Value >= 0, "%s.requestSizeLimit.value: %d is negative", o, rs.Value)
		}
		if rl := op.RateLimit; rl != nil {
			v.check(readableSeconds.MatchString(rl.Per), "%s.rateLimit.per: %q is not a duration", o, rl.Per)
		}
		if mr := op.MockResponse; mr != nil {
			v.check(mr.Code >= 100 && mr.Code <= 599, "%s.mockResponse.code: %d is not an HTTP status code", o, mr.Code)
		}
		if ve := op.VirtualEndpoint; ve != nil {
			v.check(ve.Body != nil || ve.Path != nil, "%s.virtualEndpoint: needs a body or a path", o)
		}
		if ur := op.URLRewrite; ur != nil {
			for i, t := range ur.Triggers {
				v.check(t.Condition == "any" || t.Condition == "all", "%s.urlRewrite.triggers.%d.condition: %q is not one of any, all", o, i, t.Condition)
			}
		}
	}
}
