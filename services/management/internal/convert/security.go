package convert

import (
	"encoding/json"
	"slices"
)

// Authentication: x-tyk-api-gateway.server.authentication plus, for the methods OpenAPI can describe (auth
// token, JWT, basic, OAuth and external OAuth), components.securitySchemes and one root security requirement
// naming all of them (AND, as classic multi-auth).

type xAuthentication struct {
	Enabled                bool                `json:"enabled"`
	StripAuthorizationData bool                `json:"stripAuthorizationData,omitempty"`
	BaseIdentityProvider   string              `json:"baseIdentityProvider,omitempty"`
	HMAC                   *xHMAC              `json:"hmac,omitempty"`
	OIDC                   *xOIDC              `json:"oidc,omitempty"`
	Custom                 *xCustomAuth        `json:"custom,omitempty"`
	SecuritySchemes        *xSecuritySchemes   `json:"securitySchemes,omitempty"`
	CustomKeyLifetime      *xCustomKeyLifetime `json:"customKeyLifetime,omitempty"`
}

// xAuthSources are the places, besides the OpenAPI scheme, a credential is read from.
type xAuthSources struct {
	Header *xAuthSource `json:"header,omitempty"`
	Cookie *xAuthSource `json:"cookie,omitempty"`
	Query  *xAuthSource `json:"query,omitempty"`
}

type xSecuritySchemes struct {
	AuthToken     *xToken         `json:"authToken,omitempty"`
	Basic         *xBasic         `json:"basic,omitempty"`
	ExternalOAuth *xExternalOAuth `json:"externalOAuth,omitempty"`
	JWT           *xJWT           `json:"jwt,omitempty"`
	OAuth         *xOAuth         `json:"oauth,omitempty"`

	byName map[string]json.RawMessage // every scheme by its name, when decoded (ToClassic)
}

func (s *xSecuritySchemes) empty() bool {
	return s.AuthToken == nil && s.Basic == nil && s.ExternalOAuth == nil && s.JWT == nil && s.OAuth == nil
}

type xToken struct {
	Enabled bool `json:"enabled"`
	xAuthSources
	EnableClientCertificate bool        `json:"enableClientCertificate,omitempty"`
	SignatureValidation     *xSignature `json:"signatureValidation,omitempty"`
}

type xSignature struct {
	Enabled          bool         `json:"enabled"`
	Algorithm        string       `json:"algorithm,omitempty"`
	Header           string       `json:"header,omitempty"`
	Query            *xAuthSource `json:"query,omitempty"`
	Secret           string       `json:"secret,omitempty"`
	AllowedClockSkew int64        `json:"allowedClockSkew,omitempty"`
	ErrorCode        int          `json:"errorCode,omitempty"`
	ErrorMessage     string       `json:"errorMessage,omitempty"`
}

type xJWT struct {
	Enabled bool `json:"enabled"`
	xAuthSources
	Source                     string   `json:"source,omitempty"`
	SigningMethod              string   `json:"signingMethod,omitempty"`
	IdentityBaseField          string   `json:"identityBaseField,omitempty"`
	SkipKid                    bool     `json:"skipKid,omitempty"`
	PolicyFieldName            string   `json:"policyFieldName,omitempty"`
	ClientBaseField            string   `json:"clientBaseField,omitempty"`
	Scopes                     *xScopes `json:"scopes,omitempty"`
	DefaultPolicies            []string `json:"defaultPolicies,omitempty"`
	IssuedAtValidationSkew     uint64   `json:"issuedAtValidationSkew,omitempty"`
	NotBeforeValidationSkew    uint64   `json:"notBeforeValidationSkew,omitempty"`
	ExpiresAtValidationSkew    uint64   `json:"expiresAtValidationSkew,omitempty"`
	IDPClientIDMappingDisabled bool     `json:"idpClientIdMappingDisabled,omitempty"`
}

type xScopes struct {
	ClaimName            string           `json:"claimName,omitempty"`
	ScopeToPolicyMapping []xScopeToPolicy `json:"scopeToPolicyMapping,omitempty"`
}

