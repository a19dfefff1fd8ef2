package chaos

// The stand-ins behind the Injector: one service per collector, each
// serving a metadata document whose version the test moves forward.

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/tripleo-go/agent/collectors/cfn"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
)

const (
	password  = "chaos-PASSWORD-9d1e"
	secretKey = "chaos-SECRET-KEY-77a0"
	// tokenLife is Keystone's token lifetime: short, so that tokens
	// expire and are renewed several times in a run.
	tokenLife = 20 * time.Second
)

// document is version v of the metadata: what the command must see,
// whole, or not at all.
func document(v int) string {
	return fmt.Sprintf(`{"chaos_version": %d, "os-collect-config": {"polling_interval": 30}, "filler": "%s"}`, v, strings.Repeat("x", 300))
}

// stand is one collector's service.
type stand struct {
	// name is the variant's name; collector, the collector it feeds, and
	// key, the cache key holding the version.
	name, collector, key string
	srv                  *httptest.Server
	in                   *Injector
	ks                   *keystonetest.Server // nil without Keystone
	// options are the collector's lines of the configuration file.
	options string
	// publish serves version v from now on.
	publish func(v int)
	// once: the collector reads its source until it first succeeds, then
	// never again (ec2).
	once bool
	// websocket: the collector's requests are a websocket's frames.
	websocket bool
	// closeAlso is what else close stops.
	closeAlso func()
}

func (s *stand) close() {
	s.srv.Close()
	if s.closeAlso != nil {
		s.closeAlso()
	}
}

// serve starts s's server with h behind the injector.
func (s *stand) serve(h http.Handler) {
	s.in = &Injector{Next: h, MaxLatency: 2 * time.Second, DripFor: dripFor()}
	s.srv = httptest.NewServer(s.in)
}

// versioned holds the document now served.
type versioned struct {
	mu      sync.Mutex
	v       int
	doc     []byte
	changed time.Time
}

func (vd *versioned) set(v int) {
	vd.mu.Lock()
	defer vd.mu.Unlock()
	vd.v, vd.doc, vd.changed = v, []byte(document(v)), time.Now()
}

func (vd *versioned) get() (int, []byte, time.Time) {
	vd.mu.Lock()
	defer vd.mu.Unlock()
	return vd.v, vd.doc, vd.changed
}

// requestStand is a Swift TempURL object: conditional GETs answered by
// ETag and Last-Modified as Swift does.
func requestStand() *stand {
	s := &stand{name: "request", collector: "request", key: "request"}
	var vd versioned
	s.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/AUTH_pid/ooo/node-0" {
			http.NotFound(w, r)
			return
		}
		v, doc, changed := vd.get()
		w.Header().Set("ETag", fmt.Sprintf(`"%032x"`, v))
		w.Header().Set("Content-Type", "application/json")
		http.ServeContent(w, r, "", changed, bytes.NewReader(doc))
	}))
	s.publish = vd.set
	s.options = "[request]\nmetadata_url = " + s.srv.URL + "/v1/AUTH_pid/ooo/node-0?temp_url_sig=0123abcd&temp_url_expires=2000000000\n"
	return s
}

// ec2Stand is a metadata service's tree.
func ec2Stand() *stand {
	s := &stand{name: "ec2", collector: "ec2", key: "ec2", once: true}
	var vd versioned
	s.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _, _ := vd.get()
		body, ok := ec2Tree(v)[strings.TrimPrefix(r.URL.Path, "/latest/meta-data")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		fmt.Fprint(w, body)
	}))
	s.publish = vd.set
	s.options = "[ec2]\nmetadata_url = " + s.srv.URL + "/latest/meta-data\n"
	return s
}

// ec2Tree is version v of the tree, by path under the metadata root.
func ec2Tree(v int) map[string]string {
	return map[string]string{
		"/":                            "ami-id\nchaos_version\nhostname\nplacement/\npublic-keys/\n",
		"/ami-id":                      "ami-00000001",
		"/chaos_version":               fmt.Sprint(v),
		"/hostname":                    "overcloud-controller-0.localdomain",
		"/placement/":                  "availability-zone",
		"/placement/availability-zone": "nova",
		"/public-keys/":                "0=heat_key",
		"/public-keys/0/":              "openssh-key",
		"/public-keys/0/openssh-key":   "ssh-rsa AAAAB3NzaC1yc2E chaos",
	}
}

