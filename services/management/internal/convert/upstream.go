package convert

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// x-tyk-api-gateway.upstream: where and how the gateway proxies.

type xUpstream struct {
	URL                   string               `json:"url"`
	ServiceDiscovery      *xServiceDiscovery   `json:"serviceDiscovery,omitempty"`
	UptimeTests           *xUptimeTests        `json:"uptimeTests,omitempty"`
	MutualTLS             *xMutualTLS          `json:"mutualTLS,omitempty"`
	CertificatePinning    *xCertificatePinning `json:"certificatePinning,omitempty"`
	RateLimit             *xRateLimit          `json:"rateLimit,omitempty"`
	Authentication        *xUpstreamAuth       `json:"authentication,omitempty"`
	LoadBalancing         *xLoadBalancing      `json:"loadBalancing,omitempty"`
	PreserveHostHeader    *xEnabled            `json:"preserveHostHeader,omitempty"`
	PreserveTrailingSlash *xEnabled            `json:"preserveTrailingSlash,omitempty"`
	TLSTransport          *xTLSTransport       `json:"tlsTransport,omitempty"`
	Proxy                 *xProxy              `json:"proxy,omitempty"`
}

type xServiceDiscovery struct {
	Enabled             bool                    `json:"enabled"`
	QueryEndpoint       string                  `json:"queryEndpoint,omitempty"`
	DataPath            string                  `json:"dataPath,omitempty"`
	UseNestedQuery      bool                    `json:"useNestedQuery,omitempty"`
	ParentDataPath      string                  `json:"parentDataPath,omitempty"`
	PortDataPath        string                  `json:"portDataPath,omitempty"`
	UseTargetList       bool                    `json:"useTargetList,omitempty"`
	Cache               *xServiceDiscoveryCache `json:"cache,omitempty"`
	TargetPath          string                  `json:"targetPath,omitempty"`
	EndpointReturnsList bool                    `json:"endpointReturnsList,omitempty"`
}

type xServiceDiscoveryCache struct {
	Enabled bool  `json:"enabled"`
	Timeout int64 `json:"timeout,omitempty"`
}

type xUptimeTests struct {
	Enabled              bool               `json:"enabled"`
	ServiceDiscovery     *xServiceDiscovery `json:"serviceDiscovery,omitempty"`
	Tests                []xUptimeTest      `json:"tests,omitempty"`
	HostDownRetestPeriod string             `json:"hostDownRetestPeriod,omitempty"`
	LogRetentionPeriod   string             `json:"logRetentionPeriod,omitempty"`
}

type xUptimeTest struct {
	URL                 string            `json:"url"`
	Timeout             string            `json:"timeout,omitempty"`
	Method              string            `json:"method,omitempty"`
	Headers             map[string]string `json:"headers,omitempty"`
	Body                string            `json:"body,omitempty"`
	Commands            []xUptimeCommand  `json:"commands,omitempty"`
	EnableProxyProtocol bool              `json:"enableProxyProtocol,omitempty"`
}

type xUptimeCommand struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

type xMutualTLS struct {
	Enabled                    bool                   `json:"enabled"`
	DomainToCertificateMapping []xDomainToCertificate `json:"domainToCertificateMapping"`
}

type xDomainToCertificate struct {
	Domain      string `json:"domain"`
	Certificate string `json:"certificate"`
}

type xCertificatePinning struct {
	Enabled                   bool                `json:"enabled"`
	DomainToPublicKeysMapping []xPinnedPublicKeys `json:"domainToPublicKeysMapping"`
}

type xPinnedPublicKeys struct {
	Domain     string   `json:"domain"`
	PublicKeys []string `json:"publicKeys"`
}

type xRateLimit struct {
	Enabled bool    `json:"enabled"`
	Rate    float64 `json:"rate"`
	Per     string  `json:"per"`
}

type xUpstreamAuth struct {
	Enabled        bool                `json:"enabled"`
	BasicAuth      *xUpstreamBasicAuth `json:"basicAuth,omitempty"`
	OAuth          *xUpstreamOAuth     `json:"oauth,omitempty"`
	RequestSigning *xRequestSigning    `json:"requestSigning,omitempty"`
}

type xAuthSource struct {
	Enabled bool   `json:"enabled"`
	Name    string `json:"name,omitempty"`
}

type xUpstreamBasicAuth struct {
	Enabled  bool         `json:"enabled"`
	Header   *xAuthSource `json:"header,omitempty"`
	Username string       `json:"username"`
	Password string       `json:"password"`
}

type xUpstreamOAuth struct {
	Enabled               bool                  `json:"enabled"`
	AllowedAuthorizeTypes []string              `json:"allowedAuthorizeTypes"`
	ClientCredentials     *xClientCredentials   `json:"clientCredentials,omitempty"`
	Password              *xPasswordCredentials `json:"password,omitempty"`
}