type xScopeToPolicy struct {
	Scope    string `json:"scope"`
	PolicyID string `json:"policyId"`
}

type xBasic struct {
	Enabled bool `json:"enabled"`
	xAuthSources
	DisableCaching             bool                 `json:"disableCaching,omitempty"`
	CacheTTL                   int                  `json:"cacheTTL,omitempty"`
	ExtractCredentialsFromBody *xExtractCredentials `json:"extractCredentialsFromBody,omitempty"`
}

type xExtractCredentials struct {
	Enabled        bool   `json:"enabled"`
	UserRegexp     string `json:"userRegexp,omitempty"`
	PasswordRegexp string `json:"passwordRegexp,omitempty"`
}

type xOAuth struct {
	Enabled bool `json:"enabled"`
	xAuthSources
	AllowedAuthorizeTypes []string        `json:"allowedAuthorizeTypes,omitempty"`
	RefreshToken          bool            `json:"refreshToken,omitempty"`
	AuthLoginRedirect     string          `json:"authLoginRedirect,omitempty"`
	Notifications         *xNotifications `json:"notifications,omitempty"`
}

type xNotifications struct {
	SharedSecret   string `json:"sharedSecret,omitempty"`
	OnKeyChangeURL string `json:"onKeyChangeUrl,omitempty"`
}

type xExternalOAuth struct {
	Enabled bool `json:"enabled"`
	xAuthSources
	Providers []xOAuthProvider `json:"providers,omitempty"`
}

type xOAuthProvider struct {
	JWT           *xJWTValidation `json:"jwt,omitempty"`
	Introspection *xIntrospection `json:"introspection,omitempty"`
}

type xJWTValidation struct {
	Enabled                 bool   `json:"enabled"`
	SigningMethod           string `json:"signingMethod"`
	Source                  string `json:"source"`
	IdentityBaseField       string `json:"identityBaseField,omitempty"`
	IssuedAtValidationSkew  uint64 `json:"issuedAtValidationSkew,omitempty"`
	NotBeforeValidationSkew uint64 `json:"notBeforeValidationSkew,omitempty"`
	ExpiresAtValidationSkew uint64 `json:"expiresAtValidationSkew,omitempty"`
}

type xIntrospection struct {
	Enabled           bool                 `json:"enabled"`
	URL               string               `json:"url,omitempty"`
	ClientID          string               `json:"clientId,omitempty"`
	ClientSecret      string               `json:"clientSecret,omitempty"`
	IdentityBaseField string               `json:"identityBaseField,omitempty"`
	Cache             *xIntrospectionCache `json:"cache,omitempty"`
}

type xIntrospectionCache struct {
	Enabled bool  `json:"enabled"`
	Timeout int64 `json:"timeout"`
}

type xHMAC struct {
	Enabled bool `json:"enabled"`
	xAuthSources
	AllowedAlgorithms []string `json:"allowedAlgorithms,omitempty"`
	AllowedClockSkew  float64  `json:"allowedClockSkew,omitempty"`
}

type xOIDC struct {
	Enabled bool `json:"enabled"`
	xAuthSources
	SegregateByClientID bool            `json:"segregateByClientId,omitempty"`
	Providers           []xOIDCProvider `json:"providers,omitempty"`
	Scopes              *xScopes        `json:"scopes,omitempty"`
}

type xOIDCProvider struct {
	Issuer                string            `json:"issuer"`
	ClientToPolicyMapping []xClientToPolicy `json:"clientToPolicyMapping,omitempty"`
}

type xClientToPolicy struct {
	ClientID string `json:"clientId"`
	PolicyID string `json:"policyId"`
}

type xCustomAuth struct {
	Enabled bool `json:"enabled"`
	xAuthSources
	Config *xAuthenticationPlugin `json:"config,omitempty"`
}