// ec2JSON is what the cache must hold of version v's tree.
func ec2JSON(v int) string {
	return fmt.Sprintf(`{"ami-id": "ami-00000001", "chaos_version": "%d", "hostname": "overcloud-controller-0.localdomain", `+
		`"placement": {"availability-zone": "nova"}, "public-keys": {"0": {"openssh-key": "ssh-rsa AAAAB3NzaC1yc2E chaos"}}}`, v)
}

// cfnStand is heat-api-cfn: DescribeStackResource, signature checked.
func cfnStand() *stand {
	s := &stand{name: "cfn", collector: "cfn", key: "cfn"}
	var vd versioned
	s.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var params [][2]string
		for k := range q {
			if k != "Signature" {
				params = append(params, [2]string{k, q.Get(k)})
			}
		}
		if q.Get("Signature") != cfn.SignV2(secretKey, r.Method, r.Host, r.URL.Path, params) {
			http.Error(w, "<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code></Error></ErrorResponse>", http.StatusForbidden)
			return
		}
		if q.Get("Action") != "DescribeStackResource" || q.Get("LogicalResourceId") != "ChaosServer" {
			http.Error(w, "<ErrorResponse><Error><Code>ValidationError</Code></Error></ErrorResponse>", http.StatusBadRequest)
			return
		}
		_, doc, _ := vd.get()
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<DescribeStackResourceResponse><DescribeStackResourceResult><StackResourceDetail>`+
			`<LogicalResourceId>ChaosServer</LogicalResourceId><Metadata>%s</Metadata>`+
			`<ResourceStatus>CREATE_COMPLETE</ResourceStatus></StackResourceDetail></DescribeStackResourceResult></DescribeStackResourceResponse>`,
			html.EscapeString(string(doc)))
	}))
	s.publish = vd.set
	s.options = "[cfn]\nmetadata_url = " + s.srv.URL + "/v1/\nstack_name = overcloud\naccess_key_id = AKIDCHAOS\n" +
		"secret_access_key = " + secretKey + "\npath = ChaosServer.Metadata\n"
	return s
}

// heatStand is Keystone and Heat's resource metadata on one server.
func heatStand() *stand {
	s := &stand{name: "heat", collector: "heat", key: "heat", ks: keystonetest.New(password)}
	s.ks.ExpiresIn = tokenLife
	var vd versioned
	s.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/heat/") {
			s.ks.ServeHTTP(w, r)
			return
		}
		switch {
		case !s.ks.Valid(r.Header.Get("X-Auth-Token")):
			http.Error(w, `{"error": {"code": 401, "message": "The request you have made requires authentication."}}`, http.StatusUnauthorized)
		case r.URL.EscapedPath() != "/heat/v1/pid/stacks/overcloud/0123-abcd/resources/ChaosServer/metadata":
			http.Error(w, `{"error": {"code": 404}}`, http.StatusNotFound)
		default:
			_, doc, _ := vd.get()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"metadata": %s}`, doc)
		}
	}))
	s.ks.BaseURL = s.srv.URL
	s.ks.SetCatalog(map[string]string{"orchestration": s.srv.URL + "/heat/v1/pid"})
	s.publish = vd.set
	s.options = "[heat]\nauth_url = " + s.srv.URL + "/identity/v3\nuser_id = uid\npassword = " + password +
		"\nproject_id = pid\nstack_id = overcloud/0123-abcd\nresource_name = ChaosServer\n"
	return s
}

// zaqarStand is Keystone and Zaqar (zaqartest) on one server; over a
// websocket or HTTP.
func zaqarStand(websocket bool) *stand {
	s := &stand{name: "zaqar-http", collector: "zaqar", key: "zaqar", websocket: websocket}
	if websocket {
		s.name = "zaqar-ws"
	}
	cloud := zaqartest.New("node-queue", password)
	s.ks = cloud.KS
	s.ks.ExpiresIn = tokenLife
	s.serve(cloud) // the cloud's own server stays unused
	s.closeAlso = cloud.Close
	url := s.srv.URL
	s.ks.BaseURL = url
	s.ks.SetCatalog(map[string]string{"messaging": url + "/zaqar", "messaging-websocket": "ws" + strings.TrimPrefix(url, "http") + "/ws"})
	s.publish = func(v int) { cloud.Post(document(v)) }
	s.options = fmt.Sprintf("[zaqar]\nauth_url = %s/identity/v3\nuser_id = uid\npassword = %s\nproject_id = pid\nqueue_id = node-queue\nuse_websockets = %v\n",
		url, password, websocket)
	return s
}