type xClientCredentials struct {
	ClientID      string       `json:"clientId"`
	ClientSecret  string       `json:"clientSecret"`
	TokenURL      string       `json:"tokenUrl"`
	Scopes        []string     `json:"scopes,omitempty"`
	Header        *xAuthSource `json:"header,omitempty"`
	ExtraMetadata []string     `json:"extraMetadata,omitempty"`
}

type xPasswordCredentials struct {
	ClientID      string       `json:"clientId"`
	ClientSecret  string       `json:"clientSecret,omitempty"`
	TokenURL      string       `json:"tokenUrl"`
	Scopes        []string     `json:"scopes,omitempty"`
	Username      string       `json:"username"`
	Password      string       `json:"password"`
	Header        *xAuthSource `json:"header,omitempty"`
	ExtraMetadata []string     `json:"extraMetadata,omitempty"`
}

type xRequestSigning struct {
	Enabled         bool     `json:"enabled"`
	SignatureHeader string   `json:"signatureHeader,omitempty"`
	Algorithm       string   `json:"algorithm,omitempty"`
	KeyID           string   `json:"keyId,omitempty"`
	Headers         []string `json:"headers,omitempty"`
	Secret          string   `json:"secret,omitempty"`
	CertificateID   string   `json:"certificateId,omitempty"`
}

type xLoadBalancing struct {
	Enabled              bool                   `json:"enabled"`
	SkipUnavailableHosts bool                   `json:"skipUnavailableHosts,omitempty"`
	Targets              []xLoadBalancingTarget `json:"targets,omitempty"`
}

type xLoadBalancingTarget struct {
	URL    string `json:"url"`
	Weight int    `json:"weight"`
}

type xTLSTransport struct {
	InsecureSkipVerify   bool     `json:"insecureSkipVerify,omitempty"`
	Ciphers              []string `json:"ciphers,omitempty"`
	MinVersion           string   `json:"minVersion,omitempty"`
	MaxVersion           string   `json:"maxVersion,omitempty"`
	ForceCommonNameCheck bool     `json:"forceCommonNameCheck,omitempty"`
}

type xProxy struct {
	Enabled bool   `json:"enabled"`
	URL     string `json:"url"`
}

func (c *converter) upstream(t *target) xUpstream {
	if c.shared.upstream == nil {
		u := c.sharedUpstream()
		c.shared.upstream = &u
	}
	u := *c.shared.upstream
	u.URL = t.targetURL
	return u
}

// sharedUpstream is the upstream of every document but its URL.
func (c *converter) sharedUpstream() xUpstream {
	api := c.api
	p := api.Proxy
	u := xUpstream{
		ServiceDiscovery:   serviceDiscovery(p.ServiceDiscovery),
		UptimeTests:        c.uptimeTests(),
		MutualTLS:          c.mutualTLS(),
		CertificatePinning: c.certificatePinning(),
		RateLimit:          c.rateLimit(globalRateLimit, api.GlobalRateLimit.Rate, api.GlobalRateLimit.Per, api.GlobalRateLimit.Disabled),
		Authentication:     c.upstreamAuth(),
		LoadBalancing:      c.loadBalancing(p.EnableLoadBalancing, p.CheckHostAgainstUptimeTests, p.Targets),
		TLSTransport:       c.tlsTransport(),
	}
	if p.PreserveHostHeader {
		u.PreserveHostHeader = &xEnabled{Enabled: true}
	}
	if p.DisableStripSlash {
		u.PreserveTrailingSlash = &xEnabled{Enabled: true}
	}
	if p.Transport.ProxyURL != "" {
		// Classic uses proxy_url whenever it is set; Tyk's Fill leaves enabled false, which would drop it.
		u.Proxy = &xProxy{Enabled: true, URL: p.Transport.ProxyURL}
	}
	return u
}

// serviceDiscovery is emitted only when discovery is used; its other settings are inert otherwise.
func serviceDiscovery(sd serviceDiscoveryConfig) *xServiceDiscovery {
	if !sd.UseDiscoveryService {
		return nil
	}
	out := &xServiceDiscovery{
		Enabled:             true,
		QueryEndpoint:       sd.QueryEndpoint,
		DataPath:            sd.DataPath,
		UseNestedQuery:      sd.UseNestedQuery,
		ParentDataPath:      sd.ParentDataPath,
		PortDataPath:        sd.PortDataPath,
		UseTargetList:       sd.UseTargetList,
		TargetPath:          sd.TargetPath,
		EndpointReturnsList: sd.EndpointReturnsList,
	}
	out.Cache = &xServiceDiscoveryCache{Enabled: !sd.CacheDisabled, Timeout: sd.CacheTimeout}
	return out
}

