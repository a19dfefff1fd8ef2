# The team's Heat lab helper (heatlab_ec2token.py), the lab's original code,
# no OpenStack code in it; changed: this header, GROUP's name.
"""heat-lab shim: make heat-api-cfn's ec2token middleware authenticate itself.

Debian bookworm's keystone (2:22.0.2-0+deb12u1 and later, Launchpad bug
2119646) requires the caller of POST /v3/ec2tokens to hold a token with the
admin or service role. heat 1:19.0.0-3's heat.api.aws.ec2token posts there
anonymously, so every CFN request (POLL_SERVER_CFN metadata polling and
CFN_SIGNAL pre-signed URLs) fails with 401 "auth_context did not decode
anything useful". This paste filter wraps heat's middleware and adds the heat
service user's token (section [heatlab_ec2tokens_auth] of heat.conf, a normal
keystoneauth section) to that one request. Heat and keystone stay unmodified.
"""
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from oslo_config import cfg
import requests as _requests

from heat.api.aws import ec2token

GROUP = 'e2e_ec2tokens_auth'


class _ServiceTokenRequests(object):
    def __init__(self):
        self._session = None

    def _token(self):
        if self._session is None:
            ks_loading.register_auth_conf_options(cfg.CONF, GROUP)
            auth = ks_loading.load_auth_from_conf_options(cfg.CONF, GROUP)
            self._session = ks_session.Session(auth=auth)
        return self._session.get_token()

    def post(self, url, **kwargs):
        if url.rstrip('/').endswith('/ec2tokens'):
            headers = dict(kwargs.pop('headers', None) or {})
            headers['X-Auth-Token'] = self._token()
            kwargs['headers'] = headers
        return _requests.post(url, **kwargs)

    def __getattr__(self, name):
        return getattr(_requests, name)


ec2token.requests = _ServiceTokenRequests()
EC2Token_filter_factory = ec2token.EC2Token_filter_factory
