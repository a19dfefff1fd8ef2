// Package keystone is the Keystone v3 session that the heat and zaqar
// collectors, and the signals sent to Heat and Zaqar, authenticate with:
// password authentication by user id and project id, through gophercloud,
// and the public endpoints of the catalog. Unlike
// the reference, which authenticated on every poll unless [keystone]
// cache_dir was set, a session keeps its token across polls until it
// nears expiry or is refused; with cache_dir it also keeps it on disk
// (0600 in a 0700 directory, named by a hash of the credentials) for the
// next process: the next os-collect-config, heat-config-notify or
// 99-refresh-completed.
package keystone

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
	"github.com/tripleo-go/agent/internal/secret"
)

// Credentials identify the node's stack-domain user.
type Credentials struct {
	AuthURL, UserID, ProjectID string
	Password                   secret.String
}

// Session holds a token and its catalog.
type Session struct {
	Creds Credentials
	HTTP  *http.Client
	// CacheDir and CacheTTL are [keystone] cache_dir and cache_ttl.
	CacheDir string
	CacheTTL time.Duration
	Now      func() time.Time
	// Log gets the one warning about a cache entry that cannot be used,
	// and a line when one whose catalog lacks a Needs endpoint is passed
	// over; nil says nothing.
	Log *slog.Logger
	// Needs are the endpoints the session's user will ask Endpoint for.
	// A cached entry whose catalog lacks one is not taken (the cloud
	// changed since it was kept: a region added): a new token, and its
	// catalog, replace it.
	Needs []Service

	mu       sync.Mutex
	warned   bool
	provider *gophercloud.ProviderClient
	catalog  *tokens.ServiceCatalog
	validTo  time.Time
	// cached: the token and catalog are a cache entry's, kept by an
	// earlier process, not issued to this session.
	cached bool
}

// Service is a public endpoint of a service type, in Region; "" (and
// "null") is any region.
type Service struct{ Type, Region string }

func (sv Service) String() string {
	if r := anyRegion(sv.Region); r != "" {
		return "public " + sv.Type + " endpoint in region " + r
	}
	return "public " + sv.Type + " endpoint"
}

// anyRegion is region, "" for any: the string "null" is a null that a
// template rendered into the configuration.
func anyRegion(region string) string {
	if region == "null" {
		return ""
	}
	return region
}

// lookup is the URL of sv in catalog.
func lookup(catalog *tokens.ServiceCatalog, sv Service) (string, error) {
	return openstack.V3EndpointURL(catalog, gophercloud.EndpointOpts{Type: sv.Type, Region: anyRegion(sv.Region), Availability: gophercloud.AvailabilityPublic})
}

// margin is how long before its expiry a token is replaced, so a request
// never starts with a token about to die.
const margin = 2 * time.Minute

func (s *Session) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Client returns a provider client with a valid token: the one in
// memory, the one on disk, or a new one.
func (s *Session) Client(ctx context.Context) (*gophercloud.ProviderClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil && s.now().Before(s.validTo) {
		return s.provider, nil
	}
	if s.loadCache() {
		return s.provider, nil
	}
	if err := s.authenticate(ctx); err != nil {
		return nil, err
	}
	return s.provider, nil
}

// Invalidate forgets the token and its catalog, and removes the cache
// entry they came from: the service refused the token, or the catalog's
// endpoint no longer answers.
func (s *Session) Invalidate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.provider, s.catalog, s.cached = nil, nil, false
	if p := s.cachePath(); p != "" {
		os.Remove(p)
	}
}

// Cached tells whether the token and catalog in use came from the cache
// (an earlier process kept them), not from Keystone to this session:
// the cloud may have changed since.
func (s *Session) Cached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.provider != nil && s.cached
}

// Endpoint is the public URL of serviceType in the catalog, in region
// when one is given. Empty, and the string "null" (a null that a template
// rendered into the configuration), mean no region.
func (s *Session) Endpoint(serviceType, region string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.catalog == nil {
		return "", errors.New("no catalog")
	}
	sv := Service{Type: serviceType, Region: region}
	url, err := lookup(s.catalog, sv)
	if err != nil {
		return "", fmt.Errorf("no %s in the catalog", sv)
	}
	return url, nil
}

