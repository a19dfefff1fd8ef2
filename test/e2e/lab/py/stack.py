"""Create, update, wait for or delete an e2e stack: an
OS::Heat::DeployedServer (no Nova) with a `script` OS::Heat::SoftwareDeployment
(e2e-deployment: inputs greeting and round, outputs result and round), an
`os-apply-config` OS::Heat::StructuredDeployment (e2e-structured: input
greeting) and, with --puppet, a `puppet` deployment (e2e-puppet: input
greeting, output result). The inputs are stack parameters. create and update
wait (bounded) until the server's metadata holds the deployments with the
wanted inputs and write, under $E2E_DIR/stacks/NAME/:

  server-metadata.json     the server's metadata (what an agent collects)
  os-collect-config.json   its "os-collect-config" section
  os-collect-config.conf   the same as an oslo.config file (Python agent)
  stack.json               name, id, transports, inputs, and when the
                           create/update call returned (requested_at) and
                           the metadata was there (metadata_at), epoch s

usage: stack.py create NAME [--transport T] [--signal S] [--structured-signal S]
                            [--puppet] [--greeting G] [--round R] [--replace]
       stack.py update NAME [--greeting G] [--round R]
       stack.py wait NAME [--timeout S]   (prints the outcome as JSON)
       stack.py delete NAME
--signal is the script and puppet deployments' signal transport,
--structured-signal the os-apply-config deployment's; while both are
NO_SIGNAL, create and update also wait for *_COMPLETE. wait polls every
0.5 s until the stack is no longer IN_PROGRESS and prints status, reason,
outputs, each deployment resource's status and output values, and seen_at.
The script exits 3 when the greeting is "fail".
Run by ../stack, which sets the environment (lib.sh).
"""
import argparse
import json
import os
import sys
import time
import uuid

import requests

import overcloud
from heatclient import client as heat_client
from heatclient import exc as heat_exc
from keystoneauth1 import session
from keystoneauth1.identity import v3

SCRIPT = r"""#!/bin/sh
# e2e script deployment: two outputs; exits 3 when greeting is "fail"; counts
# its runs on the node (the agent's own filesystem)
mkdir -p /var/lib/e2e-node
echo "$deploy_action $greeting $round" >> /var/lib/e2e-node/script.runs
echo "deploy_action=$deploy_action greeting=$greeting round=$round"
if [ "$greeting" = fail ]; then
  echo "e2e: failing on purpose (greeting=fail), exit 3" >&2
  exit 3
fi
printf '%s from the agent' "$greeting" > "$heat_outputs_path.result"
printf 'round %s' "$round" > "$heat_outputs_path.round"
"""

PUPPET = r"""# e2e puppet deployment: the input as a fact, one output, a run counter
notify { "hi ${::greeting}": }
file { "${::heat_outputs_path}.result":
  ensure  => file,
  content => "puppet says hi ${::greeting}",
}
exec { 'e2e-count-puppet-run':
  command => '/bin/sh -c "mkdir -p /var/lib/e2e-node && echo run >> /var/lib/e2e-node/puppet.runs"',
}
"""