func (c *converter) uptimeTests() *xUptimeTests {
	ut := c.api.UptimeTests
	cfg := ut.Config
	if len(ut.CheckList) == 0 && cfg.RecheckWait == 0 && cfg.ExpireUptimeAnalyticsAfter == 0 && !cfg.ServiceDiscovery.UseDiscoveryService {
		return nil
	}
	out := &xUptimeTests{
		Enabled:          len(ut.CheckList) > 0 && !ut.Disabled,
		ServiceDiscovery: serviceDiscovery(cfg.ServiceDiscovery),
	}
	if cfg.RecheckWait > 0 {
		out.HostDownRetestPeriod = seconds(cfg.RecheckWait)
	}
	if cfg.ExpireUptimeAnalyticsAfter > 0 {
		out.LogRetentionPeriod = seconds(cfg.ExpireUptimeAnalyticsAfter)
	}
	for i, chk := range ut.CheckList {
		u := chk.CheckURL
		if chk.Protocol != "" {
			if _, rest, ok := strings.Cut(u, "://"); ok {
				u = rest
			}
			u = chk.Protocol + "://" + u
		}
		test := xUptimeTest{URL: u, Method: chk.Method, Headers: chk.Headers, Body: chk.Body, EnableProxyProtocol: chk.EnableProxyProtocol}
		if chk.Timeout < 0 {
			c.fail("uptime_tests.check_list[%d].timeout: %d is negative", i, chk.Timeout)
		} else if chk.Timeout > 0 {
			test.Timeout = readableDuration(time.Duration(chk.Timeout))
		}
		for _, cmd := range chk.Commands {
			test.Commands = append(test.Commands, xUptimeCommand(cmd))
		}
		out.Tests = append(out.Tests, test)
	}
	return out
}

func (c *converter) mutualTLS() *xMutualTLS {
	certs := c.api.UpstreamCertificates
	if len(certs) == 0 {
		return nil
	}
	out := &xMutualTLS{Enabled: !c.api.UpstreamCertificatesDisabled}
	for _, d := range sortedKeys(certs) {
		if !domainPattern.MatchString(d) {
			c.fail("upstream_certificates: %q is not a domain", d)
		}
		out.DomainToCertificateMapping = append(out.DomainToCertificateMapping, xDomainToCertificate{Domain: d, Certificate: certs[d]})
	}
	return out
}

func (c *converter) certificatePinning() *xCertificatePinning {
	pins := c.api.PinnedPublicKeys
	if len(pins) == 0 {
		return nil
	}
	out := &xCertificatePinning{Enabled: !c.api.CertificatePinningDisabled}
	for _, d := range sortedKeys(pins) {
		if !domainPattern.MatchString(d) {
			c.fail("pinned_public_keys: %q is not a domain", d)
		}
		var keys []string
		for k := range strings.SplitSeq(pins[d], ",") {
			if k = strings.TrimSpace(k); k != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			c.fail("pinned_public_keys: domain %q lists no public keys", d)
			continue
		}
		out.DomainToPublicKeysMapping = append(out.DomainToPublicKeysMapping, xPinnedPublicKeys{Domain: d, PublicKeys: keys})
	}
	return out
}

// globalRateLimit names the API's rate limit in messages.
var globalRateLimit fmt.Stringer = fieldName("global_rate_limit")

// fieldName is a classic field's name in messages.
type fieldName string

func (f fieldName) String() string { return string(f) }

// endpointField names an endpoint entry of a list in messages: "field: METHOD path".
type endpointField struct {
	list         listField
	method, path string
}

func (f endpointField) String() string { return f.list.String() + ": " + f.method + " " + f.path }

// rateLimit converts a classic rate limit (rate requests per "per" seconds). Tyk truncates fractions; a
// fraction cannot be carried into a whole-second duration, so it fails instead.
func (c *converter) rateLimit(field fmt.Stringer, rate, per float64, disabled bool) *xRateLimit {
	if rate <= 0 || per <= 0 {
		return nil
	}
	if !wholeSeconds(per) || rate != float64(int64(rate)) {
		c.fail("%s: rate %v per %v seconds: Tyk OAS rate limits need a whole rate and a whole number of seconds", field, rate, per)
		return nil
	}
	return &xRateLimit{Enabled: !disabled, Rate: rate, Per: seconds(int64(per))}
}