type xAuthenticationPlugin struct {
	Enabled        bool          `json:"enabled"`
	FunctionName   string        `json:"functionName"`
	Path           string        `json:"path,omitempty"`
	RawBodyOnly    bool          `json:"rawBodyOnly,omitempty"`
	RequireSession bool          `json:"requireSession,omitempty"`
	IDExtractor    *xIDExtractor `json:"idExtractor,omitempty"`
}

type xIDExtractor struct {
	Enabled bool               `json:"enabled"`
	Source  string             `json:"source"`
	With    string             `json:"with"`
	Config  xIDExtractorConfig `json:"config"`
}

type xIDExtractorConfig struct {
	HeaderName       string `json:"headerName,omitempty"`
	FormParamName    string `json:"formParamName,omitempty"`
	Regexp           string `json:"regexp,omitempty"`
	RegexpMatchIndex int64  `json:"regexpMatchIndex,omitempty"`
	XPathExp         string `json:"xPathExp,omitempty"`
}

type xCustomKeyLifetime struct {
	Enabled         bool   `json:"enabled"`
	Value           string `json:"value,omitempty"`
	RespectValidity bool   `json:"respectValidity,omitempty"`
}

// securityScheme is an OpenAPI security scheme.
type securityScheme struct {
	BearerFormat string      `json:"bearerFormat,omitempty"`
	Flows        *oauthFlows `json:"flows,omitempty"`
	In           string      `json:"in,omitempty"`
	Name         string      `json:"name,omitempty"`
	Scheme       string      `json:"scheme,omitempty"`
	Type         string      `json:"type"`
}

type oauthFlows struct {
	AuthorizationCode *oauthFlow `json:"authorizationCode,omitempty"`
	ClientCredentials *oauthFlow `json:"clientCredentials,omitempty"`
	Implicit          *oauthFlow `json:"implicit,omitempty"`
	Password          *oauthFlow `json:"password,omitempty"`
}

type oauthFlow struct {
	AuthorizationURL string            `json:"authorizationUrl,omitempty"`
	Scopes           map[string]string `json:"scopes"`
	TokenURL         string            `json:"tokenUrl,omitempty"`
}

const (
	oauthAuthorizeURL = "/oauth/authorize"
	oauthTokenURL     = "/oauth/token"
)

var baseIdentityProviders = []string{"auth_token", "hmac_key", "basic_auth_user", "jwt_claim", "oidc_user", "oauth_key", "custom_auth", ""}

// authentication builds server.authentication; the OpenAPI side is added by security.
func (c *converter) authentication() *xAuthentication {
	api := c.api
	a := &xAuthentication{
		Enabled:                !api.UseKeyless,
		StripAuthorizationData: api.StripAuthData,
		BaseIdentityProvider:   api.BaseIdentityProvidedBy,
	}
	if !slices.Contains(baseIdentityProviders, a.BaseIdentityProvider) {
		c.fail("base_identity_provided_by: %q is not one of %v", a.BaseIdentityProvider, baseIdentityProviders[:7])
	}
	if api.SessionLifetime != 0 || api.SessionLifetimeRespectsKeyExpiration {
		kl := &xCustomKeyLifetime{Enabled: api.SessionLifetime > 0, RespectValidity: api.SessionLifetimeRespectsKeyExpiration}
		if api.SessionLifetime > 0 {
			kl.Value = seconds(api.SessionLifetime)
		} else if api.SessionLifetime < 0 {
			c.fail("session_lifetime: %d is negative", api.SessionLifetime)
		}
		a.CustomKeyLifetime = kl
	}

	// in this order, as the messages of a failure are
	ss := &xSecuritySchemes{AuthToken: c.tokenScheme(), JWT: c.jwtScheme(), Basic: c.basicScheme(), OAuth: c.oauthScheme(),
		ExternalOAuth: c.externalOAuthScheme()}
	if !ss.empty() {
		a.SecuritySchemes = ss
	}

	a.HMAC = c.hmac()
	a.OIDC = c.oidc()
	if api.CustomPluginAuthEnabled {
		a.Custom = c.customAuth()
	}
	if a.Enabled && a.SecuritySchemes == nil && a.HMAC == nil && a.OIDC == nil && a.Custom == nil {
		c.fail("use_keyless: the API requires authentication but no authentication method could be converted")
	}
	return a
}