def template(puppet, with_overcloud=False):
    """The stack: a DeployedServer, the script deployment e2e-deployment
    (inputs greeting and round, outputs result and round), the
    os-apply-config deployment e2e-structured (input greeting) and, with
    puppet, the puppet deployment e2e-puppet (input greeting, output
    result)."""
    t = {
        'heat_template_version': '2018-08-31',
        'description': 'tripleo-agent e2e: DeployedServer + deployments',
        'parameters': {
            'transport': {'type': 'string', 'default': 'POLL_SERVER_HEAT'},
            'signal_transport': {'type': 'string', 'default': 'NO_SIGNAL'},
            'structured_signal_transport': {'type': 'string',
                                            'default': 'NO_SIGNAL'},
            'greeting': {'type': 'string', 'default': 'hello'},
            'round': {'type': 'string', 'default': '1'},
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
                    'inputs': [{'name': 'greeting'}, {'name': 'round'}],
                    'outputs': [{'name': 'result'}, {'name': 'round'}],
                    'config': SCRIPT,
                },
            },
            # group os-apply-config: os-collect-config "explodes" such a
            # deployment into a cache key of its own (named after it)
            # holding its config, here {"e2e": {"greeting": ...}};
            # 99-refresh-completed signals it (NO_SIGNAL by default).
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
                    'signal_transport': {
                        'get_param': 'structured_signal_transport'},
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
                    'input_values': {'greeting': {'get_param': 'greeting'},
                                     'round': {'get_param': 'round'}},
                },
            },
        },
        'outputs': {
            'result': {'value': {'get_attr': ['deployment', 'result']}},
            'round': {'value': {'get_attr': ['deployment', 'round']}},
        },
    }
    if puppet:
        t['resources']['puppet_config'] = {
            'type': 'OS::Heat::SoftwareConfig',
            'properties': {
                'group': 'puppet',
                'inputs': [{'name': 'greeting'}],
                'outputs': [{'name': 'result'}],
                'config': PUPPET,
            },
        }
        t['resources']['puppet_deployment'] = {
            'type': 'OS::Heat::SoftwareDeployment',
            'properties': {
                'name': 'e2e-puppet',
                'config': {'get_resource': 'puppet_config'},
                'server': {'get_resource': 'server'},
                'signal_transport': {'get_param': 'signal_transport'},
                'input_values': {'greeting': {'get_param': 'greeting'}},
            },
        }
        t['outputs']['puppet_result'] = {
            'value': {'get_attr': ['puppet_deployment', 'result']}}
    if with_overcloud:
        overcloud.add(t)
    return t


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


def until(desc, fn, wait=WAIT, every=1):
    """Call fn every `every` seconds until it returns something true;
    bounded."""
    t0 = time.time()
    while True:
        v = fn()
        if v:
            return v
        if time.time() - t0 > wait:
            sys.exit('e2e-stack: %s: not after %d s' % (desc, wait))
        time.sleep(every)


def find(hc, name):
    try:
        return hc.stacks.get(name)
    except heat_exc.HTTPNotFound:
        return None


def inputs_ok(md, want):
    """Whether every deployment named in want is in the metadata with
    those input values, and no other deployment is."""
    seen = {}
    for d in md.get('deployments') or []:
        seen[d.get('name')] = {i.get('name'): i.get('value')
                               for i in d.get('inputs') or []}
    return set(seen) == set(want) and all(
        seen[d].get(k) == v for d, kv in want.items() for k, v in kv.items())


def wanted(params, puppet, with_overcloud=False):
    """The deployments' inputs that the stack parameters give."""
    want = {'e2e-deployment': {'greeting': params['greeting'],
                               'round': params['round']},
            'e2e-structured': {'greeting': params['greeting']}}
    if puppet:
        want['e2e-puppet'] = {'greeting': params['greeting']}
    if with_overcloud:
        want.update(overcloud.wanted(params))
    return want


