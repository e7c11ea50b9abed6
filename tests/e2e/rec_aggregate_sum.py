#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What an aggregated trace says per process and call site, summed from its dump, against
`memscribe report --format=json --top 0` of an exact recording of the same program
(tests/e2e/rec_aggregate.sh; docs/aggregate.md): per site the allocations and their bytes
(the kept allocations written plus the batch rows' blocks), the temporary ones (the batch
rows', and in the exact stretch before a `record --max-size` switch heaptrack's rule per
thread on the events, as a reader decides it), the leaked blocks and bytes (kept allocations never ended), and per process the peak
and each site's live bytes at it (the heap replayed: kept blocks, each transient group added
and taken away, an image's blocks out of the running heap at its exit).

usage: rec_aggregate_sum.py REPORT.json DUMP.txt
DUMP.txt: `memscribe dump --header --stacks` of the aggregated trace. Processes are matched
by image index. Prints one line per difference and exits 1 if there is any, else prints a
summary and exits 0."""
import json
import re
import sys

ALLOC_KINDS = {'malloc', 'calloc', 'realloc', 'reallocarray', 'memalign', 'posix_memalign',
               'aligned_alloc', 'valloc', 'pvalloc'}
HEAP_ENDS = ALLOC_KINDS | {'free'}
EVENT = re.compile(r'^\d+\.\d+ (\d+) (\d+) (\S+) (\S+)(.*) stack=(\d+)( ends=#(\d+))?')
FIELD = re.compile(r' (\w+)=(\S+)')
FRAME = re.compile(r'^  \[[0-9i]+\] [0-9a-f]+ (.*)$')


def frame_name(text):
    """A dump frame as report writes it: 'func (file:line)', or 'func (module)'."""
    where = None
    m = re.match(r'^(.*?) \((.*)\)$', text)
    if m:
        text, where = m.group(1), m.group(2)
    module, _, func = text.partition('!')
    if not func:  # no symbol: module+offset
        return text
    func = re.sub(r'\+0x[0-9a-f]+$', '', func)
    return '%s (%s)' % (func, where if where else module)


def read_dump(path):
    images, stacks, events = {}, {}, []
    cur = None
    for line in open(path, encoding='utf-8', errors='replace'):
        line = line.rstrip('\n')
        m = re.match(r'^# image (\d+) pid=(\d+)', line)
        if m:
            images[int(m.group(2))] = int(m.group(1))
            continue
        m = re.match(r'^stack (\d+) ', line)
        if m:
            cur = stacks.setdefault(int(m.group(1)), [])
            continue
        m = FRAME.match(line)
        if m and cur is not None:
            cur.append(frame_name(m.group(1)))
            continue
        m = EVENT.match(line)
        if m:
            events.append({'pid': int(m.group(1)), 'tid': int(m.group(2)), 'serial': m.group(3),
                           'kind': m.group(4),
                           'f': dict(FIELD.findall(m.group(5))), 'stack': int(m.group(6)),
                           'ends': int(m.group(8)) if m.group(8) else 0,
                           'end': ' end ' in m.group(5) + ' '})
    return images, stacks, events


def replay(images, stacks, events):
    """Per image: {'sites': {key: counters}, 'peak': bytes, 'peak_sites': {key: bytes}}."""
    key = {sid: tuple(fr) for sid, fr in stacks.items()}
    key[0] = ()
    out, live, heap, ended = {}, {}, {}, set()
    site_live = {}  # (image, key) -> bytes live now
    exact = events and events[0]['kind'] != 'aggregate'  # record --max-size, until the switch
    last = {}  # exact stretch: tid -> its latest heap event's block, if an allocation

    def img(pid):
        i = images[pid]
        if i not in out:
            out[i] = {'sites': {}, 'peak': 0, 'peak_sites': {}}
            heap[i] = 0
        return i

    def site(i, k):
        return out[i]['sites'].setdefault(k, {'allocations': 0, 'allocated_bytes': 0,
                                              'temporary': 0, 'leaked_blocks': 0,
                                              'leaked_bytes': 0})

    def move(i, k, d):
        heap[i] += d
        site_live[(i, k)] = site_live.get((i, k), 0) + d
        if d > 0 and heap[i] > out[i]['peak']:
            out[i]['peak'] = heap[i]
            out[i]['peak_sites'] = {kk: v for (ii, kk), v in site_live.items() if ii == i and v}

    for ev in events:
        i = img(ev['pid'])
        kind, f = ev['kind'], ev['f']
        if kind == 'aggregate':
            exact = False
        if kind in HEAP_ENDS and ev['ends'] in live:
            ei, ek, size = live.pop(ev['ends'])
            move(ei, ek, -size)
            if exact and last.get(ev['tid']) == ev['ends']:
                site(ei, ek)['temporary'] += 1
            last[ev['tid']] = 0
        if kind in ALLOC_KINDS and ev['serial'] != '-':
            last[ev['tid']] = int(ev['serial'][1:])
            k = key[ev['stack']]
            size = int(f['size'])
            live[int(ev['serial'][1:])] = (i, k, size)
            s = site(i, k)
            s['allocations'] += 1
            s['allocated_bytes'] += size
            move(i, k, size)
        elif kind == 'heap_batch':
            s = site(i, key[ev['stack']])
            s['allocations'] += int(f['blocks'])
            s['allocated_bytes'] += int(f['bytes'])
            s['temporary'] += int(f['temporary'])
        elif kind == 'heap_transient':
            move(i, key[ev['stack']], -int(f['bytes']) if ev['end'] else int(f['bytes']))
        elif kind == 'process_exit':
            ended.add(i)
    for i, k, size in live.values():
        s = site(i, k)
        s['leaked_blocks'] += 1
        s['leaked_bytes'] += size
    return out


def report_sites(proc):
    """Each site of a report process, its counters summed over sites that read the same."""
    sites = {}
    for lst in proc['top'].values():
        for s in lst:
            sites[tuple(s['stack'])] = s
    return sites


def main():
    report = json.load(open(sys.argv[1]))
    images, stacks, events = read_dump(sys.argv[2])
    got = replay(images, stacks, events)
    bad = []
    for proc in report['processes']:
        i = proc['image']
        g = got.get(i, {'sites': {}, 'peak': 0, 'peak_sites': {}})
        want = report_sites(proc)
        for k in set(want) | set(k for k, v in g['sites'].items() if any(v.values())):
            w = want.get(k, {})
            h = g['sites'].get(k, {})
            for c in ('allocations', 'allocated_bytes', 'temporary', 'leaked_blocks',
                      'leaked_bytes'):
                if w.get(c, 0) != h.get(c, 0):
                    bad.append('image %d site %s: %s exact %d, aggregated %d' %
                               (i, ' <- '.join(k[:2]), c, w.get(c, 0), h.get(c, 0)))
            if w.get('peak_bytes', 0) != g['peak_sites'].get(k, 0):
                bad.append('image %d site %s: peak_bytes exact %d, aggregated %d' %
                           (i, ' <- '.join(k[:2]), w.get('peak_bytes', 0),
                            g['peak_sites'].get(k, 0)))
        for c, v in (('peak_bytes', g['peak']),
                     ('allocations', sum(s['allocations'] for s in g['sites'].values())),
                     ('temporary', sum(s['temporary'] for s in g['sites'].values())),
                     ('leaked_blocks', sum(s['leaked_blocks'] for s in g['sites'].values()))):
            if proc[c] != v:
                bad.append('image %d: %s exact %d, aggregated %d' % (i, c, proc[c], v))
    for b in bad:
        print(b)
    if bad:
        return 1
    print('same: %s' % ', '.join('image %d: %d allocations, %d temporary, peak %d, %d leaked' %
                                 (p['image'], p['allocations'], p['temporary'], p['peak_bytes'],
                                  p['leaked_blocks']) for p in report['processes']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
