package convert

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// The OAS → classic direction: what a Tyk gateway loads for a Tyk OAS API. The gateway builds its runtime spec
// from the classic definition and reads the OAS document only for the OAS-only features, so for each OAS API
// it is handed the classic definition its document describes, with is_oas true (Tyk's OAS.ExtractTo). Each part
// undoes the classic → OAS step of the same name; the per-endpoint middleware comes from the kinds table.

// ToClassic derives, from a Tyk OAS API definition (a document as stored, with x-tyk-api-gateway), the classic
// API definition a Tyk gateway acts on, as Tyk's OAS.ExtractTo yields it: api_id, id (info.dbId), org_id, name,
// state, versioning, listen path, upstream, authentication, global and per-endpoint middleware, with is_oas true
// and one unversioned version (""). Settings a gateway reads from the OAS document itself (validateRequest,
// mockResponse) are not repeated in it. The error reports a document that is not a Tyk OAS API definition.
func ToClassic(doc []byte) ([]byte, error) {
	return ToClassicWithin(doc, -1)
}

// ErrLarger is ToClassicWithin's answer for a definition surely larger than its limit.
var ErrLarger = errors.New("the classic definition is larger than the limit")

// ToClassicWithin is ToClassic for a caller that keeps the definition only when it is at most limit bytes
// (none when limit < 0): ErrLarger, before the definition is written, when its allow, block and
// ignore-authentication entries alone are surely longer (an import that turns allowList on for 50,000
// operations derives a definition of ~5 MB; its writing held twice that).
func ToClassicWithin(doc []byte, limit int) ([]byte, error) {
	var d classicSource
	src := doc
	rest, ops, apart := operationsApart(doc)
	if apart {
		src = rest
	}
	if err := json.Unmarshal(src, &d); err != nil {
		return nil, fmt.Errorf("the document is not a Tyk OAS API definition: %w", err)
	}
	if err := d.Paths.read(doc); err != nil {
		return nil, fmt.Errorf("the document is not a Tyk OAS API definition: %w", err)
	}
	operation := func(id string) *xOperation {
		if d.XTyk.Middleware == nil {
			return nil
		}
		return d.XTyk.Middleware.Operations[id]
	}
	if apart {
		operation = ops.operation
	}
	api := classicFrom(&d, operation)
	if limit >= 0 && api.leastEntriesSize() > limit {
		return nil, ErrLarger
	}
	return json.MarshalWithOption(api, encodeOptions...)
}

// classicSource is what the derivation reads of a document. Of the paths it keeps only where each operation is
// and its operationId, which names its middleware, read from the document's text: a document's paths decoded
// (responses, bodies) cost many times their size, and the derivation runs on every document management takes
// in.
type classicSource struct {
	Components *components           `json:"components,omitempty"`
	Paths      operationIndex        `json:"-"`
	Security   []map[string][]string `json:"security,omitempty"`
	XTyk       xTykAPIGateway        `json:"x-tyk-api-gateway"`
}

// operationIndex lists a document's operations: path, method and operationId, read from the paths object's
// text as a decoder of path items reads them (the root's paths, method and operationId keys in any case, the
// last of a key twice; a path item or operation that is neither an object nor null fails the document).
type operationIndex []operationAt

type operationAt struct {
	path   string
	method int // index in httpMethods
	id     string
	null   bool // the operation is null: there is none
}

