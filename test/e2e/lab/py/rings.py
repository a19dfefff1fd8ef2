"""Build swift's three rings for the lab: part power 8, one replica, one
device d1 per ring (what swift-ring-builder create/add/rebalance do, in one
process). usage: rings.py DIR HOST OBJECT_PORT CONTAINER_PORT ACCOUNT_PORT"""
import sys

from swift.common.ring import RingBuilder

d, host = sys.argv[1:3]
for kind, port in zip(('object', 'container', 'account'), sys.argv[3:6]):
    b = RingBuilder(8, 1, 1)
    b.add_dev({'region': 1, 'zone': 1, 'ip': host, 'port': int(port),
               'replication_ip': host, 'replication_port': int(port),
               'device': 'd1', 'weight': 100, 'meta': ''})
    b.rebalance()
    b.get_ring().save('%s/%s.ring.gz' % (d, kind))
    b.save('%s/%s.builder' % (d, kind))