// tokenScheme is the auth token scheme, nil when the API does not use one.
func (c *converter) tokenScheme() *xToken {
	api := c.api
	ac, ok := api.AuthConfigs[authTokenType]
	if !ok {
		return nil
	}
	t := &xToken{Enabled: api.UseStandardAuth, EnableClientCertificate: ac.UseCertificate, xAuthSources: sources(ac)}
	if _, _, ok := apiKeyPlacement(ac); !ok {
		// Tyk OAS describes the token with an apiKey scheme, which always switches one of the three on.
		c.fail("auth_configs.authToken: the header, query and cookie sources of the auth token are all disabled; " +
			"a Tyk OAS apiKey security scheme always reads the token from one of them")
	}
	if sig := ac.Signature; ac.ValidateSignature || sig.Algorithm != "" || sig.Secret != "" {
		t.SignatureValidation = &xSignature{Enabled: ac.ValidateSignature, Algorithm: sig.Algorithm, Header: sig.Header,
			Secret: sig.Secret, AllowedClockSkew: sig.AllowedClockSkew, ErrorCode: sig.ErrorCode, ErrorMessage: sig.ErrorMessage}
		if sig.UseParam || sig.ParamName != "" {
			t.SignatureValidation.Query = &xAuthSource{Enabled: sig.UseParam, Name: sig.ParamName}
		}
	}
	return t
}

// jwtScheme is the JWT scheme, nil when the API does not use one.
func (c *converter) jwtScheme() *xJWT {
	api := c.api
	ac, ok := api.AuthConfigs[jwtType]
	if !ok {
		return nil
	}
	j := &xJWT{
		Enabled:                    api.EnableJWT,
		xAuthSources:               sources(ac),
		Source:                     api.JWTSource,
		SigningMethod:              api.JWTSigningMethod,
		IdentityBaseField:          api.JWTIdentityBaseField,
		SkipKid:                    api.JWTSkipKid,
		PolicyFieldName:            api.JWTPolicyFieldName,
		ClientBaseField:            api.JWTClientIDBaseField,
		Scopes:                     scopes(api.Scopes.JWT),
		DefaultPolicies:            api.JWTDefaultPolicies,
		IssuedAtValidationSkew:     api.JWTIssuedAtValidationSkew,
		NotBeforeValidationSkew:    api.JWTNotBeforeValidationSkew,
		ExpiresAtValidationSkew:    api.JWTExpiresAtValidationSkew,
		IDPClientIDMappingDisabled: api.IDPClientIDMappingDisabled,
	}
	return j
}

// basicScheme is the basic authentication scheme, nil when the API does not use one.
func (c *converter) basicScheme() *xBasic {
	api := c.api
	ac, ok := api.AuthConfigs[basicType]
	if !ok {
		return nil
	}
	b := api.BasicAuth
	x := &xBasic{Enabled: api.UseBasicAuth, xAuthSources: sources(ac), DisableCaching: b.DisableCaching, CacheTTL: b.CacheTTL}
	if b.ExtractFromBody || b.BodyUserRegexp != "" || b.BodyPasswordRegexp != "" {
		x.ExtractCredentialsFromBody = &xExtractCredentials{Enabled: b.ExtractFromBody, UserRegexp: b.BodyUserRegexp, PasswordRegexp: b.BodyPasswordRegexp}
	}
	return x
}

