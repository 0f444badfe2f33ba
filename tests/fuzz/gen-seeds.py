#!/usr/bin/env python3
# Writes the seed corpus of one fuzz target into a directory. Seeds are generated, never
# committed: from examples/skills (SKILL.md files; zips in the <name>/ layout, flat, stored and
# deflated, and as `skillctl skill package` writes them when --skillctl is given), plus hostile
# inputs built byte by byte here, the ones zip tools refuse to write. Every target also gets its
# committed regression inputs (tests/fuzz/regressions/<target>/, *.b64 decoded) and any
# hand-written seeds in tests/fuzz/seeds/<target>/, so a new target needs no code here.
#
#   gen-seeds.py [--generated-only] [--skillctl PATH] TARGET OUTDIR

import argparse
import base64
import hashlib
import io
import os
import stat
import struct
import subprocess
import sys
import tempfile
import zlib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(ROOT, 'examples', 'skills')


def example_dirs():
    return sorted(os.path.join(EXAMPLES, d) for d in os.listdir(EXAMPLES)
                  if os.path.isdir(os.path.join(EXAMPLES, d)))


def walk_files(root):
    """(relative path, absolute path, is_dir) for a tree, sorted, directories included."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        if rel != '.':
            out.append((rel, dirpath, True))
        for f in sorted(filenames):
            p = os.path.join(dirpath, f)
            out.append((os.path.relpath(p, root), p, False))
    return sorted(out)


# ---- zips the usual way (Python's zipfile) ------------------------------------------------

def zip_tree(root, prefix, method, dir_entries=True):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w', method) as z:
        if prefix and dir_entries:
            zi = zipfile.ZipInfo(prefix + '/', (1980, 1, 2, 0, 0, 0))
            zi.external_attr = (stat.S_IFDIR | 0o755) << 16 | 0x10
            z.writestr(zi, b'')
        for rel, path, is_dir in walk_files(root):
            name = (prefix + '/' if prefix else '') + rel
            if is_dir:
                if not dir_entries:
                    continue
                zi = zipfile.ZipInfo(name + '/', (1980, 1, 2, 0, 0, 0))
                zi.external_attr = (stat.S_IFDIR | 0o755) << 16 | 0x10
                z.writestr(zi, b'')
            else:
                zi = zipfile.ZipInfo(name, (1980, 1, 2, 0, 0, 0))
                zi.external_attr = (stat.S_IFREG | (os.stat(path).st_mode & 0o777)) << 16
                zi.compress_type = method
                with open(path, 'rb') as f:
                    z.writestr(zi, f.read())
    return buf.getvalue()


# ---- zips byte by byte, for what no tool writes ---------------------------------------------

class Entry:
    def __init__(self, name, data=b'', mode=None, deflate=False, **kw):
        self.name = name.encode() if isinstance(name, str) else name
        self.data = data.encode() if isinstance(data, str) else data
        self.mode = mode                    # Unix st_mode (made by Unix), or None (MS-DOS)
        self.deflate = deflate
        self.local_name = kw.get('local_name')
        self.declared_size = kw.get('declared_size')
        self.flags = kw.get('flags', 0)
        self.method = kw.get('method')
        self.local_method = kw.get('local_method')
        self.offset = kw.get('offset')      # force the local header offset (overlaps)
        self.disk = kw.get('disk', 0)
        self.extra = kw.get('extra', b'')
        self.comment = kw.get('comment', b'')


def raw_zip(entries, prefix=b'', eocd_comment=b'', zip64_locator=False, eocd_disk=0,
            extra_between=b''):
    out = bytearray(prefix)
    cd = bytearray()
    offsets = []
    for e in entries:
        if e.deflate:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            packed = c.compress(e.data) + c.flush()
        else:
            packed = e.data
        method = e.method if e.method is not None else (8 if e.deflate else 0)
        crc = zlib.crc32(e.data) & 0xffffffff
        usize = e.declared_size if e.declared_size is not None else len(e.data)
        flags = 0x800 | e.flags
        local = e.local_name if e.local_name is not None else e.name
        offset = len(out) - len(prefix) if e.offset is None else e.offset
        offsets.append(offset)
        if e.offset is None:
            out += struct.pack('<IHHHHHIIIHH', 0x04034b50, 20, flags,
                               e.local_method if e.local_method is not None else method,
                               0, 0x21, crc, len(packed), usize, len(local), len(e.extra))
            out += local + e.extra + packed
        made_by = (3 << 8 | 20) if e.mode is not None else 20
        if e.mode is not None:
            external = (e.mode & 0xffff) << 16
        else:
            external = 0x10 if e.name.endswith(b'/') else 0
        cd += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, made_by, 20, flags, method, 0, 0x21,
                          crc, len(packed), usize, len(e.name), len(e.extra), len(e.comment),
                          e.disk, 0, external, offset)
        cd += e.name + e.extra + e.comment
    cd_offset = len(out) - len(prefix)
    out += cd + extra_between
    if zip64_locator:
        out += struct.pack('<IIQI', 0x07064b50, 0, 0, 1)
    out += struct.pack('<IHHHHIIH', 0x06054b50, eocd_disk, eocd_disk, len(entries), len(entries),
                       len(cd), cd_offset, len(eocd_comment))
    out += eocd_comment
    return bytes(out)


MD = b'---\nname: evil\ndescription: A hostile skill.\n---\n\n# evil\n'
PY = b'print("hi")\n'


def skill(prefix, *more, md=MD):
    """A minimal skill under prefix/ (or flat with prefix ''), plus more entries."""
    p = prefix + '/' if prefix else ''
    base = []
    if prefix:
        base.append(Entry(p, mode=stat.S_IFDIR | 0o755))
    base += [Entry(p + 'SKILL.md', md, mode=stat.S_IFREG | 0o644, deflate=True),
             Entry(p + 'scripts/main.py', PY, mode=stat.S_IFREG | 0o755)]
    return base + list(more)


def hostile_zips():
    F = stat.S_IFREG | 0o644
    z = {}
    z['slip-dotdot'] = raw_zip(skill('evil', Entry('evil/../../escaped', 'x', mode=F)))
    z['slip-flat'] = raw_zip([Entry('../escaped', 'x', mode=F)])
    z['slip-inner'] = raw_zip(skill('evil', Entry('evil/scripts/../../../x', 'x', mode=F)))
    z['absolute'] = raw_zip([Entry('/tmp/skilld-fuzz-escaped', 'x', mode=F)])
    z['backslash'] = raw_zip([Entry('..\\..\\escaped', 'x', mode=F)])
    z['dot'] = raw_zip(skill('evil', Entry('evil/./x', 'x', mode=F)))
    z['empty-component'] = raw_zip(skill('evil', Entry('evil//x', 'x', mode=F)))
    z['symlink'] = raw_zip(skill('evil', Entry('evil/link', '/etc/passwd',
                                                mode=stat.S_IFLNK | 0o777)))
    z['symlink-then-file'] = raw_zip(skill('evil', Entry('evil/d', '/tmp', mode=stat.S_IFLNK | 0o777),
                                           Entry('evil/d/x', 'x', mode=F)))
    z['fifo'] = raw_zip(skill('evil', Entry('evil/fifo', mode=stat.S_IFIFO | 0o644)))
    z['chardev'] = raw_zip(skill('evil', Entry('evil/null', mode=stat.S_IFCHR | 0o666)))
    z['socket'] = raw_zip(skill('evil', Entry('evil/sock', mode=stat.S_IFSOCK | 0o666)))
    z['setuid'] = raw_zip(skill('evil', Entry('evil/suid', 'x', mode=stat.S_IFREG | 0o4755)))
    z['duplicate'] = raw_zip(skill('evil', Entry('evil/SKILL.md', 'again', mode=F)))
    z['dir-file-conflict'] = raw_zip(skill('evil', Entry('evil/a', 'x', mode=F),
                                           Entry('evil/a/b', 'y', mode=F)))
    z['file-dir-conflict'] = raw_zip(skill('evil', Entry('evil/a/', mode=stat.S_IFDIR | 0o755),
                                           Entry('evil/a', 'y', mode=F)))
    z['nul-name'] = raw_zip(skill('evil', Entry(b'evil/x\x00../../y', 'x', mode=F)))
    z['control-name'] = raw_zip(skill('evil', Entry('evil/\x1b[31mred\nfake: line', 'x', mode=F)))
    z['c1-name'] = raw_zip(skill('evil', Entry('evil/\u009b31mred', 'x', mode=F)))
    z['invalid-utf8'] = raw_zip(skill('evil', Entry(b'evil/\xff\xfe', 'x', mode=F)))
    z['overlong-utf8'] = raw_zip(skill('evil', Entry(b'evil/\xc0\xae\xc0\xae', 'x', mode=F)))
    z['utf8-name'] = raw_zip(skill('evil', Entry('evil/données/ünïcödé.txt', 'x', mode=F)))
    z['deep'] = raw_zip(skill('evil', Entry('evil/' + 'd/' * 9 + 'x', 'x', mode=F)))
    z['long-name'] = raw_zip(skill('evil', Entry('evil/' + 'n' * 300, 'x', mode=F)))
    z['many-entries'] = raw_zip(skill('evil', *[Entry('evil/f%03d' % i, 'x', mode=F)
                                                for i in range(70)]))
    z['implied-dirs'] = raw_zip([Entry('%02d/a/b/c/d/e/f/x' % i, 'x', mode=F) for i in range(40)])
    z['lying-size-big'] = raw_zip(skill('evil', Entry('evil/x', 'small', mode=F, declared_size=9999)))
    z['lying-size-small'] = raw_zip(skill('evil', Entry('evil/x', 'x' * 500, mode=F, deflate=True,
                                                        declared_size=3)))
    z['local-name-differs'] = raw_zip(skill('evil', Entry('evil/ok', 'x', mode=F,
                                                          local_name=b'../../bad')))
    z['local-method-differs'] = raw_zip(skill('evil', Entry('evil/x', 'x', mode=F, local_method=8)))
    first = raw_zip(skill('evil'))
    z['overlap'] = raw_zip(skill('evil', Entry('evil/alias', MD, mode=F, deflate=True, offset=0)))
    z['encrypted'] = raw_zip(skill('evil', Entry('evil/x', 'x', mode=F, flags=1)))
    z['bzip2'] = raw_zip(skill('evil', Entry('evil/x', 'BZh91AY&SY', mode=F, method=12)))
    z['lzma'] = raw_zip(skill('evil', Entry('evil/x', 'x', mode=F, method=14)))
    z['data-descriptor-flag'] = raw_zip(skill('evil', Entry('evil/x', 'x', mode=F, flags=8)))
    z['zip64-locator'] = raw_zip(skill('evil'), zip64_locator=True)
    z['zip64-extra'] = raw_zip(skill('evil', Entry('evil/x', 'x', mode=F,
                                                   extra=struct.pack('<HHQQ', 1, 16, 1, 1))))
    z['multi-disk'] = raw_zip(skill('evil'), eocd_disk=1)
    z['entry-disk'] = raw_zip(skill('evil', Entry('evil/x', 'x', mode=F, disk=1)))
    z['self-extractor-prefix'] = raw_zip(skill('evil'), prefix=b'#!/bin/sh\nexit 0\n')
    z['junk-before-eocd'] = raw_zip(skill('evil'), extra_between=b'JUNK')
    z['eocd-comment'] = raw_zip(skill('evil'), eocd_comment=b'PK\x05\x06 fake end record')
    z['dir-with-data'] = raw_zip(skill('evil', Entry('evil/d/', 'data', mode=stat.S_IFDIR | 0o755)))
    z['dos-dir'] = raw_zip(skill('evil', Entry('evil/dosdir/')))
    z['excluded-only'] = raw_zip(skill('evil', Entry('evil/node_modules/x.js', 'x', mode=F),
                                       Entry('evil/__pycache__/m.pyc', 'x', mode=F)))
    z['bomb-ratio'] = raw_zip(skill('evil', Entry('evil/zeros', b'\0' * (2 << 20), mode=F,
                                                  deflate=True)))
    z['bomb-file'] = raw_zip(skill('evil', Entry('evil/zeros', b'\0' * (300 << 10), mode=F,
                                                 deflate=True)))
    z['empty'] = raw_zip([])
    z['flat'] = raw_zip(skill(''))
    z['no-skill-md'] = raw_zip([Entry('top/', mode=stat.S_IFDIR | 0o755),
                                Entry('top/readme.txt', 'x', mode=F)])
    z['skill-md-dir'] = raw_zip([Entry('top/', mode=stat.S_IFDIR | 0o755),
                                 Entry('top/SKILL.md/', mode=stat.S_IFDIR | 0o755)])
    z['lowercase-skill-md'] = raw_zip([Entry('top/skill.md', MD, mode=F)])
    z['hostile-entry-point'] = raw_zip(skill('evil', md=MD.replace(
        b'---\n\n', b'entry_point: ../../../etc/passwd\n---\n\n')))
    z['truncated'] = first[:len(first) // 2]
    z['not-zip-gzip'] = b'\x1f\x8b\x08\x00' + b'\0' * 20
    z['not-zip-7z'] = b'7z\xbc\xaf\x27\x1c' + b'\0' * 30
    tar = bytearray(512)
    tar[0:8] = b'SKILL.md'
    tar[257:262] = b'ustar'
    z['not-zip-tar'] = bytes(tar) + bytes(512)
    return z


def gen_zip(out, skillctl):
    for d in example_dirs():
        name = os.path.basename(d)
        write(out, 'example-%s-deflate.skill' % name, zip_tree(d, name, zipfile.ZIP_DEFLATED))
        write(out, 'example-%s-stored-nodirs.skill' % name,
              zip_tree(d, name, zipfile.ZIP_STORED, dir_entries=False))
        write(out, 'example-%s-flat.zip' % name, zip_tree(d, '', zipfile.ZIP_STORED))
        if skillctl:
            with tempfile.TemporaryDirectory() as t:
                p = os.path.join(t, name + '.skill')
                subprocess.run([skillctl, 'skill', 'package', d, '-o', p], check=True,
                               stdout=subprocess.DEVNULL, env=dict(os.environ,
                                                                   SOURCE_DATE_EPOCH='315619200'))
                with open(p, 'rb') as f:
                    write(out, 'example-%s-skillctl.skill' % name, f.read())
    for name, data in sorted(hostile_zips().items()):
        write(out, 'hostile-%s.zip' % name, data)


def gen_folder_input(out):
    """Folders as skillctl packs them (flat, directories included), the examples among them, a
    single top-level folder holding SKILL.md (kept as it is), and the hostile zips."""
    for d in example_dirs():
        name = os.path.basename(d)
        write(out, 'folder-%s-flat.zip' % name, zip_tree(d, '', zipfile.ZIP_DEFLATED))
        write(out, 'folder-%s-in-a-folder.zip' % name, zip_tree(d, name, zipfile.ZIP_STORED))
    write(out, 'zeros.zip', raw_zip([Entry('a/b/zeros', b'\0' * 100000, mode=stat.S_IFREG | 0o644, deflate=True)]))
    for name, data in sorted(hostile_zips().items()):
        write(out, 'hostile-%s.zip' % name, data)


# ---- SKILL.md texts -----------------------------------------------------------------------

SKILL_MD_SEEDS = {
    'minimal': '---\nname: a\ndescription: b\n---\n',
    'all-keys': ('---\nname: all-keys\ndescription: "quoted: yes"\nlicense: MIT\n'
                 'compatibility: Needs python3\nallowed-tools: Bash(git:*) Read\n'
                 'entry_point: scripts/main.py\nmetadata:\n  author: x\n  version: "1.0"\n'
                 '---\n\n# body\n'),
    'allowed-tools-list': '---\nname: a\ndescription: b\nallowed-tools:\n  - Read\n  - Write\n---\nx\n',
    'typed-values': ('---\nname: 123\ndescription: yes\nlicense: 1.0\ncompatibility: 2024-01-31\n'
                     'metadata:\n  n: 0x1F\n  f: .inf\n  b: on\n  z: ~\n  l: [1, 2]\n---\n'),
    'block-scalars': '---\nname: a\ndescription: |\n  line one\n  line two\nlicense: >-\n  folded\n---\n',
    'flow': '---\n{name: a, description: "b", metadata: {k: v}}\n---\n',
    'anchors': '---\nname: &n a\ndescription: *n\n---\n',
    'tags': '---\nname: !!str a\ndescription: !custom b\n---\n',
    'deep': '---\nname: a\ndescription: b\nmetadata:\n' + ''.join(
        '  ' * (i + 1) + 'k%d:\n' % i for i in range(40)) + '---\n',
    'duplicate': '---\nname: a\nname: b\ndescription: c\n---\n',
    'complex-key': '---\n? [a, b]\n: c\nname: a\n---\n',
    'multi-doc': '---\nname: a\n---\nname: b\n...\n---\n',
    'directives': '---\n%YAML 1.1\n---\nname: a\n---\n',
    'crlf-bom': '\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\n',
    'unclosed': '---\nname: a\ndescription: b\n',
    'no-frontmatter': '# just markdown\n',
    'escapes': '---\nname: "\\e[31mred"\ndescription: "line\\nfake: line\\u0085\\u009b"\n---\n',
    'nul-escape': '---\nname: "a\\0b"\ndescription: b\n---\n',
    'control-key': '---\n"na\\tme": a\ndescription: b\n---\n',
    'tabs': '---\nname:\ta\n\tdescription: b\n---\n',
    'entry-escape': '---\nname: a\ndescription: b\nentry_point: ../../secret\n---\n',
    'entry-symlink': '---\nname: a\ndescription: b\nentry_point: scripts/link.py\n---\n',
    'entry-through-link': '---\nname: a\ndescription: b\nentry_point: scripts/up/secret\n---\n',
    'entry-fifo': '---\nname: a\ndescription: b\nentry_point: scripts/fifo.sh\n---\n',
    'entry-dir': '---\nname: a\ndescription: b\nentry_point: scripts/dir.py\n---\n',
    'entry-shebang': '---\nname: a\ndescription: b\nentry_point: ./scripts//tool\n---\n',
    'empty-values': '---\nname:\ndescription: ""\nmetadata:\nlicense: []\n---\n',
    'top-level-list': '---\n- a\n- b\n---\n',
    'scalar-top': '---\njust a string\n---\n',
    'long-name': '---\nname: ' + 'a' * 70 + '\ndescription: ' + 'd' * 1100 + '\n---\n',
}


def gen_skill_md(out):
    for d in example_dirs():
        with open(os.path.join(d, 'SKILL.md'), 'rb') as f:
            write(out, 'example-%s.md' % os.path.basename(d), f.read())
    for name, text in sorted(SKILL_MD_SEEDS.items()):
        write(out, name + '.md', text.encode())
    write(out, 'invalid-utf8.md', b'---\nname: \xff\ndescription: b\n---\n')
    write(out, 'nul-byte.md', b'---\nname: a\x00\ndescription: b\n---\n')


STRING_SEEDS = [
    'scripts/main.py', 'a/b/c/d', '../x', './x', 'a//b', 'a/./b', 'a/../b', '/etc/passwd',
    'a\\b', 'x/', 'node_modules/x.js', 'm.pyc', '\u00e9t\u00e9/\u00fc', '\x1b[31mred',
    '\u009b31m', 'line\nfake', '\x7f', '\xff', 'my-skill', '-bad', 'bad-', 'a--b', 'A',
    '0', '18446744073709551615', '18446744073709551616', '-1', '+1', ' 1', '007',
    '512', '256K', '1.5G', '2M', '1GiB', '1e3', '0.5', '.5', '30', '30s', '500ms', '2min', '1h',
    '1.5h', '50%', '200%', 'inf', 'nan', 'SKILL.md:4: invalid YAML', 'x:99999999999: y',
    'a:1:', ':1: x',
]


def gen_strings(out):
    for i, s in enumerate(STRING_SEEDS):
        data = s.encode('utf-8', 'surrogateescape') if s != '\xff' else b'\xff'
        write(out, 'seed-%02d' % i, data)


# ---- policy.yaml texts --------------------------------------------------------------------

POLICY_SEEDS = {
    'empty': '',
    'one-value': 'limits:\n  memory:\n    max: 8G\n',
    'flow': 'limits: {memory: {max: 8G, default: 1G}, cpu: {default: 50%}}\n',
    'default-above-max': 'limits:\n  memory:\n    default: 8G\n    max: 1G\n',
    'below-floor': 'limits:\n  tasks:\n    default: 0\n  tmpfs:\n    default: 1\n',
    'huge-values': ('limits:\n  memory:\n    max: 18446744073709551615\n  cpu:\n    max: 99999999%\n'
                    '  timeout:\n    max: 9999999999w\n'),
    'units': ('limits:\n  timeout:\n    default: 1.5h\n    max: 2d\n  stdout:\n    default: 1K\n'
              '  output:\n    max: 1T\nidle-timeout: 500ms\n'),
    'infinity': 'retention:\n  max-runs: infinity\n  max-age: infinity\n',
    'uids-low': 'uids:\n  first: 1000\n  count: 10\n  allow-low: yes\n',
    'uids-wrap': 'uids:\n  first: 4294967290\n  count: 100\n',
    'uids-zero': 'uids:\n  first: 0\n  count: 0\n',
    'lists': ('isolation:\n  may-be-missing: [netns, cgroup]\nnetwork:\n  allowed-skills:\n'
              '    - fetcher\n    - "bad name"\n  allowed-hashes: [sha256:00ff]\n'),
    'empty-list': 'isolation:\n  may-be-missing: []\n',
    'unknown-key': 'limits:\n  memroy:\n    max: 1G\nbogus: 1\n',
    'duplicate': 'limits:\n  memory:\n    max: 1G\n  memory:\n    max: 2G\n',
    'anchor': 'limits:\n  memory: &m {max: 1G}\n  tmpfs: *m\n',
    'tag': 'limits:\n  memory:\n    max: !!int 1\n',
    'multi-doc': 'concurrency:\n  global: 2\n---\nconcurrency:\n  global: 3\n',
    'deep': ''.join('  ' * i + 'k%d:\n' % i for i in range(20)),
    'scalar-top': 'just a string\n',
    'list-top': '- a\n- b\n',
    'control': 'network:\n  allowed-skills: ["\\e[31mred", "line\\nfake: 1"]\n',
    'bool-words': 'uids:\n  allow-low: On\n',
    'negative': 'concurrency:\n  per-user: -1\n  global: 0x10\n',
    'crlf': 'limits:\r\n  memory:\r\n    max: 2G\r\n',
    'syntax-error': 'limits:\n  memory: [\n',
    'many-errors': ''.join('k%d: 1\n' % i for i in range(80)),
}


def gen_policy(out):
    shipped = os.path.join(ROOT, 'policy', 'policy.yaml')
    with open(shipped, 'rb') as f:
        text = f.read()
    write(out, 'shipped.yaml', text)
    # The shipped file without its comments: the fuzzer need not wade through them.
    bare = b'\n'.join(l for l in text.split(b'\n') if l.strip() and not l.lstrip().startswith(b'#'))
    write(out, 'shipped-bare.yaml', bare + b'\n')
    for name, t in sorted(POLICY_SEEDS.items()):
        write(out, name + '.yaml', t.encode())
    write(out, 'nul-byte.yaml', b'limits:\n  memory:\x00\n')
    write(out, 'invalid-utf8.yaml', b'network:\n  allowed-skills: [\xff\xfe]\n')


# ---- input and result JSON ------------------------------------------------------------------

INPUT_JSON_SEEDS = {
    'object': '{"numbers": [1, 2, 3], "text": "hello"}',
    'scalars': '[true, false, null, 0, -1, 1.5e300, -0.0, "x"]',
    'string-escapes': '"\\u0000\\u001b[31m\\ud83d\\ude00\\n\\"\\\\"',
    'lone-surrogate': '"\\ud800"',
    'deep-array': '[' * 200 + ']' * 200,
    'too-deep': '[' * 1100 + ']' * 1100,
    'deep-object': '{"a":' * 100 + '1' + '}' * 100,
    'duplicate-keys': '{"a": 1, "a": 2}',
    'big-numbers': '[18446744073709551616, 9007199254740993, 1e400, -1e400, 0.1]',
    'trailing-garbage': '{"a": 1} x',
    'whitespace': ' \t\r\n{ } \n',
    'long-string': '"' + 'x' * (130 * 1024) + '"',
    'bad-escape': '"\\x41"',
    'unterminated': '{"a": [1, 2',
    'empty': '',
}

RESULT_JSON_SEEDS = {
    'succeeded': {
        'run_id': '0123456789abcdef0123456789abcdef', 'skill': 'json-transform',
        'skill_hash': 'sha256:' + 'ab' * 32, 'script': 'scripts/transform.py',
        'interpreter': 'python3', 'argv': ['python3', '/skill/scripts/transform.py'],
        'status': 'succeeded', 'exit_code': 0, 'signal': None, 'signal_name': None,
        'error': None, 'error_errno': None, 'exec_failed': False, 'output': {'sum': 108},
        'output_source': 'output.json', 'output_error': None,
        'stdout': {'bytes': 5, 'kept': 5, 'truncated': False, 'path': 'stdout.log', 'text': 'hello'},
        'stderr': {'bytes': 0, 'kept': 0, 'truncated': False, 'path': None, 'text': ''},
        'artifacts': [{'path': 'report.txt', 'type': 'file', 'size': 12, 'sha256': 'cd' * 32},
                      {'path': 'sub', 'type': 'directory'}],
        'artifacts_skipped': [{'path': 'link', 'reason': 'symlink'}],
        'artifacts_truncated': False, 'out_full': False, 'store_error': None,
        'usage': {'wall_usec': 420000, 'user_usec': 100000, 'system_usec': 20000,
                  'memory_peak': 10485760, 'tasks_peak': 3},
        'limits': {'backend': 'cgroup2'}, 'layers_missing': [], 'uid': 1879048192,
        'started_at': '2026-01-01T00:00:00Z', 'ended_at': '2026-01-01T00:00:01Z',
        'started_at_usec': 1767225600000000, 'ended_at_usec': 1767225601000000,
    },
    'error': {'status': 'error', 'error': 'scripts/x: not found', 'error_errno': 2,
              'exec_failed': True, 'exit_code': None},
    'error-control': {'status': 'error', 'error': '\x1b[2J\x1b[31mfake\nskillctl: succeeded'},
    'signal': {'status': 'failed', 'signal': 9, 'exit_code': None,
               'limits': {'backend': 'rlimit\x1b]0;x\x07'}},
    'out-of-range': {'status': 'failed', 'exit_code': 256, 'signal': 65},
    'huge-usage': {'status': 'timeout', 'usage': {'wall_usec': 1e30, 'memory_peak': -1},
                   'started_at_usec': 18446744073709551615},
    'unknown-status': {'status': 'exploded'},
    'wrong-types': {'status': 'oom', 'exit_code': '0', 'artifacts': {'path': 'x'},
                    'artifacts_skipped': [1, None, {'path': 7}], 'stdout': [], 'usage': 3},
    'truncated': {'status': 'succeeded', 'stdout': {'bytes': 99999999, 'kept': 65536,
                                                    'truncated': True}},
}


def gen_input_json(out):
    import json
    import re
    texts = set()
    for d in example_dirs():
        with open(os.path.join(d, 'SKILL.md'), encoding='utf-8') as f:
            texts.update(re.findall(r"--input '([^']*)'", f.read()))
    readme = os.path.join(ROOT, 'README.md')
    if os.path.exists(readme):
        with open(readme, encoding='utf-8') as f:
            texts.update(re.findall(r"--input '([^']*)'", f.read()))
    for i, t in enumerate(sorted(texts)):
        write(out, 'example-%02d.json' % i, t.encode())
    for name, t in sorted(INPUT_JSON_SEEDS.items()):
        write(out, 'input-%s.json' % name, t.encode('utf-8', 'surrogatepass'))
    for name, obj in sorted(RESULT_JSON_SEEDS.items()):
        write(out, 'result-%s.json' % name, json.dumps(obj).encode())
    write(out, 'input-invalid-utf8.json', b'{"a": "\xff\xfe"}')


def gen_json_exact(out):
    seeds = {
        'exact': b'{"big": 12345678901234567890, "id": 9007199254740993, "f": 1.0}',
        'numbers': b'[0, -0, 1.5e-300, 1E+2, -2.50, 100000000000000000000000000000001]',
        'strings': b'["a\\u0000b", "\\ud800", "\\ud83d\\ude00", "caf\xc3\xa9", "\\n\\t\\/"]',
        'nested': b'{"a": [{"b": {"c": [null, true, false, {}]}}]}',
        'lines': b'{\n  "n": 01\n}',
        'nul': b'{"a": 1}\x00',
        'bom': b'\xef\xbb\xbf{}',
        'deep': b'[' * 1001 + b']' * 1001,
    }
    for name, data in sorted(seeds.items()):
        write(out, 'json-%s.json' % name, data)


# ---- Run() options recipes (see fuzz-run-options.c for the format) --------------------------

def ro_string(s):
    b = s.encode()
    return bytes([len(b)]) + b


RUN_OPTIONS_SEEDS = {
    # head byte: bit 0 Run() (else RunInstalled()), bit 1 name, bit 2 script, bit 3 input
    # follow as strings, bit 4 a default input, bits 5-7 the skill fd kind.
    # entry: key byte, type byte, [key string], value.
    'none': b'\x00',
    'limits': b'\x10' + bytes([0, 0, 2, 0, 4, 3, 8]),
    'limits-above-max': b'\x00' + bytes([0, 0, 1, 0, 7]),
    'limits-all': b'\x00' + bytes([0, 0, 7, 0, 4, 1, 3, 2, 10, 3, 8, 4, 3, 5, 3, 6, 5]),
    'limits-zero': b'\x00' + bytes([0, 0, 2, 1, 0, 7, 1]),
    'limits-raw': b'\x00' + bytes([0, 0, 1, 2, 0x80]) + (2 ** 64 - 2).to_bytes(8, 'little'),
    'limits-unknown': b'\x00' + bytes([0, 0, 1, 14, 1]),
    'limits-twice': b'\x00' + bytes([0, 0, 1, 0, 4, 0, 0, 1, 0, 5]),
    'limit-name-twice': b'\x00' + bytes([0, 0, 2, 0, 4, 0, 5]),
    'env': b'\x00' + bytes([1, 0, 2, 8, 14, 14, 0x80]) + ro_string('value'),
    'env-denied': b'\x00' + bytes([1, 0, 3, 11, 17, 10, 17, 15, 14]),
    'env-control': b'\x00' + bytes([1, 0, 1, 14, 0x80]) + ro_string('\x1b[31m\n'),
    'files': b'\x00' + bytes([2, 0, 1, 16, 0]),
    'files-bad': b'\x00' + bytes([2, 0, 5, 16, 1, 17, 0, 18, 0, 19, 2, 20, 3]),
    'files-pipe': b'\x00' + bytes([2, 0, 2, 16, 4, 14, 0]),
    'network': b'\x00' + bytes([3, 0, 1]),
    'stdout-stderr': b'\x00' + bytes([4, 0, 5, 5, 0, 1]),
    'stdout-readonly': b'\x00' + bytes([4, 0, 4]),
    'wrong-type-s': b'\x00' + bytes([0, 0xc3]) + ro_string('512M'),
    'wrong-type-u': b'\x00' + bytes([3, 0xc6, 1]),
    'wrong-type-asv': b'\x00' + bytes([0, 0xc9, 1, 0, 4]),
    'unknown-key': b'\x00' + bytes([6, 0, 0]),
    'control-key': b'\x00' + bytes([8, 4, 0]),
    'own-key': b'\x00' + bytes([10, 0]) + ro_string('limits') + bytes([1, 0, 4]),
    'own-key-unknown': b'\x00' + bytes([10, 3]) + ro_string('memory') + bytes([1]),
    'everything': b'\x18' + bytes([0, 0, 1, 0, 4, 1, 0, 1, 8, 14, 2, 0, 1, 16, 0, 3, 0, 0,
                                   4, 0, 5, 5, 0, 5]),
    'run-fd': b'\x01' + bytes([0, 0, 0]),
    'run-dir-fd': bytes([1 | 3 << 5]),
    'run-pipe-fd': bytes([1 | 4 << 5]),
    'bad-name': b'\x02' + ro_string('Bad Name\x1b'),
    'bad-script': b'\x04' + ro_string('../\x1b[1m'),
    'bad-input': b'\x08' + ro_string('{"a": '),
}


# ---- ListRunsFiltered() options recipes (see fuzz-list-options.c for the format) ----------

LO_ID = '0123456789abcdef0123456789abcdef'
LIST_OPTIONS_SEEDS = {
    # head byte: even, options; odd, the rest is one cursor.
    # entry: key byte (0 limit, 1 before, 2 all, 3 skill, 4 state, 5 prefix, 6-10 wrong, 11-15
    # a string follows), type byte (below 0xc0 the key's type), value: a number or word index
    # below 0x80, else raw bytes or a length-prefixed string.
    'none': b'\x00',
    'limit': b'\x00' + bytes([0, 0, 3]),
    'limit-zero': b'\x00' + bytes([0, 0, 0]),
    'limit-raw': b'\x00' + bytes([0, 0, 0x80]) + (2 ** 32 + 7).to_bytes(8, 'little'),
    'before': b'\x00' + bytes([1, 0, 0]),
    'before-leading-zero': b'\x00' + bytes([1, 0, 5]),
    'before-own': b'\x00' + bytes([1, 0, 0x80]) + ro_string('42-' + LO_ID),
    'all': b'\x00' + bytes([2, 0, 1]),
    'skill': b'\x00' + bytes([3, 0, 22]),
    'skill-bad': b'\x00' + bytes([3, 0, 26]),
    'state': b'\x00' + bytes([4, 0, 17]),
    'state-bad': b'\x00' + bytes([4, 0, 21]),
    'prefix': b'\x00' + bytes([5, 0, 28]),
    'prefix-bad': b'\x00' + bytes([5, 0, 31]),
    'everything': b'\x00' + bytes([0, 0, 3, 1, 0, 0, 2, 0, 1, 3, 0, 22, 4, 0, 18, 5, 0, 29]),
    'twice': b'\x00' + bytes([0, 0, 3, 0, 0, 4]),
    'wrong-type': b'\x00' + bytes([0, 0xc1, 1]),
    'wrong-type-as': b'\x00' + bytes([1, 0xc5, 2, 0, 16]),
    'unknown-key': b'\x00' + bytes([10, 0, 1]),
    'control-key': b'\x00' + bytes([8, 2, 1]),
    'own-key': b'\x00' + bytes([11, 0]) + ro_string('limit') + bytes([3]),
    'cursor': b'\x01' + ('1700000000000000-' + LO_ID).encode(),
    'cursor-zero': b'\x01' + ('0-' + LO_ID).encode(),
    'cursor-max': b'\x01' + ('18446744073709551615-' + LO_ID).encode(),
    'cursor-overflow': b'\x01' + ('18446744073709551616-' + LO_ID).encode(),
    'cursor-leading-zero': b'\x01' + ('007-' + LO_ID).encode(),
    'cursor-sign': b'\x01' + ('+1-' + LO_ID).encode(),
    'cursor-upper': b'\x01' + ('1-' + LO_ID.upper()).encode(),
}


def gen_list_options(out):
    for name, data in sorted(LIST_OPTIONS_SEEDS.items()):
        write(out, name, data)


def gen_jsonrpc(out):
    """MCP stdio streams: a first byte choosing the piece size, then lines as clients write them."""
    init = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
            '"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}')
    call = ('{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"run_skill","arguments":'
            '{"skill":"s","input":{"n":12345678901234567890,"\\u0069d":[1,{"x":null}]}},'
            '"_meta":{"progressToken":9007199254740993}}}')
    streams = {
        'session': [init, '{"jsonrpc":"2.0","method":"notifications/initialized"}',
                    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}', call,
                    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}'],
        'odd': ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', '{"jsonrpc":"2.0","id":null,"method":"ping"}',
                '{"jsonrpc":"2.0","id":3,"result":{}}', '{"jsonrpc":"1.0","id":4,"method":"ping"}',
                '{"jsonrpc":"2.0","id":5,"method":"x","params":[1]}', '"s"', '{', ''],
        'deep': ['{"jsonrpc":"2.0","id":2,"method":"x","params":{"a":' + '[' * 70 + '1' + ']' * 70 + '}}'],
        'long': [init + ' ' * 300, '{"jsonrpc":"2.0","id":6,"method":"ping"}'],
    }
    for i, (name, lines) in enumerate(sorted(streams.items())):
        for sep in ('\n', '\r\n'):
            data = bytes([i * 17 % 64]) + sep.join(lines).encode()
            write(out, 'jsonrpc-%s-%d' % (name, len(sep)), data)
    write(out, 'jsonrpc-bytes', b'\x00{"jsonrpc":"2.0","id":1,"method":"p\xffng"}\n\x00\n')


def gen_run_options(out):
    for name, data in sorted(RUN_OPTIONS_SEEDS.items()):
        write(out, name, data)


def write(out, name, data):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)


def copy_committed(target, out):
    """Regression inputs and hand-written seeds, decoded where they are base64."""
    for sub in ('regressions', 'seeds'):
        d = os.path.join(HERE, sub, target)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if name.startswith('.') or not os.path.isfile(p):
                continue
            with open(p, 'rb') as f:
                data = f.read()
            if name.endswith('.b64'):
                data = base64.b64decode(data)
            # Named by content, as libFuzzer names its corpus files.
            write(out, '%s-%s' % (sub, hashlib.sha1(data).hexdigest()), data)


GENERATORS = {
    'skill-md': lambda out, a: gen_skill_md(out),
    'zip': lambda out, a: gen_zip(out, a.skillctl),
    'strings': lambda out, a: gen_strings(out),
    'policy': lambda out, a: gen_policy(out),
    'input-json': lambda out, a: gen_input_json(out),
    'run-options': lambda out, a: gen_run_options(out),
    'jsonrpc': lambda out, a: gen_jsonrpc(out),
    'json-exact': lambda out, a: gen_json_exact(out),
    'folder-input': lambda out, a: gen_folder_input(out),
    'list-options': lambda out, a: gen_list_options(out),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('target')
    ap.add_argument('outdir')
    ap.add_argument('--skillctl')
    ap.add_argument('--generated-only', action='store_true',
                    help='leave out the committed inputs (the replay test reads them in place)')
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    gen = GENERATORS.get(a.target)
    if gen:
        gen(a.outdir, a)
    if not a.generated_only:
        copy_committed(a.target, a.outdir)
    n = len(os.listdir(a.outdir))
    print('%s: %d seed%s in %s' % (a.target, n, '' if n == 1 else 's', a.outdir))


if __name__ == '__main__':
    sys.exit(main())
