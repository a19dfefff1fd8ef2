"""Create the lab's keystone objects (idempotent): projects service and
demo, domain heat (heat's stack user domain) with heat_domain_admin, the
service users heat, swift and zaqar (admin on service), the demo user
(member, reader, heat_stack_owner on demo), and the catalog: orchestration,
cloudformation, object-store, messaging, messaging-websocket.

Settings come from the environment (see test/e2e/lab/up)."""
import os

from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client

e = os.environ
auth = v3.Password(auth_url=e['KEYSTONE_URL'] + '/v3', username='admin',
                   password=e['ADMIN_PW'], project_name='admin',
                   user_domain_id='default', project_domain_id='default')
ks = client.Client(session=session.Session(auth=auth))


def one(mgr, name, create, **flt):
    found = [x for x in mgr.list(**flt) if x.name == name]
    return found[0] if found else create()


default = ks.domains.get('default')
heat_dom = one(ks.domains, 'heat', lambda: ks.domains.create('heat'))
roles = {r: one(ks.roles, r, lambda r=r: ks.roles.create(r))
         for r in ('admin', 'member', 'reader', 'heat_stack_owner',
                   'heat_stack_user')}
service = one(ks.projects, 'service',
              lambda: ks.projects.create('service', default), domain=default)
demo = one(ks.projects, 'demo',
           lambda: ks.projects.create('demo', default), domain=default)


def user(name, pw, dom, project=None):
    u = one(ks.users, name, lambda: ks.users.create(
        name, domain=dom, password=pw, default_project=project), domain=dom)
    ks.users.update(u, password=pw)
    return u


for name in ('heat', 'swift', 'zaqar'):
    ks.roles.grant(roles['admin'], project=service,
                   user=user(name, e['SERVICE_PW'], default, service))
ks.roles.grant(roles['admin'], domain=heat_dom,
               user=user('heat_domain_admin', e['DOMAIN_ADMIN_PW'], heat_dom))
demo_u = user('demo', e['DEMO_PW'], default, demo)
for r in ('member', 'reader', 'heat_stack_owner'):
    ks.roles.grant(roles[r], user=demo_u, project=demo)


def svc(name, stype, url):
    s = list(ks.services.list(type=stype))
    s = s[0] if s else ks.services.create(name, stype)
    have = {ep.interface: ep for ep in ks.endpoints.list(service=s)}
    for iface in ('public', 'internal', 'admin'):
        if iface not in have:
            ks.endpoints.create(s, url, interface=iface, region=e['REGION'])
        elif have[iface].url != url:
            ks.endpoints.update(have[iface], url=url)


svc('heat', 'orchestration', e['HEAT_URL'] + '/v1/%(tenant_id)s')
svc('heat-cfn', 'cloudformation', e['CFN_URL'] + '/v1')
svc('swift', 'object-store', e['SWIFT_URL'] + '/v1/AUTH_%(tenant_id)s')
svc('zaqar', 'messaging', e['ZAQAR_URL'])
svc('zaqar-websocket', 'messaging-websocket', e['ZAQAR_WS_URL'])
print('keystone objects ok')