// oauthScheme is Tyk's own OAuth scheme, nil when the API does not use it.
func (c *converter) oauthScheme() *xOAuth {
	api := c.api
	ac, ok := api.AuthConfigs[oauthType]
	if !ok {
		return nil
	}
	m := api.OauthMeta
	o := &xOAuth{Enabled: api.UseOauth2, xAuthSources: sources(ac), AllowedAuthorizeTypes: m.AllowedAuthorizeTypes,
		RefreshToken: slices.Contains(m.AllowedAccessTypes, "refresh_token"), AuthLoginRedirect: m.AuthorizeLoginRedirect}
	for _, typ := range m.AllowedAuthorizeTypes {
		if typ != "code" && typ != "token" {
			c.fail("oauth_meta.allowed_authorize_types: %q is not one of code, token", typ)
		}
	}
	grants := 0
	for _, typ := range m.AllowedAccessTypes {
		switch typ {
		case "authorization_code", "client_credentials", "password", "implicit":
			grants++
		case "refresh_token":
		default:
			c.fail("oauth_meta.allowed_access_types: %q is not a supported grant type", typ)
		}
	}
	if grants == 0 {
		// Tyk's loader reads the allowed grants back from the OpenAPI flows, and an oauth2 scheme needs at
		// least one flow: any flow written here would allow a grant classic refuses.
		c.fail("oauth_meta.allowed_access_types: no grant type besides refresh_token is allowed; a Tyk OAS oauth2 " +
			"scheme needs one flow, and each flow allows its grant")
	}
	if n := api.Notifications; n.SharedSecret != "" || n.OAuthKeyChangeURL != "" {
		o.Notifications = &xNotifications{SharedSecret: n.SharedSecret, OnKeyChangeURL: n.OAuthKeyChangeURL}
	}
	return o
}

// externalOAuthScheme is the external OAuth scheme, nil when the API does not use it.
func (c *converter) externalOAuthScheme() *xExternalOAuth {
	api := c.api
	if !(api.ExternalOAuth.Enabled) {
		return nil
	}
	ac := api.AuthConfigs[externalOAuthType]
	e := &xExternalOAuth{Enabled: true, xAuthSources: sources(ac)}
	if len(api.ExternalOAuth.Providers) == 0 {
		// Tyk's loader tells an external OAuth scheme from Tyk's own OAuth by its providers: without any,
		// the scheme would load as Tyk OAuth (use_oauth2, with the grant of its flow) instead.
		c.fail("external_oauth.providers: external OAuth is enabled with no provider; Tyk OAS would load the scheme as Tyk's own OAuth")
	}
	for _, p := range api.ExternalOAuth.Providers {
		var xp xOAuthProvider
		if j := p.JWT; j.Enabled || j.SigningMethod != "" || j.Source != "" {
			xp.JWT = &xJWTValidation{Enabled: j.Enabled, SigningMethod: j.SigningMethod, Source: j.Source, IdentityBaseField: j.IdentityBaseField,
				IssuedAtValidationSkew: j.IssuedAtValidationSkew, NotBeforeValidationSkew: j.NotBeforeValidationSkew, ExpiresAtValidationSkew: j.ExpiresAtValidationSkew}
		}
		if in := p.Introspection; in.Enabled || in.URL != "" {
			xp.Introspection = &xIntrospection{Enabled: in.Enabled, URL: in.URL, ClientID: in.ClientID, ClientSecret: in.ClientSecret, IdentityBaseField: in.IdentityBaseField}
			if in.Cache.Enabled || in.Cache.Timeout != 0 {
				xp.Introspection.Cache = &xIntrospectionCache{Enabled: in.Cache.Enabled, Timeout: in.Cache.Timeout}
			}
		}
		e.Providers = append(e.Providers, xp)
	}
	return e
}

// hmac is HMAC request signing, nil when the API does not use it.
func (c *converter) hmac() *xHMAC {
	api := c.api
	ac, ok := api.AuthConfigs[hmacType]
	if !ok {
		return nil
	}
	return &xHMAC{Enabled: api.EnableSignatureChecking, xAuthSources: sources(ac), AllowedAlgorithms: api.HmacAllowedAlgorithms,
		AllowedClockSkew: api.HmacAllowedClockSkew}
}

