"""Create, update or delete an e2e stack: an OS::Heat::DeployedServer (no
Nova) with a `script` OS::Heat::SoftwareDeployment (e2e-deployment) and an
`os-apply-config` OS::Heat::StructuredDeployment (e2e-structured), both with
the input `greeting`, a stack parameter. Waits (bounded) until the server's metadata holds the
deployment with the wanted greeting and writes, under $E2E_DIR/stacks/NAME/:

  server-metadata.json     the server's metadata (what an agent collects)
  os-collect-config.json   its "os-collect-config" section
  os-collect-config.conf   the same as an oslo.config file (Python agent)
  stack.json               name, id, transport, signal, greeting

usage: stack.py create NAME [--transport T] [--signal S] [--greeting G] [--replace]
       stack.py update NAME --greeting G
       stack.py delete NAME
Run by ../stack, which sets the environment (lib.sh).
"""
import argparse
import json
import os
import sys
import time

import requests
from heatclient import client as heat_client
from heatclient import exc as heat_exc
from keystoneauth1 import session
from keystoneauth1.identity import v3

TEMPLATE = {
    'heat_template_version': '2018-08-31',
    'description': 'tripleo-agent e2e: DeployedServer + script deployment',
    'parameters': {
        'transport': {'type': 'string', 'default': 'POLL_SERVER_HEAT'},
        'signal_transport': {'type': 'string', 'default': 'NO_SIGNAL'},
        'greeting': {'type': 'string', 'default': 'hello'},
    },
    'resources': {
        'server': {
            'type': 'OS::Heat::DeployedServer',
            'properties': {
                'name': 'e2e-node',
                'software_config_transport': {'get_param': 'transport'},
            },
        },
        'config': {
            'type': 'OS::Heat::SoftwareConfig',
            'properties': {
                'group': 'script',
                'inputs': [{'name': 'greeting'}],
                'outputs': [{'name': 'result'}],
                'config': '#!/bin/sh\n'
                          'echo "deploy_action=$deploy_action greeting=$greeting"\n'
                          'printf \'%s from the agent\' "$greeting"'
                          ' > "$heat_outputs_path.result"\n',
            },
        },
        # group os-apply-config: os-collect-config "explodes" such a
        # deployment into a cache key of its own (named after it) holding
        # its config, here {"e2e": {"greeting": ...}}. Never signalled.
        'structured_config': {
            'type': 'OS::Heat::StructuredConfig',
            'properties': {
                'group': 'os-apply-config',
                'config': {'e2e': {'greeting': {'get_input': 'greeting'}}},
            },
        },
        'structured_deployment': {
            'type': 'OS::Heat::StructuredDeployment',
            'properties': {
                'name': 'e2e-structured',
                'config': {'get_resource': 'structured_config'},
                'server': {'get_resource': 'server'},
                'signal_transport': 'NO_SIGNAL',
                'input_values': {'greeting': {'get_param': 'greeting'}},
            },
        },
        'deployment': {
            'type': 'OS::Heat::SoftwareDeployment',
            'properties': {
                'name': 'e2e-deployment',
                'config': {'get_resource': 'config'},
                'server': {'get_resource': 'server'},
                'signal_transport': {'get_param': 'signal_transport'},
                'input_values': {'greeting': {'get_param': 'greeting'}},
            },
        },
    },
    'outputs': {
        'result': {'value': {'get_attr': ['deployment', 'result']}},
    },
}

WAIT = int(os.environ.get('E2E_STACK_WAIT', '300'))


def log(msg):
    sys.stderr.write('[e2e-stack %s] %s\n' % (time.strftime('%H:%M:%S'), msg))


def heat():
    e = os.environ
    auth = v3.Password(auth_url=e['KEYSTONE_URL'] + '/v3', username='demo',
                       password=e['DEMO_PW'], project_name='demo',
                       user_domain_id='default', project_domain_id='default')
    sess = session.Session(auth=auth, timeout=60)
    return heat_client.Client('1', session=sess, region_name=e['E2E_REGION'])


def until(desc, fn, wait=WAIT):
    """Call fn every second until it returns something true; bounded."""
    t0 = time.time()
    while True:
        v = fn()
        if v:
            return v
        if time.time() - t0 > wait:
            sys.exit('e2e-stack: %s: not after %d s' % (desc, wait))
        time.sleep(1)


def find(hc, name):
    try:
        return hc.stacks.get(name)
    except heat_exc.HTTPNotFound:
        return None


def greeting_of(md):
    """The greeting if both deployments are there and agree, else None."""
    seen = {}
    for d in md.get('deployments') or []:
        for i in d.get('inputs') or []:
            if i.get('name') == 'greeting':
                seen[d.get('name')] = i.get('value')
    values = set(seen.values())
    if set(seen) == {'e2e-deployment', 'e2e-structured'} and len(values) == 1:
        return values.pop()
    return None