def metadata_with(hc, stack_id, want, queue=True):
    def probe():
        md = hc.resources.metadata(stack_id, 'server')
        return md if inputs_ok(md, want) else None
    md = until('server metadata with inputs %r' % want, probe)
    # POLL_TEMP_URL: the agent reads a Swift object that heat-engine
    # rewrites after the database; wait until it says the same.
    url = (md.get('os-collect-config') or {}).get('request', {}).get('metadata_url')
    if url:
        def object_ok():
            r = requests.get(url, timeout=30)
            return r.status_code == 200 and inputs_ok(r.json(), want)
        until('temp URL object with inputs %r' % want, object_ok)
    # ZAQAR_MESSAGE: heat-engine posts each change to the server's queue
    # after the database too; wait until the newest message (the one the
    # agent takes) says the same (listed, not claimed: the agent pops them).
    # Not when an agent is already running: it deletes what it pops.
    zq = (md.get('os-collect-config') or {}).get('zaqar')
    if zq and queue:
        zs = session.Session(auth=v3.Password(
            auth_url=zq['auth_url'], user_id=zq['user_id'],
            password=zq['password'], project_id=zq['project_id']))
        base = zs.get_endpoint(service_type='messaging', interface='public')
        client = str(uuid.uuid4())

        def newest():
            # The newest by age: the Swift message store lists messages in
            # the order of their ids, which is not the order of posting.
            path, best = '/v2/queues/%s/messages' % zq['queue_id'], None
            for _ in range(50):  # pages of 20
                r = zs.get(base.rstrip('/') + path, raise_exc=False,
                           headers={'Client-ID': client},
                           params=None if '?' in path else {
                               'echo': 'true', 'include_claimed': 'true',
                               'limit': 20})
                if r.status_code != 200:
                    break
                body = r.json()
                msgs = body.get('messages') or []
                for m in msgs:
                    if best is None or m.get('age', 0) <= best.get('age', 0):
                        best = m
                nxt = [ln['href'] for ln in body.get('links') or []
                       if ln.get('rel') == 'next']
                if not msgs or not nxt:
                    break
                path = nxt[0]
            return best and best.get('body')

        def queue_ok():
            m = newest()
            return isinstance(m, dict) and inputs_ok(m, want)
        try:
            until('zaqar message with inputs %r' % want, queue_ok, wait=30)
        except SystemExit:
            # Two deployments landing at once can have their posts cross:
            # seen here, a newest message holding one of the two, and no
            # later post to mend it. Post what the database says, as
            # heat-engine does on the server's next change.
            log('zaqar queue %s: the newest message is stale; posting the '
                'metadata again' % zq['queue_id'])
            zs.post(base.rstrip('/') + '/v2/queues/%s/messages'
                    % zq['queue_id'], headers={'Client-ID': client},
                    json={'messages': [{'body': md, 'ttl': 3600}]})
            until('zaqar message with inputs %r' % want, queue_ok)
    return md


def settle(hc, stack_id, wait=WAIT, every=1):
    """Wait while the stack is IN_PROGRESS; return it."""
    def done():
        st = hc.stacks.get(stack_id)
        return st if not st.stack_status.endswith('IN_PROGRESS') else None
    return until('stack not IN_PROGRESS', done, wait, every)


DEPLOYMENT_TYPES = ('OS::Heat::SoftwareDeployment',
                    'OS::Heat::StructuredDeployment')


def outcome(hc, st):
    """What an agent's work left in Heat: status, outputs and, per
    deployment resource, status and output values: the signal's data,
    deploy_stdout, deploy_stderr, deploy_status_code and the declared
    outputs, which the deployment's attributes resolve to (resource show's
    with_attr gives null for them: heat 19 resolves them another way)."""
    out = {'status': st.stack_status, 'reason': st.stack_status_reason,
           'outputs': {o['output_key']: o.get('output_value')
                       for o in getattr(st, 'outputs', None) or []},
           'resources': {}}
    for r in hc.resources.list(st.id):
        if r.resource_type not in DEPLOYMENT_TYPES:
            continue
        full = hc.resources.get(st.id, r.resource_name)
        attrs = getattr(full, 'attributes', None) or {}
        out['resources'][r.resource_name] = {
            'status': full.resource_status,
            'reason': full.resource_status_reason,
            'output_values': attrs.get('output_values') or {}}
    if 'overcloud_deployment' in out['resources']:
        out['completed_at'] = overcloud.completed_at(hc, st.id)
    return out