// identityEndpoint finds the v3 endpoint as the reference does: /v2.0
// becomes the unversioned root for discovery; if discovery fails, /v2.0
// becomes /v3.
func (s *Session) identityEndpoint(ctx context.Context) string {
	root := strings.Replace(s.Creds.AuthURL, "/v2.0", "/", 1)
	p, err := openstack.NewClient(root)
	if err == nil {
		p.HTTPClient = *s.HTTP
		_, endpoint, err := utils.ChooseVersion(ctx, p, []*utils.Version{{ID: "v3.0", Priority: 30, Suffix: "/v3/"}})
		if err == nil {
			return endpoint
		}
	}
	return strings.Replace(s.Creds.AuthURL, "/v2.0", "/v3", 1)
}

func (s *Session) authenticate(ctx context.Context) error {
	endpoint := s.identityEndpoint(ctx)
	p, err := openstack.NewClient(endpoint)
	if err != nil {
		return &configError{fmt.Errorf("auth_url %s: %w", s.Creds.AuthURL, err)}
	}
	p.HTTPClient = *s.HTTP
	opts := &tokens.AuthOptions{UserID: s.Creds.UserID, Password: s.Creds.Password.Reveal(),
		Scope: tokens.Scope{ProjectID: s.Creds.ProjectID}}
	if err := openstack.AuthenticateV3(ctx, p, opts, gophercloud.EndpointOpts{}); err != nil {
		return fmt.Errorf("keystone authentication at %s: %w", endpoint, scrub(err))
	}
	res, ok := p.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return errors.New("keystone authentication: no token in the answer")
	}
	tok, err := res.ExtractToken()
	if err != nil {
		return fmt.Errorf("keystone authentication: %w", err)
	}
	catalog, err := res.ExtractServiceCatalog()
	if err != nil {
		return fmt.Errorf("keystone authentication: %w", err)
	}
	s.provider, s.catalog, s.validTo, s.cached = p, catalog, tok.ExpiresAt.Add(-margin), false
	if now := s.now(); s.validTo.Before(now) { // a short-lived token: half its life
		s.validTo = now.Add(tok.ExpiresAt.Sub(now) / 2)
	}
	s.storeCache(tok.ID, tok.ExpiresAt)
	// The next authentication is an hour away: the connection that got
	// this token is closed now, not held idle 90 s by every node of a
	// fleet that started together (10,000 sockets on Keystone).
	s.HTTP.CloseIdleConnections()
	return nil
}

// scrub keeps an error's words but not a request body (gophercloud's
// errors may quote what was sent: the password).
func scrub(err error) error {
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		return &StatusError{Method: code.Method, URL: code.URL, Status: code.Actual}
	}
	return err
}

// StatusError is an answer with an unexpected status.
type StatusError struct {
	Method, URL string
	Status      int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: status %d", e.Method, e.URL, e.Status)
}

// configError is a configuration that cannot work (an auth_url that is
// no URL).
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// Permanent tells an authentication error that asking again cannot mend:
// Keystone refused (a 4xx other than 408 and 429: wrong credentials, no
// such project), or the configuration cannot work. The others (an
// answer cut short, garbled, an error page under 200, a 5xx after the
// HTTP policy's retries) may pass.
func Permanent(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status >= 400 && se.Status < 500 && se.Status != http.StatusRequestTimeout && se.Status != http.StatusTooManyRequests
	}
	return errors.As(err, new(*configError))
}

// Token returns a valid token.
func (s *Session) Token(ctx context.Context) (string, error) {
	p, err := s.Client(ctx)
	if err != nil {
		return "", err
	}
	return p.Token(), nil
}

// Get does an authenticated GET of url into out (JSON). A refused token
// (401) is replaced once; a second refusal is an error.
func (s *Session) Get(ctx context.Context, url string, out any) error {
	for attempt := 0; ; attempt++ {
		p, err := s.Client(ctx)
		if err != nil {
			return err
		}
		sc := &gophercloud.ServiceClient{ProviderClient: p}
		_, err = sc.Get(ctx, url, out, &gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
		if err == nil {
			return nil
		}
		if gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) && attempt == 0 {
			s.Invalidate()
			continue
		}
		return scrub(err)
	}
}