def metadata_with(hc, stack_id, greeting):
    def probe():
        md = hc.resources.metadata(stack_id, 'server')
        return md if greeting_of(md) == greeting else None
    md = until('server metadata with greeting %r' % greeting, probe)
    # POLL_TEMP_URL: the agent reads a Swift object that heat-engine
    # rewrites after the database; wait until it says the same.
    url = (md.get('os-collect-config') or {}).get('request', {}).get('metadata_url')
    if url:
        def object_ok():
            r = requests.get(url, timeout=30)
            return r.status_code == 200 and greeting_of(r.json()) == greeting
        until('temp URL object with greeting %r' % greeting, object_ok)
    return md


def settle(hc, stack_id):
    """Wait while the stack is IN_PROGRESS (only with NO_SIGNAL: other
    signal transports stay IN_PROGRESS until an agent signals)."""
    def done():
        st = hc.stacks.get(stack_id).stack_status
        return st if not st.endswith('IN_PROGRESS') else None
    st = until('stack not IN_PROGRESS', done)
    if not st.endswith('_COMPLETE'):
        sys.exit('e2e-stack: stack is %s' % st)


def write(out, md, info):
    os.makedirs(out, exist_ok=True)
    occ = md['os-collect-config']

    def dump(name, obj):
        with open(os.path.join(out, name + '.tmp'), 'w') as f:
            json.dump(obj, f, indent=2, sort_keys=True)
        os.rename(os.path.join(out, name + '.tmp'), os.path.join(out, name))
    dump('server-metadata.json', md)
    dump('os-collect-config.json', occ)
    dump('stack.json', info)
    # oslo.config file for the Python os-collect-config: one section per
    # collector; always name the collectors (its default list includes ec2)
    names = [c for c in occ.get('collectors', []) if isinstance(occ.get(c), dict)]
    names = names or [k for k, v in occ.items() if isinstance(v, dict)]
    lines = ['[DEFAULT]', 'collectors = ' + ','.join(names)]
    for section, values in occ.items():
        if isinstance(values, dict):
            lines.append('[%s]' % section)
            # oslo.config substitutes $NAME: escape $ in generated passwords
            lines += ['%s = %s' % (k, str(v).replace('$', '$$'))
                      for k, v in values.items()]
    with open(os.path.join(out, 'os-collect-config.conf'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def main():
    p = argparse.ArgumentParser()
    p.add_argument('action', choices=('create', 'update', 'delete'))
    p.add_argument('name')
    p.add_argument('--transport', default='POLL_SERVER_HEAT')
    p.add_argument('--signal', default='NO_SIGNAL')
    p.add_argument('--greeting', default='hello')
    p.add_argument('--replace', action='store_true')
    a = p.parse_args()
    hc = heat()
    out = os.path.join(os.environ['E2E_DIR'], 'stacks', a.name)
    t0 = time.time()
    st = find(hc, a.name)

    if a.action == 'delete' or (a.action == 'create' and st and a.replace):
        if st:
            hc.stacks.delete(st.id)
            # gone by name (DELETE_COMPLETE comes before the name is free)
            until('stack %s deleted' % a.name, lambda: find(hc, a.name) is None)
            log('deleted %s' % a.name)
        if a.action == 'delete':
            return
        st = None

    if a.action == 'create':
        if st is None:
            r = hc.stacks.create(stack_name=a.name, template=TEMPLATE,
                                 timeout_mins=20, parameters={
                                     'transport': a.transport,
                                     'signal_transport': a.signal,
                                     'greeting': a.greeting})
            sid = r['stack']['id']
        else:
            sid = st.id
            params = st.parameters
            if (params.get('transport'), params.get('signal_transport')) != (a.transport, a.signal):
                sys.exit('e2e-stack: %s exists with other transports; use --replace' % a.name)
        info = {'name': a.name, 'id': sid, 'transport': a.transport,
                'signal': a.signal}
    else:  # update
        if st is None:
            sys.exit('e2e-stack: no stack %s' % a.name)
        sid = st.id
        if st.stack_status.endswith('IN_PROGRESS'):
            sys.exit('e2e-stack: %s is %s' % (a.name, st.stack_status))
        hc.stacks.update(sid, existing=True, parameters={'greeting': a.greeting})
        info = {'name': a.name, 'id': sid,
                'transport': st.parameters.get('transport'),
                'signal': st.parameters.get('signal_transport')}
    info['greeting'] = a.greeting
    md = metadata_with(hc, sid, a.greeting)
    if info['signal'] == 'NO_SIGNAL':
        settle(hc, sid)
    write(out, md, info)
    log('%s %s (%s, %s, greeting %r) in %.1fs: %s' % (
        a.action, a.name, info['transport'], info['signal'], a.greeting,
        time.time() - t0, out))
    print(out)


if __name__ == '__main__':
    main()