def private(path):
    """A file only its owner reads: these hold the server's credentials."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 'w')


def write(out, md, info):
    os.makedirs(out, exist_ok=True)
    occ = md['os-collect-config']

    def dump(name, obj):
        tmp = os.path.join(out, name + '.tmp')
        if os.path.exists(tmp):
            os.unlink(tmp)
        with private(tmp) as f:
            json.dump(obj, f, indent=2, sort_keys=True)
        os.rename(tmp, os.path.join(out, name))
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
    conf = os.path.join(out, 'os-collect-config.conf')
    if os.path.exists(conf):
        os.unlink(conf)  # an older one may be 0644
    with private(conf) as f:
        f.write('\n'.join(lines) + '\n')


def main():
    p = argparse.ArgumentParser()
    p.add_argument('action', choices=('create', 'update', 'delete', 'wait'))
    p.add_argument('name')
    p.add_argument('--transport', default='POLL_SERVER_HEAT')
    p.add_argument('--signal', default='NO_SIGNAL')
    p.add_argument('--structured-signal', default='NO_SIGNAL')
    p.add_argument('--puppet', action='store_true')
    p.add_argument('--overcloud', action='store_true',
                   help='add a deployment of each further hook group and '
                        'the configure.d elements\' metadata (overcloud.py)')
    p.add_argument('--greeting')
    p.add_argument('--round')
    p.add_argument('--replace', action='store_true')
    p.add_argument('--agent-running', action='store_true',
                   help='an agent already pops the Zaqar queue: do not wait '
                        'for its newest message')
    p.add_argument('--timeout', type=int, default=WAIT)
    a = p.parse_args()
    hc = heat()
    out = os.path.join(os.environ['E2E_DIR'], 'stacks', a.name)
    t0 = time.time()
    st = find(hc, a.name)

    if a.action == 'wait':
        if st is None:
            sys.exit('e2e-stack: no stack %s' % a.name)
        done = settle(hc, st.id, a.timeout, 0.5)
        res = outcome(hc, done)
        res['seen_at'] = time.time()
        print(json.dumps(res))
        return

    if a.action == 'delete' or (a.action == 'create' and st and a.replace):
        if st:
            hc.stacks.delete(st.id)
            # gone by name (DELETE_COMPLETE comes before the name is free)
            until('stack %s deleted' % a.name, lambda: find(hc, a.name) is None)
            log('deleted %s' % a.name)
        if a.action == 'delete':
            return
        st = None

    given = {k: v for k, v in (('greeting', a.greeting), ('round', a.round))
             if v is not None}
    if a.action == 'create':
        params = {'transport': a.transport, 'signal_transport': a.signal,
                  'structured_signal_transport': a.structured_signal,
                  'greeting': 'hello', 'round': '1'}
        params.update(given)
        puppet, oc = a.puppet, a.overcloud
        if st is None:
            r = hc.stacks.create(stack_name=a.name, template=template(puppet, oc),
                                 timeout_mins=20, parameters=params)
            sid = r['stack']['id']
        else:
            sid = st.id
            have = st.parameters
            if any(have.get(k) != params[k] for k in (
                    'transport', 'signal_transport', 'structured_signal_transport')):
                sys.exit('e2e-stack: %s exists with other transports; use --replace' % a.name)
            res = hc.stacks.template(sid)['resources']
            puppet, oc = 'puppet_deployment' in res, 'overcloud_deployment' in res
    else:  # update
        if st is None:
            sys.exit('e2e-stack: no stack %s' % a.name)
        sid = st.id
        if st.stack_status.endswith('IN_PROGRESS'):
            sys.exit('e2e-stack: %s is %s' % (a.name, st.stack_status))
        hc.stacks.update(sid, existing=True, parameters=given)
        params = dict(st.parameters)
        params.update(given)
        res = hc.stacks.template(sid)['resources']
        puppet, oc = 'puppet_deployment' in res, 'overcloud_deployment' in res
    # requested: when the create or update call returned
    info = {'name': a.name, 'id': sid, 'requested_at': time.time(),
            'transport': params['transport'],
            'signal': params['signal_transport'],
            'structured_signal': params['structured_signal_transport'],
            'greeting': params['greeting'], 'round': params['round'],
            'puppet': puppet, 'overcloud': oc}
    md = metadata_with(hc, sid, wanted(params, puppet, oc),
                       queue=not a.agent_running)
    info['metadata_at'] = time.time()
    if info['signal'] == info['structured_signal'] == 'NO_SIGNAL':
        st = settle(hc, sid)
        if not st.stack_status.endswith('_COMPLETE'):
            sys.exit('e2e-stack: stack is %s' % st.stack_status)
    write(out, md, info)
    log('%s %s (%s, %s, %s) in %.1fs: %s' % (
        a.action, a.name, info['transport'], info['signal'], given,
        time.time() - t0, out))
    print(out)


if __name__ == '__main__':
    main()
