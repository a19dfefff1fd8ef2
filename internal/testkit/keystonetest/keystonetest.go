// Package keystonetest is a Keystone stand-in for unit tests of what
// authenticates (the heat and zaqar collectors, the Heat API signal):
// version discovery and v3
// password tokens for one user and project, with a catalog, request
// counts, and tokens that expire (ExpiresIn, checked by Valid) and can be
// revoked or expired early.
package keystonetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Server answers under /identity/.
type Server struct {
	UserID, ProjectID, Password string
	Region                      string
	// Catalog maps a service type to its public URL; an internal URL is
	// listed too, to be ignored.
	Catalog   map[string]string
	ExpiresIn time.Duration
	// BaseURL is the test server's URL, for discovery links.
	BaseURL string
	// Extra are endpoints listed beside Catalog's (AddEndpoint).
	Extra []Endpoint

	mu       sync.Mutex
	requests int
	auths    int                  // password authentications asked, refused ones too
	tokens   map[string]time.Time // their expiry
	issued   int
}

// New returns a server for user "uid" of project "pid".
func New(password string) *Server {
	return &Server{UserID: "uid", ProjectID: "pid", Password: password, Region: "RegionOne",
		Catalog: map[string]string{}, ExpiresIn: time.Hour, tokens: map[string]time.Time{}}
}

// Requests is how many requests Keystone got.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Authentications is how many password authentications Keystone was
// asked for, refused ones included (discovery is not one).
func (s *Server) Authentications() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auths
}

// SetPassword changes the user's password (a rotated one); tokens
// issued stay valid.
func (s *Server) SetPassword(password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Password = password
}

// SetExpiresIn changes the lifetime of the tokens issued next.
func (s *Server) SetExpiresIn(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ExpiresIn = d
}

// Valid tells whether a token was issued, has not expired and was not
// revoked.
func (s *Server) Valid(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[token]
	return ok && time.Now().Before(exp)
}

// RevokeAll revokes every token issued.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]time.Time{}
}

// ExpireAll makes every token issued expire now, before the expiry it
// was given (a Keystone whose clock jumped ahead of its clients').
func (s *Server) ExpireAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for tok := range s.tokens {
		s.tokens[tok] = now
	}
}

// SetCatalog replaces the catalog (the endpoints AddEndpoint added
// stay).
func (s *Server) SetCatalog(c map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Catalog = c
}

// Endpoint is one endpoint of a service in the catalog.
type Endpoint struct {
	// Type is the service's; Interface "public", "internal" or "admin".
	Type, Interface, Region, URL string
}

// AddEndpoint lists one more endpoint in the catalogs of the tokens
// issued next (a region added to the cloud).
func (s *Server) AddEndpoint(e Endpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Extra = append(s.Extra, e)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	switch {
	case r.URL.Path == "/identity/" || r.URL.Path == "/identity":
		fmt.Fprintf(w, `{"versions": {"values": [{"id": "v3.14", "status": "stable", "links": [{"rel": "self", "href": "%s/identity/v3/"}]}]}}`, s.BaseURL)
	case r.URL.Path == "/identity/v3/auth/tokens" && r.Method == http.MethodPost:
		s.auths++
		var req struct {
			Auth struct {
				Identity struct {
					Password struct {
						User struct{ ID, Password string }
					}
				}
				Scope struct{ Project struct{ ID string } }
			}
		}
		json.NewDecoder(r.Body).Decode(&req)
		u := req.Auth.Identity.Password.User
		if u.ID != s.UserID || u.Password != s.Password || req.Auth.Scope.Project.ID != s.ProjectID {
			http.Error(w, `{"error": {"code": 401, "message": "The request you have made requires authentication."}}`, http.StatusUnauthorized)
			return
		}
		s.issued++
		tok := fmt.Sprintf("tok-%d", s.issued)
		expires := time.Now().Add(s.ExpiresIn)
		s.tokens[tok] = expires
		services := map[string][]any{}
		for typ, url := range s.Catalog {
			services[typ] = append(services[typ],
				map[string]any{"id": typ + "-i", "interface": "internal", "region": s.Region, "region_id": s.Region, "url": url + "/internal"},
				map[string]any{"id": typ + "-p", "interface": "public", "region": s.Region, "region_id": s.Region, "url": url})
		}
		for i, e := range s.Extra {
			services[e.Type] = append(services[e.Type], map[string]any{"id": fmt.Sprintf("%s-%d", e.Type, i), "interface": e.Interface,
				"region": e.Region, "region_id": e.Region, "url": e.URL})
		}
		catalog := []any{}
		for typ, endpoints := range services {
			catalog = append(catalog, map[string]any{"type": typ, "name": typ, "id": typ, "endpoints": endpoints})
		}
		w.Header().Set("X-Subject-Token", tok)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"token": map[string]any{
			"expires_at": expires.UTC().Format("2006-01-02T15:04:05.000000Z"), "catalog": catalog}})
	default:
		http.NotFound(w, r)
	}
}