func (c *converter) upstreamAuth() *xUpstreamAuth {
	ua := c.api.UpstreamAuth
	rs := c.api.RequestSigning
	out := &xUpstreamAuth{Enabled: ua.Enabled}
	if b := ua.BasicAuth; b.Enabled || b.Username != "" || b.Password != "" {
		out.BasicAuth = &xUpstreamBasicAuth{Enabled: b.Enabled, Header: authSource(b.Header), Username: b.Username, Password: b.Password}
	}
	out.OAuth = c.upstreamOAuth()
	if rs.IsEnabled || rs.Secret != "" || rs.KeyID != "" || rs.CertificateID != "" || rs.Algorithm != "" {
		out.RequestSigning = &xRequestSigning{Enabled: rs.IsEnabled, SignatureHeader: rs.SignatureHeader, Algorithm: rs.Algorithm,
			KeyID: rs.KeyID, Headers: rs.HeaderList, Secret: rs.Secret, CertificateID: rs.CertificateID}
	}
	if !out.Enabled && out.BasicAuth == nil && out.OAuth == nil && out.RequestSigning == nil {
		return nil
	}
	return out
}

// upstreamOAuth is the OAuth the gateway uses towards the upstream, nil when none is configured.
func (c *converter) upstreamOAuth() *xUpstreamOAuth {
	o := c.api.UpstreamAuth.OAuth
	cc, pw := o.ClientCredentials, o.PasswordAuthentication
	if !(o.Enabled || len(o.AllowedAuthorizeTypes) > 0 || cc.ClientID != "" || pw.ClientID != "") {
		return nil
	}
	out := &xUpstreamOAuth{Enabled: o.Enabled, AllowedAuthorizeTypes: o.AllowedAuthorizeTypes}
	if out.AllowedAuthorizeTypes == nil {
		out.AllowedAuthorizeTypes = []string{}
	}
	for _, typ := range o.AllowedAuthorizeTypes {
		if typ != "clientCredentials" && typ != "password" {
			c.fail("upstream_auth.oauth.allowed_authorize_types: %q is not one of clientCredentials, password", typ)
		}
	}
	if cc.ClientID != "" || cc.ClientSecret != "" || cc.TokenURL != "" {
		out.ClientCredentials = &xClientCredentials{ClientID: cc.ClientID, ClientSecret: cc.ClientSecret, TokenURL: cc.TokenURL,
			Scopes: cc.Scopes, Header: authSource(cc.Header), ExtraMetadata: cc.ExtraMetadata}
	}
	if pw.ClientID != "" || pw.Username != "" || pw.TokenURL != "" {
		out.Password = &xPasswordCredentials{ClientID: pw.ClientID, ClientSecret: pw.ClientSecret, TokenURL: pw.TokenURL,
			Scopes: pw.Scopes, Username: pw.Username, Password: pw.Password, Header: authSource(pw.Header), ExtraMetadata: pw.ExtraMetadata}
	}
	return out
}

func authSource(s authSourceConfig) *xAuthSource {
	if !s.Enabled && s.Name == "" {
		return nil
	}
	return &xAuthSource{Enabled: s.Enabled, Name: s.Name}
}

// loadBalancing gives each distinct target a weight equal to the number of times it is listed.
func (c *converter) loadBalancing(enabled, skipUnavailable bool, targets []string) *xLoadBalancing {
	if len(targets) == 0 {
		return nil
	}
	weights := map[string]int{}
	for i, t := range targets {
		if strings.TrimSpace(t) == "" {
			c.fail("proxy.targets[%d]: a load balancing target needs a URL", i)
		}
		weights[t]++
	}
	out := &xLoadBalancing{Enabled: enabled, SkipUnavailableHosts: skipUnavailable}
	for _, u := range sortedKeys(weights) {
		out.Targets = append(out.Targets, xLoadBalancingTarget{URL: u, Weight: weights[u]})
	}
	return out
}

var tlsVersions = map[uint16]string{0x0301: "1.0", 0x0302: "1.1", 0x0303: "1.2", 0x0304: "1.3"}

func (c *converter) tlsTransport() *xTLSTransport {
	tr := c.api.Proxy.Transport
	out := &xTLSTransport{InsecureSkipVerify: tr.SSLInsecureSkipVerify, Ciphers: tr.SSLCipherSuites, ForceCommonNameCheck: tr.SSLForceCommonNameCheck}
	for _, v := range []struct {
		field string
		value uint16
		dst   *string
	}{{"proxy.transport.ssl_min_version", tr.SSLMinVersion, &out.MinVersion}, {"proxy.transport.ssl_max_version", tr.SSLMaxVersion, &out.MaxVersion}} {
		if v.value == 0 {
			continue
		}
		name, ok := tlsVersions[v.value]
		if !ok {
			c.fail("%s: %d is not a TLS version (%s)", v.field, v.value, strings.Join(slices.Sorted(func(yield func(string) bool) {
				for k, n := range tlsVersions {
					if !yield(fmt.Sprintf("%d for %s", k, n)) {
						return
					}
				}
			}), ", "))
			continue
		}
		*v.dst = name
	}
	if !out.InsecureSkipVerify && len(out.Ciphers) == 0 && out.MinVersion == "" && out.MaxVersion == "" && !out.ForceCommonNameCheck {
		return nil
	}
	return out
}
