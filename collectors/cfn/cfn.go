// Package cfn is the "cfn" collector: a server's metadata from Heat's
// CloudFormation-compatible API (heat-api-cfn), Heat's POLL_SERVER_CFN
// transport. Each configured path "Resource.Field[.sub.keys]" is one
// DescribeStackResource request signed with EC2 signature version 2
// (HmacSHA256); the field's JSON text is read from the XML answer,
// optionally descended into, and the paths' objects are merged.
package cfn

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/collectors/merger"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/secret"
)

// Name is the collector's name.
const Name = "cfn"

// Config is the [cfn] group.
type Config struct {
	MetadataURL string
	// HintFile holds the server's base URL when MetadataURL is unset.
	HintFile        string
	StackName       string
	AccessKeyID     string
	SecretAccessKey secret.String
	Paths           []string
	DeploymentKeys  []string
	CACertificate   string
	Timeout         float64
}

// NewConfig is an empty configuration, for the registry.
func NewConfig() collectors.Config { return new(Config) }

// Options are [cfn]'s.
func (c *Config) Options() []config.Option {
	return config.InGroup(Name,
		config.Option{Name: "metadata-url", Help: "The CloudFormation-compatible metadata API's URL (heat-api-cfn); when unset, read from the heat-metadata-hint file.", Into: &c.MetadataURL},
		config.Option{Name: "heat-metadata-hint", Default: []string{"/var/lib/heat-cfntools/cfn-metadata-server"}, Help: "A file holding the metadata API's URL, read when metadata-url is not set.", Into: &c.HintFile},
		config.Option{Name: "ca_certificate", Help: "A CA certificate file to verify the metadata API's TLS certificate with.", Into: &c.CACertificate},
		config.Option{Name: "stack-name", Help: "The stack whose resource metadata is asked for.", Into: &c.StackName},
		config.Option{Name: "path", Help: "What to collect, as RESOURCE.Metadata: the stack's resource whose metadata is fetched.", Into: &c.Paths},
		config.Option{Name: "secret-access-key", Help: "The EC2-style secret key that signs the requests (never logged).", Into: &c.SecretAccessKey},
		config.Option{Name: "access-key-id", Help: "The EC2-style access key id that signs the requests.", Into: &c.AccessKeyID},
		config.Option{Name: "deployment-key", Default: []string{"deployments"}, Help: "Deprecated, and ignored: use deployment-key in [DEFAULT].", Into: &c.DeploymentKeys},
		config.Option{Name: "timeout", Default: []string{"10"}, Help: "Seconds to wait for a connection and for each read from the server.", Into: &c.Timeout})
}

// New builds the collector.
func (c *Config) New(globals collectors.Globals, log *slog.Logger) (collectors.Collector, error) {
	o := globals.HTTP(collectors.Seconds(c.Timeout))
	o.CAFile = c.CACertificate
	client, err := httpclient.New(o)
	if err != nil {
		return nil, fmt.Errorf("[cfn] ca_certificate: %w", err)
	}
	return &Collector{Config: *c, Client: client, Log: log}, nil
}

// Collector asks heat-api-cfn for each path.
type Collector struct {
	Config Config
	Client *httpclient.Client
	Log    *slog.Logger
}

// notConfigured logs why at info level, as the reference does.
func (c *Collector) notConfigured(why string) ([]collectors.Entry, error) {
	c.Log.Info(why)
	return nil, collectors.ErrNotConfigured
}

func unavailable(format string, args ...any) error {
	return collectors.Unavailable(fmt.Errorf(format, args...))
}