// oidc is OpenID Connect, nil when the API does not use it.
func (c *converter) oidc() *xOIDC {
	api := c.api
	if !(api.UseOpenID) {
		return nil
	}
	ac := api.AuthConfigs[oidcType]
	o := &xOIDC{Enabled: true, xAuthSources: sources(ac), SegregateByClientID: api.OpenIDOptions.SegregateByClient, Scopes: scopes(api.Scopes.OIDC)}
	for _, p := range api.OpenIDOptions.Providers {
		xp := xOIDCProvider{Issuer: p.Issuer}
		for _, id := range sortedKeys(p.ClientIDs) {
			xp.ClientToPolicyMapping = append(xp.ClientToPolicyMapping, xClientToPolicy{ClientID: id, PolicyID: p.ClientIDs[id]})
		}
		o.Providers = append(o.Providers, xp)
	}
	return o
}

func (c *converter) customAuth() *xCustomAuth {
	api := c.api
	mw := api.CustomMiddleware
	x := &xCustomAuth{Enabled: true, xAuthSources: sources(api.AuthConfigs[coprocessType])}
	chk := mw.AuthCheck
	cfg := &xAuthenticationPlugin{Enabled: !chk.Disabled, FunctionName: chk.Name, Path: chk.Path, RawBodyOnly: chk.RawBodyOnly, RequireSession: chk.RequireSession}
	if id := mw.IDExtractor; id.ExtractFrom != "" || id.ExtractWith != "" {
		meta := metaReader{m: id.ExtractorConfig}
		ex := &xIDExtractor{Enabled: !id.Disabled, Source: id.ExtractFrom, With: id.ExtractWith, Config: xIDExtractorConfig{
			HeaderName:       meta.string("header_name"),
			FormParamName:    meta.string("param_name"),
			Regexp:           meta.string("regex_expression"),
			RegexpMatchIndex: meta.int("regex_match_index"),
			XPathExp:         meta.string("xpath_expression"),
		}}
		if meta.bad != "" {
			c.fail("custom_middleware.id_extractor.extractor_config.%s: unexpected type", meta.bad)
		}
		if !slices.Contains([]string{"body", "header", "form"}, ex.Source) {
			c.fail("custom_middleware.id_extractor.extract_from: %q is not one of body, header, form", ex.Source)
		}
		if !slices.Contains([]string{"value", "xpath", "regex"}, ex.With) {
			c.fail("custom_middleware.id_extractor.extract_with: %q is not one of value, xpath, regex", ex.With)
		}
		cfg.IDExtractor = ex
	}
	if chk.Name != "" || chk.Path != "" || cfg.IDExtractor != nil {
		x.Config = cfg
	}
	return x
}

// security adds the OpenAPI security schemes and the root security requirement of the enabled methods that
// OpenAPI can describe.
func (c *converter) security(d *oasDocument) {
	if c.shared.security == nil {
		c.shared.security = &oasDocument{XTyk: d.XTyk}
		c.sharedSecurity(c.shared.security)
	}
	d.Components, d.Security = c.shared.security.Components, c.shared.security.Security
}

