"""The --overcloud part of an e2e stack: one deployment per hook group that
an overcloud node runs beyond script and puppet (docker-cmd,
docker-compose, kubelet, salt, chef, cfn-init), and an os-apply-config
deployment (e2e-overcloud) carrying what TripleO's configure.d elements
read: sysctl settings, hiera datafiles, /etc/hosts entries, os-net-config's
network and the default gateway device. The deployments are named
e2e-<group>; each signals through the stack's signal transport. Used by
stack.py."""

# What lands on the node (checked by image_overcloud_test.go).
CFN_INIT_FILE = '/var/lib/e2e-node/cfn-init.txt'

OVERCLOUD_METADATA = {
    'sysctl': {'net.ipv4.ip_forward': '1', 'vm.swappiness': '10'},
    'hiera': {'datafiles': {
        'e2e-overcloud': {
            'raw_data': 'e2e::raw: from raw_data',
            'mapped_data': {'e2e::mapped': 'from mapped_data',
                            'e2e::list': ['a', 'b'],
                            'e2e::number': 3},
            'oac_data': {'e2e::oac': 'e2e_oac.value'},
        },
    }},
    'e2e_oac': {'value': 'from oac_data'},
    'hosts': '192.0.2.10 e2e-ctl-0.example.com e2e-ctl-0\\n'
             '192.0.2.11 E2E-Cmp-0.example.com e2e-cmp-0',
    'os_net_config': {'network_config': [
        {'type': 'interface', 'name': 'e2e0', 'use_dhcp': False,
         'addresses': [{'ip_netmask': '192.0.2.20/24'}]}]},
    'network-config': {'gateway-dev': 'e2e0'},
}

SALT_STATE = """e2e salt state:
  test.succeed_with_changes:
    - name: e2e {{ opts['greeting'] }}
"""

GROUP_CONFIGS = {
    'docker-cmd': {'e2e_web': {'image': 'localhost/e2e-busybox',
                               'net': 'host', 'detach': False,
                               'command': ['/bin/echo', 'hi']}},
    'docker-compose': {'e2e_web': {'image': 'localhost/e2e-busybox',
                                   'command': 'sleep 1'}},
    'kubelet': {'apiVersion': 'v1', 'kind': 'Pod',
                'metadata': {'name': 'e2e-pod'},
                'spec': {'containers': []}},
    'salt': SALT_STATE,
    'chef': '{"run_list": ["recipe[e2e]"]}',
    'cfn-init': {'config': {'files': {CFN_INIT_FILE: {
        'content': 'written by cfn-init\n', 'mode': '000644',
        'owner': 'root', 'group': 'root'}}}},
}

GROUPS = tuple(GROUP_CONFIGS)


def resource(group):
    return group.replace('-', '_')


def add(t):
    """Adds the overcloud resources to template t."""
    r = t['resources']
    r['overcloud_config'] = {
        'type': 'OS::Heat::StructuredConfig',
        'properties': {'group': 'os-apply-config',
                       'config': OVERCLOUD_METADATA},
    }
    r['overcloud_deployment'] = {
        'type': 'OS::Heat::StructuredDeployment',
        'properties': {
            'name': 'e2e-overcloud',
            'config': {'get_resource': 'overcloud_config'},
            'server': {'get_resource': 'server'},
            'signal_transport': {'get_param': 'structured_signal_transport'},
        },
    }
    for g, config in GROUP_CONFIGS.items():
        structured = isinstance(config, dict)
        r[resource(g) + '_config'] = {
            'type': ('OS::Heat::StructuredConfig' if structured
                     else 'OS::Heat::SoftwareConfig'),
            'properties': {'group': g, 'config': config,
                           **({} if structured else
                              {'inputs': [{'name': 'greeting'}]})},
        }
        props = {
            'name': 'e2e-' + g,
            'config': {'get_resource': resource(g) + '_config'},
            'server': {'get_resource': 'server'},
            'signal_transport': {'get_param': 'signal_transport'},
        }
        if not structured:
            props['input_values'] = {'greeting': {'get_param': 'greeting'}}
        r[resource(g) + '_deployment'] = {
            'type': ('OS::Heat::StructuredDeployment' if structured
                     else 'OS::Heat::SoftwareDeployment'),
            'properties': props,
        }


def wanted(params):
    """The overcloud deployments' inputs in the server's metadata."""
    want = {'e2e-overcloud': {}}
    for g, config in GROUP_CONFIGS.items():
        want['e2e-' + g] = ({} if isinstance(config, dict)
                            else {'greeting': params['greeting']})
    return want


def completed_at(hc, stack_id):
    """When each deployment resource of the stack reached *_COMPLETE or
    *_FAILED (its last such event), epoch seconds, by resource name."""
    import datetime
    out = {}
    for ev in hc.events.list(stack_id, sort_dir='asc'):
        st = getattr(ev, 'resource_status', '')
        if not (st.endswith('_COMPLETE') or st.endswith('_FAILED')):
            continue
        when = datetime.datetime.strptime(
            ev.event_time, '%Y-%m-%dT%H:%M:%SZ').replace(
                tzinfo=datetime.timezone.utc)
        out[ev.resource_name] = when.timestamp()
    return out