// read fills ix from doc, a document.
func (ix *operationIndex) read(doc []byte) error {
	var paths []byte
	err := rawjson.Each(doc, func(key, value []byte) error {
		if strings.EqualFold(string(key), "paths") {
			paths = value
		}
		return nil
	})
	if err != nil || paths == nil || string(paths) == "null" {
		return err
	}
	if paths[0] != '{' {
		return fmt.Errorf("paths: %.20s is not an object", paths)
	}
	n := 0 // operations, so that ix is made once
	err = rawjson.Each(paths, func(_, item []byte) error {
		return rawjson.Each(item, func(key, _ []byte) error {
			if methodIndex(key) >= 0 {
				n++
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	*ix = make(operationIndex, 0, n)
	return rawjson.Each(paths, func(key, item []byte) error {
		if string(item) == "null" {
			return nil
		}
		if item[0] != '{' {
			return fmt.Errorf("paths.%s: not an object", key)
		}
		path := string(key)
		at := [8]int{-1, -1, -1, -1, -1, -1, -1, -1} // per method, where it was written
		return rawjson.Each(item, func(key, op []byte) error {
			m := methodIndex(key)
			if m < 0 {
				return nil
			}
			id, err := operationIDOf(op)
			if err != nil {
				return fmt.Errorf("paths.%s.%s: %w", path, key, err)
			}
			null := string(op) == "null"
			if at[m] >= 0 {
				(*ix)[at[m]].id, (*ix)[at[m]].null = id, null
				return nil
			}
			at[m] = len(*ix)
			*ix = append(*ix, operationAt{path: path, method: m, id: id, null: null})
			return nil
		})
	})
}

// methodIndex is the index in httpMethods of the method key names, in any case; -1 for another key.
func methodIndex(key []byte) int {
	for i, m := range httpMethods {
		if len(key) == len(m) && strings.EqualFold(string(key), m) {
			return i
		}
	}
	return -1
}

// operationIDOf reads an operation's operationId ("" when absent or null).
func operationIDOf(op []byte) (string, error) {
	if string(op) == "null" {
		return "", nil
	}
	if op[0] != '{' {
		return "", fmt.Errorf("%.20s is not an object", op)
	}
	var id []byte
	err := rawjson.Each(op, func(key, value []byte) error {
		if len(key) == len("operationId") && strings.EqualFold(string(key), "operationId") {
			id = value
		}
		return nil
	})
	if err != nil || id == nil || string(id) == "null" {
		return "", err
	}
	s, ok := rawjson.String(id)
	if !ok {
		return "", fmt.Errorf("operationId: %.20s is not a string", id)
	}
	return s, nil
}

// classicFrom is the classic definition of a decoded document, whose
// per-operation middleware operation gives.
func classicFrom(d *classicSource, operation func(id string) *xOperation) *classicAPI {
	x := &d.XTyk
	v := &versionInfo{UseExtendedPaths: true}
	api := &classicAPI{IsOAS: true, VersionData: versionData{NotVersioned: true, Versions: map[string]*versionInfo{"": v}}}
	switchedOff(api, v)
	infoToClassic(api, &x.Info)
	upstreamToClassic(api, &x.Upstream)
	serverToClassic(api, &x.Server)
	errorOverridesToClassic(api, x.ErrorOverrides)
	mw := x.Middleware
	if mw == nil {
		mw = &xMiddleware{}
	}
	globalToClassic(api, v, mw.Global) // before authentication, which reads the plugin driver
	authenticationToClassic(api, x.Server.Authentication, d)
	operationsToClassic(&v.ExtendedPaths, d.Paths, operation)
	return api
}

// switchedOff starts every switchable setting disabled, as Tyk's OAS.ExtractTo leaves a setting the document
// does not hold: each part present in the document then sets its own switch. A gateway reads several of these
// (ip_access_control_disabled false runs the IP middlewares).
func switchedOff(api *classicAPI, v *versionInfo) {
	api.UpstreamCertificatesDisabled, api.CertificatePinningDisabled, api.GlobalRateLimit.Disabled = true, true, true
	api.Proxy.ServiceDiscovery.CacheDisabled = true
	api.UptimeTests.Disabled, api.UptimeTests.Config.ServiceDiscovery.CacheDisabled = true, true
	api.TagsDisabled, api.DomainDisabled, api.IPAccessControlDisabled = true, true, true
	api.CustomMiddlewareBundleDisabled, api.ConfigDataDisabled = true, true
	api.CustomMiddleware.AuthCheck.Disabled, api.CustomMiddleware.IDExtractor.Disabled = true, true
	v.GlobalHeadersDisabled, v.GlobalResponseHeadersDisabled, v.GlobalSizeLimitDisabled = true, true, true
}

func infoToClassic(api *classicAPI, i *xInfo) {
	api.APIID, api.ID, api.OrgID, api.Name, api.Expiration = i.ID, i.DBID, i.OrgID, i.Name, i.Expiration
	api.Active, api.Internal = i.State.Active, i.State.Internal
	vs := i.Versioning
	if vs == nil {
		return
	}
	def := &api.Definition
	def.Enabled, def.Name, def.Default, def.Location, def.Key = vs.Enabled, vs.Name, vs.Default, vs.Location, vs.Key
	def.StripVersioningData, def.FallbackToDefault, def.URLVersioningPattern = vs.StripVersioningData, vs.FallbackToDefault, vs.URLVersioningPattern
	if len(vs.Versions) > 0 {
		def.Versions = make(map[string]string, len(vs.Versions))
		for _, v := range vs.Versions {
			def.Versions[v.Name] = v.ID
		}
	}
}

func upstreamToClassic(api *classicAPI, u *xUpstream) {
	p := &api.Proxy
	p.TargetURL = u.URL
	if u.ServiceDiscovery != nil {
		p.ServiceDiscovery = discoveryToClassic(u.ServiceDiscovery)
	}
	uptimeToClassic(&api.UptimeTests, u.UptimeTests)
	if m := u.MutualTLS; m != nil {
		api.UpstreamCertificatesDisabled = !m.Enabled
		api.UpstreamCertificates = make(map[string]string, len(m.DomainToCertificateMapping))
		for _, c := range m.DomainToCertificateMapping {
			api.UpstreamCertificates[c.Domain] = c.Certificate
		}
	}
	if c := u.CertificatePinning; c != nil {
		api.CertificatePinningDisabled = !c.Enabled
		api.PinnedPublicKeys = make(map[string]string, len(c.DomainToPublicKeysMapping))
		for _, k := range c.DomainToPublicKeysMapping {
			api.PinnedPublicKeys[k.Domain] = strings.Join(k.PublicKeys, ",")
		}
	}
	if r := u.RateLimit; r != nil {
		api.GlobalRateLimit = rateLimitConfig{Disabled: !r.Enabled, Rate: r.Rate, Per: durationSeconds(r.Per)}
	}
	upstreamAuthToClassic(api, u.Authentication)
	if lb := u.LoadBalancing; lb != nil {
		p.EnableLoadBalancing, p.CheckHostAgainstUptimeTests = lb.Enabled, lb.SkipUnavailableHosts
		for _, t := range lb.Targets {
			for range t.Weight {
				p.Targets = append(p.Targets, t.URL)
			}
		}
	}
	p.PreserveHostHeader = u.PreserveHostHeader != nil && u.PreserveHostHeader.Enabled
	p.DisableStripSlash = u.PreserveTrailingSlash != nil && u.PreserveTrailingSlash.Enabled
	if t := u.TLSTransport; t != nil {
		tr := &p.Transport
		tr.SSLInsecureSkipVerify, tr.SSLCipherSuites, tr.SSLForceCommonNameCheck = t.InsecureSkipVerify, t.Ciphers, t.ForceCommonNameCheck
		tr.SSLMinVersion, tr.SSLMaxVersion = tlsVersionNumber(t.MinVersion), tlsVersionNumber(t.MaxVersion)
	}
	if u.Proxy != nil && u.Proxy.Enabled {
		p.Transport.ProxyURL = u.Proxy.URL
	}
}

// tlsVersionNumber is the classic number of a TLS version name ("1.2" → 0x0303), 0 when unknown.
func tlsVersionNumber(name string) uint16 {
	for n, v := range tlsVersions {
		if v == name {
			return n
		}
	}
	return 0
}

func discoveryToClassic(sd *xServiceDiscovery) serviceDiscoveryConfig {
	out := serviceDiscoveryConfig{UseDiscoveryService: sd.Enabled, QueryEndpoint: sd.QueryEndpoint, UseNestedQuery: sd.UseNestedQuery,
		ParentDataPath: sd.ParentDataPath, DataPath: sd.DataPath, PortDataPath: sd.PortDataPath, TargetPath: sd.TargetPath,
		UseTargetList: sd.UseTargetList, EndpointReturnsList: sd.EndpointReturnsList, CacheDisabled: true}
	if sd.Cache != nil {
		out.CacheDisabled, out.CacheTimeout = !sd.Cache.Enabled, sd.Cache.Timeout
	}
	return out
}

func uptimeToClassic(ut *uptimeTests, x *xUptimeTests) {
	if x == nil {
		return
	}
	ut.Disabled = !x.Enabled
	if x.ServiceDiscovery != nil {
		ut.Config.ServiceDiscovery = discoveryToClassic(x.ServiceDiscovery)
	}
	ut.Config.RecheckWait = int64(durationSeconds(x.HostDownRetestPeriod))
	ut.Config.ExpireUptimeAnalyticsAfter = int64(durationSeconds(x.LogRetentionPeriod))
	ut.CheckList = make([]uptimeCheck, len(x.Tests))
	for i, t := range x.Tests {
		c := &ut.CheckList[i]
		c.CheckURL, c.Method, c.Headers, c.Body, c.EnableProxyProtocol = t.URL, t.Method, t.Headers, t.Body, t.EnableProxyProtocol
		if scheme, _, ok := strings.Cut(t.URL, "://"); ok {
			c.Protocol = scheme // the check's protocol is its URL's scheme (Tyk's OAS.ExtractTo)
		}
		c.Timeout = int64(durationNanos(t.Timeout))
		for _, cmd := range t.Commands {
			c.Commands = append(c.Commands, uptimeCommand(cmd))
		}
	}
}

func upstreamAuthToClassic(api *classicAPI, a *xUpstreamAuth) {
	if a == nil {
		return
	}
	ua := &api.UpstreamAuth
	ua.Enabled = a.Enabled
	if b := a.BasicAuth; b != nil {
		ba := &ua.BasicAuth
		ba.Enabled, ba.Username, ba.Password, ba.Header = b.Enabled, b.Username, b.Password, authSourceToClassic(b.Header)
	}
	if o := a.OAuth; o != nil {
		oa := &ua.OAuth
		oa.Enabled, oa.AllowedAuthorizeTypes = o.Enabled, o.AllowedAuthorizeTypes
		if cc := o.ClientCredentials; cc != nil {
			c := &oa.ClientCredentials
			c.ClientID, c.ClientSecret, c.TokenURL, c.Scopes, c.ExtraMetadata = cc.ClientID, cc.ClientSecret, cc.TokenURL, cc.Scopes, cc.ExtraMetadata
			c.Header = authSourceToClassic(cc.Header)
		}
		if pw := o.Password; pw != nil {
			c := &oa.PasswordAuthentication
			c.ClientID, c.ClientSecret, c.TokenURL, c.Scopes, c.ExtraMetadata = pw.ClientID, pw.ClientSecret, pw.TokenURL, pw.Scopes, pw.ExtraMetadata
			c.Username, c.Password, c.Header = pw.Username, pw.Password, authSourceToClassic(pw.Header)
		}
	}
	if s := a.RequestSigning; s != nil {
		api.RequestSigning = requestSigning{IsEnabled: s.Enabled, Secret: s.Secret, KeyID: s.KeyID, Algorithm: s.Algorithm,
			HeaderList: s.Headers, CertificateID: s.CertificateID, SignatureHeader: s.SignatureHeader}
	}
}

func authSourceToClassic(s *xAuthSource) authSourceConfig {
	if s == nil {
		return authSourceConfig{}
	}
	return authSourceConfig{Enabled: s.Enabled, Name: s.Name}
}

func serverToClassic(api *classicAPI, s *xServer) {
	api.Proxy.ListenPath, api.Proxy.StripListenPath = s.ListenPath.Value, s.ListenPath.Strip
	api.Protocol, api.ListenPort = s.Protocol, s.Port
	if c := s.ClientCertificates; c != nil {
		api.UseMutualTLSAuth, api.ClientCertificates = c.Enabled, c.Allowlist
	}
	if t := s.GatewayTags; t != nil {
		api.TagsDisabled, api.Tags = !t.Enabled, t.Tags
	}
	if d := s.CustomDomain; d != nil {
		api.DomainDisabled, api.Domain, api.Certificates = !d.Enabled, d.Name, d.Certificates
	}
	api.EnableDetailedRecording = enabled(s.DetailedActivityLogs)
	api.DetailedTracing = enabled(s.DetailedTracing)
	api.EnableBatchRequestSupport = enabled(s.BatchProcessing)
	if ip := s.IPAccessControl; ip != nil {
		// The gateway runs an IP middleware when ip_access_control_disabled is false or its legacy switch
		// (enable_ip_whitelisting, enable_ip_blacklisting) is on: only the first is written, as Tyk's
		// OAS.ExtractTo, so a disabled ipAccessControl with lists stays off.
		api.AllowedIPs, api.BlacklistedIPs, api.IPAccessControlDisabled = ip.Allow, ip.Block, !ip.Enabled
	}
	for _, h := range s.EventHandlers {
		if api.EventHandlers.Events == nil {
			api.EventHandlers.Events = map[string][]eventHandler{}
		}
		api.EventHandlers.Events[h.Trigger] = append(api.EventHandlers.Events[h.Trigger], eventHandlerToClassic(h))
	}
}

func enabled(x *xEnabled) bool { return x != nil && x.Enabled }

// eventHandlerToClassic is the classic handler of a webhook, custom (JSVM) or log event handler.
func eventHandlerToClassic(h xEventHandler) eventHandler {
	meta := map[string]any{"disabled": !h.Enabled}
	if h.Type == "log" {
		if h.LogPrefix != nil {
			meta["prefix"] = *h.LogPrefix
		}
		return eventHandler{Handler: "eh_log_handler", HandlerMeta: meta}
	}
	if h.ID != "" {
		meta["id"] = h.ID
	}
	if h.Name != "" {
		meta["name"] = h.Name
	}
	switch h.Type {
	case "webhook":
		meta["target_path"], meta["method"] = h.URL, h.Method
		if hs := headerMap(h.Headers); hs != nil {
			header := make(map[string]any, len(hs))
			for k, v := range hs {
				header[k] = v
			}
			meta["header_map"] = header
		}
		if h.BodyTemplate != nil {
			meta["template_path"] = *h.BodyTemplate
		}
		meta["event_timeout"] = durationSeconds(h.CooldownPeriod)
		return eventHandler{Handler: "eh_web_hook_handler", HandlerMeta: meta}
	case "custom":
		meta["name"] = h.FunctionName
		if h.Path != nil {
			meta["path"] = *h.Path
		}
		return eventHandler{Handler: "eh_dynamic_handler", HandlerMeta: meta}
	}
	if h.LogPrefix != nil {
		meta["prefix"] = *h.LogPrefix
	}
	return eventHandler{Handler: "eh_log_handler", HandlerMeta: meta}
}

// globalToClassic: without global middleware (or its trafficLogs) a Tyk OAS API records no traffic.
func globalToClassic(api *classicAPI, v *versionInfo, g *xGlobal) {
	if g == nil {
		api.DoNotTrack = true
		return
	}
	mw := &api.CustomMiddleware
	if pc := g.PluginConfig; pc != nil {
		mw.Driver = pc.Driver
		if b := pc.Bundle; b != nil {
			api.CustomMiddlewareBundle, api.CustomMiddlewareBundleDisabled = b.Path, !b.Enabled
		}
		if d := pc.Data; d != nil {
			api.ConfigData, api.ConfigDataDisabled = d.Value, !d.Enabled
		}
	}
	if c := g.CORS; c != nil {
		api.CORS = corsConfig{Enable: c.Enabled, AllowedOrigins: c.AllowedOrigins, AllowedMethods: c.AllowedMethods, AllowedHeaders: c.AllowedHeaders,
			ExposedHeaders: c.ExposedHeaders, AllowCredentials: c.AllowCredentials, MaxAge: c.MaxAge, OptionsPassthrough: c.OptionsPassthrough, Debug: c.Debug}
	}
	mw.Pre, mw.PostKeyAuth = pluginsToClassic(g.PrePlugins), pluginsToClassic(g.PostAuthenticationPlugins)
	mw.Post, mw.Response = pluginsToClassic(g.PostPlugins), pluginsToClassic(g.ResponsePlugins)
	if c := g.Cache; c != nil {
		api.CacheOptions = cacheOptions{EnableCache: c.Enabled, CacheTimeout: c.Timeout, CacheAllSafeRequests: c.CacheAllSafeRequests,
			CacheOnlyResponseCodes: c.CacheResponseCodes, CacheByHeaders: c.CacheByHeaders, EnableUpstreamCacheControl: c.EnableUpstreamCacheControl,
			CacheControlTTLHeader: c.ControlTTLHeaderName}
	}
	if h := g.TransformRequestHeaders; h != nil {
		v.GlobalHeaders, v.GlobalHeadersRemove, v.GlobalHeadersDisabled = headerMap(h.Add), h.Remove, !h.Enabled
	}
	if h := g.TransformResponseHeaders; h != nil {
		v.GlobalResponseHeaders, v.GlobalResponseHeadersRemove, v.GlobalResponseHeadersDisabled = headerMap(h.Add), h.Remove, !h.Enabled
	}
	api.EnableContextVars = enabled(g.ContextVariables)
	trafficLogsToClassic(api, g.TrafficLogs)
	if l := g.RequestSizeLimit; l != nil {
		v.GlobalSizeLimit, v.GlobalSizeLimitDisabled = l.Value, !l.Enabled
	}
	v.IgnoreEndpointCase = enabled(g.IgnoreCase)
	api.DisableRateLimit, api.DisableQuota, api.DontSetQuotasOnCreate = g.SkipRateLimit, g.SkipQuota, g.SkipQuotaReset
}

func pluginsToClassic(ps []xCustomPlugin) []middlewareDefinition {
	var out []middlewareDefinition
	for _, p := range ps {
		out = append(out, middlewareDefinition{Disabled: !p.Enabled, Name: p.FunctionName, Path: p.Path, RequireSession: p.RequireSession, RawBodyOnly: p.RawBodyOnly})
	}
	return out
}

func trafficLogsToClassic(api *classicAPI, tl *xTrafficLogs) {
	if tl == nil {
		api.DoNotTrack = true
		return
	}
	api.DoNotTrack, api.TagHeaders = !tl.Enabled, tl.TagHeaders
	api.ExpireAnalyticsAfter = int64(durationSeconds(tl.CustomRetentionPeriod))
	if len(tl.Plugins) > 0 {
		p := tl.Plugins[0]
		api.AnalyticsPlugin = analyticsPlugin{Enabled: p.Enabled, FuncName: p.FunctionName, PluginPath: p.Path}
	}
}

// operationsToClassic fills the extended paths from the operations' middleware, path by path in the order
// Tyk's extraction visits them (the most specific first: classic matches entries in list order), each kind of
// the table appending its setting.
func operationsToClassic(ep *extendedPaths, index operationIndex, operation func(id string) *xOperation) {
	// the operations with middleware, as positions in index: a copy of each operationAt cost 48 bytes an
	// operation, twice over while the list grew
	var withMiddleware []int32
	for i, at := range index {
		if !at.null && operation(at.id) != nil {
			withMiddleware = append(withMiddleware, int32(i))
		}
	}
	slices.SortFunc(withMiddleware, func(i, j int32) int {
		a, b := &index[i], &index[j]
		if c := comparePaths(a.path, b.path); c != 0 {
			return c
		}
		return a.method - b.method
	})
	for _, i := range withMiddleware {
		at := &index[i]
		x := operation(at.id)
		e := endpointRef{Path: at.path, Method: httpMethods[at.method]} // the OpenAPI path, as ExtractTo writes it: see paths.go
		for i := range kinds {
			if k := &kinds[i]; k.toClassic != nil {
				k.toClassic(ep, x, e)
			}
		}
	}
}

// comparePaths orders OpenAPI paths as Tyk's extraction does: more segments first, then longer (both without
// their {parameters}), then alphabetically; of two paths equal without parameters, the literal one first.
func comparePaths(a, b string) int {
	sa, sb := withoutParams(a), withoutParams(b)
	if sa == sb {
		sa, sb = b, a
	}
	if na, nb := strings.Count(sa, "/"), strings.Count(sb, "/"); na != nb {
		return nb - na
	}
	if len(sa) != len(sb) {
		return len(sb) - len(sa)
	}
	return strings.Compare(sa, sb)
}

// withoutParams drops the {parameter} segments of an OpenAPI path's text.
func withoutParams(p string) string {
	if !strings.Contains(p, "{") {
		return p
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// leastEntriesSize is a lower bound of the written size of the allow, block and ignore-authentication entries
// of api's versions: each is an object of five members, none omitted, whose strings are written at least as
// long as they are.
func (api *classicAPI) leastEntriesSize() int {
	least := len(`{"disabled":true,"path":"","method":"","ignore_case":true,"method_actions":{}}`)
	n := 0
	for _, v := range api.VersionData.Versions {
		for _, list := range [][]endpointMeta{v.ExtendedPaths.WhiteList, v.ExtendedPaths.BlackList, v.ExtendedPaths.Ignored} {
			for _, e := range list {
				n += least + len(e.Path) + len(e.Method)
			}
		}
	}
	return n
}