// Collect fetches every path and merges them.
func (c *Collector) Collect(ctx context.Context) ([]collectors.Entry, error) {
	cfg := c.Config
	// Empty counts as unset: Heat nulls a dropped transport's values,
	// and os-apply-config renders null as empty.
	if cfg.MetadataURL == "" {
		hint, err := os.ReadFile(cfg.HintFile)
		if cfg.HintFile == "" || err != nil {
			return c.notConfigured("No metadata_url configured.")
		}
		cfg.MetadataURL = strings.TrimSpace(string(hint)) + "/v1/"
	}
	if cfg.AccessKeyID == "" {
		return c.notConfigured("No Access Key ID configured.")
	}
	if cfg.SecretAccessKey == "" {
		return c.notConfigured("No Secret Access Key configured.")
	}
	if len(cfg.Paths) == 0 {
		return c.notConfigured("No path configured")
	}
	base, err := url.Parse(cfg.MetadataURL)
	if err != nil || base.Host == "" {
		return nil, unavailable("Invalid metadata_url %s", secret.RedactURL(cfg.MetadataURL))
	}
	merged := jsondoc.NewObject(0)
	for _, path := range cfg.Paths {
		resource, field, ok := strings.Cut(path, ".")
		if !ok {
			c.Log.Error(fmt.Sprintf("Path not in format resource.field[.x.y] (%s)", path))
			return nil, collectors.ErrNotConfigured
		}
		field, subPath, _ := strings.Cut(field, ".")
		value, err := c.describe(ctx, base, resource, field, path)
		if err != nil {
			return nil, err
		}
		if subPath != "" {
			for _, k := range strings.Split(subPath, ".") {
				obj, ok := value.(*jsondoc.Object)
				var v jsondoc.Value
				if ok {
					v, ok = obj.Get(k)
				}
				if !ok {
					return nil, unavailable("Sub-key %s does not exist. (%s)", k, path)
				}
				value = v
			}
		}
		obj, ok := value.(*jsondoc.Object)
		if !ok {
			return nil, unavailable("Path %s is not a JSON object.", path)
		}
		for _, k := range obj.Keys() {
			v, _ := obj.Get(k)
			merged.Set(k, v)
		}
	}
	return merger.Explode(Name, merged, cfg.DeploymentKeys, c.Log), nil
}

// describeResponse is heat-api-cfn's answer, without namespace.
type describeResponse struct {
	Detail *struct {
		Fields []struct {
			XMLName xml.Name
			Text    string `xml:",chardata"`
		} `xml:",any"`
	} `xml:"DescribeStackResourceResult>StackResourceDetail"`
}

// describe makes one signed DescribeStackResource request and returns the
// field's JSON.
func (c *Collector) describe(ctx context.Context, base *url.URL, resource, field, path string) (jsondoc.Value, error) {
	params := [][2]string{
		{"Action", "DescribeStackResource"},
		{"StackName", c.Config.StackName},
		{"LogicalResourceId", resource},
		{"AWSAccessKeyId", c.Config.AccessKeyID},
		{"SignatureVersion", "2"},
		{"SignatureMethod", "HmacSHA256"},
	}
	if c.Config.StackName == "" {
		// Neither signed nor sent (the reference signed "None" and sent
		// nothing, a signature no server accepts).
		params = append(params[:1], params[2:]...)
	}
	sig := SignV2(c.Config.SecretAccessKey.Reveal(), http.MethodGet, base.Host, base.Path, params)
	params = append(params, [2]string{"Signature", sig})
	u := *base
	q := make([]string, 0, len(params))
	for _, p := range params {
		q = append(q, url.QueryEscape(p[0])+"="+url.QueryEscape(p[1]))
	}
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += strings.Join(q, "&")
	resp, err := c.Client.Get(ctx, u.String(), http.Header{"Content-Type": {"application/json"}})
	if err != nil {
		return nil, collectors.Unavailable(err)
	}
	if resp.Status >= 400 {
		return nil, unavailable("%d %s for url: %s", resp.Status, http.StatusText(resp.Status), secret.RedactURL(u.String()))
	}
	var doc describeResponse
	if err := xml.Unmarshal(resp.Body, &doc); err != nil {
		return nil, unavailable("The answer for %s is not XML. (%w)", path, err)
	}
	if doc.Detail == nil {
		return nil, unavailable("The answer for %s has no DescribeStackResourceResult/StackResourceDetail.", path)
	}
	for _, f := range doc.Detail.Fields {
		if f.XMLName.Local != field {
			continue
		}
		v, err := jsondoc.LoadsBytes([]byte(f.Text))
		if err != nil {
			return nil, unavailable("Path %s failed to parse as json. (%w)", path, err)
		}
		return v, nil
	}
	return nil, unavailable("Path %s does not exist.", path)
}

// SignV2 is an EC2 signature version 2 with HmacSHA256 over
// "VERB\nhost\npath\ncanonical query": parameters sorted by name, names
// and values percent-encoded except RFC 3986's unreserved characters.
// A fresh HMAC per request (the reference reused one, so every path
// after the first was signed wrongly).
func SignV2(secret, verb, host, path string, params [][2]string) string {
	sorted := append([][2]string(nil), params...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i][0] < sorted[j][0] })
	pairs := make([]string, len(sorted))
	for i, p := range sorted {
		pairs[i] = escape(p[0]) + "=" + escape(p[1])
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%s\n%s\n%s\n%s", verb, host, path, strings.Join(pairs, "&"))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// escape percent-encodes all but A-Z a-z 0-9 - _ . ~ (upper-case hex).
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || strings.IndexByte("-_.~", ch) >= 0 {
			b.WriteByte(ch)
		} else {
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}