// sharedSecurity adds the security schemes and requirement of every document to d.
func (c *converter) sharedSecurity(d *oasDocument) {
	auth := d.XTyk.Server.Authentication
	if auth == nil || auth.SecuritySchemes == nil {
		return
	}
	api := c.api
	ss := auth.SecuritySchemes
	schemes := map[string]*securityScheme{}
	if ss.AuthToken != nil {
		in, name, _ := apiKeyPlacement(api.AuthConfigs[authTokenType])
		schemes[authTokenType] = &securityScheme{Type: "apiKey", In: in, Name: name}
	}
	if ss.JWT != nil {
		schemes[jwtType] = &securityScheme{Type: "http", Scheme: "bearer", BearerFormat: "JWT"}
	}
	if ss.Basic != nil {
		schemes[basicType] = &securityScheme{Type: "http", Scheme: "basic"}
	}
	if ss.OAuth != nil {
		flows := &oauthFlows{}
		for _, typ := range api.OauthMeta.AllowedAccessTypes {
			switch typ {
			case "authorization_code":
				flows.AuthorizationCode = &oauthFlow{AuthorizationURL: oauthAuthorizeURL, TokenURL: oauthTokenURL, Scopes: map[string]string{}}
			case "client_credentials":
				flows.ClientCredentials = &oauthFlow{TokenURL: oauthTokenURL, Scopes: map[string]string{}}
			case "password":
				flows.Password = &oauthFlow{TokenURL: oauthTokenURL, Scopes: map[string]string{}}
			case "implicit":
				flows.Implicit = &oauthFlow{AuthorizationURL: oauthAuthorizeURL, Scopes: map[string]string{}}
			}
		}
		schemes[oauthType] = &securityScheme{Type: "oauth2", Flows: flows}
	}
	if ss.ExternalOAuth != nil {
		schemes[externalOAuthType] = &securityScheme{Type: "oauth2", Flows: &oauthFlows{
			AuthorizationCode: &oauthFlow{AuthorizationURL: oauthAuthorizeURL, TokenURL: oauthTokenURL, Scopes: map[string]string{}}}}
	}
	req := make(map[string][]string, len(schemes))
	for name := range schemes {
		req[name] = []string{}
	}
	d.Components = &components{SecuritySchemes: schemes}
	d.Security = []map[string][]string{req}
}

// apiKeyPlacement is where the OpenAPI apiKey scheme reads the auth token: the header unless it is disabled,
// else the query parameter, else the cookie, each named as the gateway names it (see sources). ok is false
// when classic reads the token from none of them.
func apiKeyPlacement(ac authConfig) (in, name string, ok bool) {
	s := sources(ac)
	switch {
	case s.Header.Enabled:
		return "header", s.Header.Name, true
	case s.Query != nil && s.Query.Enabled:
		return "query", s.Query.Name, true
	case s.Cookie != nil && s.Cookie.Enabled:
		return "cookie", s.Cookie.Name, true
	}
	return "header", s.Header.Name, false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// defaultAuthHeader is the header the gateway reads credentials from when auth_header_name is empty.
const defaultAuthHeader = "Authorization"

// sources writes every credential place of a classic auth config explicitly, for every method. Tyk's loader
// (AuthSources.ExtractTo) reads an absent header source as disable_header: true and absent query and cookie
// sources as off, so nothing may be left to a default:
//   - header: always written, enabled unless classic disabled it, named auth_header_name or "Authorization";
//   - query and cookie: written when classic reads them (use_param, use_cookie) or names them, with the name
//     the gateway reads: param_name (cookie_name), else the header's name when the header is enabled, else
//     "Authorization" (the gateway's getAuthToken rule).
//
// Loading the result gives back a config the gateway reads exactly as it read the classic one.
func sources(ac authConfig) xAuthSources {
	fallback := defaultAuthHeader
	if !ac.DisableHeader && ac.AuthHeaderName != "" {
		fallback = ac.AuthHeaderName
	}
	s := xAuthSources{Header: &xAuthSource{Enabled: !ac.DisableHeader, Name: orDefault(ac.AuthHeaderName, defaultAuthHeader)}}
	if ac.UseParam || ac.ParamName != "" {
		s.Query = &xAuthSource{Enabled: ac.UseParam, Name: orDefault(ac.ParamName, fallback)}
	}
	if ac.UseCookie || ac.CookieName != "" {
		s.Cookie = &xAuthSource{Enabled: ac.UseCookie, Name: orDefault(ac.CookieName, fallback)}
	}
	return s
}

func scopes(sc scopeClaim) *xScopes {
	if sc.ScopeClaimName == "" && len(sc.ScopeToPolicy) == 0 {
		return nil
	}
	out := &xScopes{ClaimName: sc.ScopeClaimName}
	for _, s := range sortedKeys(sc.ScopeToPolicy) {
		out.ScopeToPolicyMapping = append(out.ScopeToPolicyMapping, xScopeToPolicy{Scope: s, PolicyID: sc.ScopeToPolicy[s]})
	}
	return out
}
