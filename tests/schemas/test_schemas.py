"""The published JSON Schemas (schemas/) against what the code really produces: skill show --json
of every example skill, and results of real runs of the example skills (embedded, through the
built skillctl), validated with jsonschema's Draft 2020-12 validator. Strictly: besides the
schema, every member of our own objects must be one the schema documents, so that a field added
to the code without its schema fails here.

Run with pytest-3; SKILLCTL names the built skillctl, SKILLD_SOURCE_ROOT the tree."""
import copy
import json
import os
import subprocess
import tempfile

import jsonschema
import pytest

ROOT = os.environ.get('SKILLD_SOURCE_ROOT',
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SKILLCTL = os.environ.get('SKILLCTL', 'skillctl')
EXAMPLES = os.path.join(ROOT, 'examples', 'skills')
SCHEMAS = os.path.join(ROOT, 'schemas')

# The input each example is documented with (see its SKILL.md).
EXAMPLE_INPUTS = {
    'always-fails': None,
    'json-transform': '{"numbers": [1, 2.5, 3], "text": "a b c d"}',
    'make-artifacts': '{"rows": [{"item": "apples", "qty": 3}, {"item": "pears", "qty": 1}]}',
    'node-greet': '{"name": "schema"}',
    'shell-report': None,
}


def load(name):
    with open(os.path.join(SCHEMAS, name + '.schema.json'), encoding='utf-8') as f:
        return json.load(f)


def closed(schema, skip=('output',)):
    """The schema with additionalProperties false wherever it lists properties (except where the
    instance is the skill's own, like output): undocumented members then fail."""
    s = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if 'properties' in node and 'additionalProperties' not in node:
                node['additionalProperties'] = False
            for k, v in node.items():
                if k == 'if':
                    continue        # a condition, not a description of the instance
                if k == 'properties':
                    for name, sub in v.items():
                        if name not in skip:
                            walk(sub)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(s)
    return s


def validate(instance, schema_name):
    schema = load(schema_name)
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    for s in (schema, closed(schema)):
        errors = sorted(cls(s, format_checker=cls.FORMAT_CHECKER).iter_errors(instance), key=str)
        assert not errors, '\n'.join('%s at %s' % (e.message, list(e.absolute_path)) for e in errors)


@pytest.mark.parametrize('name', ['result', 'run-options', 'skill-show'])
def test_schema_is_draft_2020_12(name):
    schema = load(name)
    assert schema['$schema'] == 'https://json-schema.org/draft/2020-12/schema'
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize('skill', sorted(EXAMPLE_INPUTS))
def test_skill_show(skill):
    out = subprocess.run([SKILLCTL, 'skill', 'show', os.path.join(EXAMPLES, skill), '--json'],
                         check=True, capture_output=True, text=True).stdout
    validate(json.loads(out), 'skill-show')


DEPS_FIXTURES = os.path.join(ROOT, 'tests', 'deps', 'fixtures')


@pytest.mark.parametrize('skill', sorted(os.listdir(DEPS_FIXTURES)))
def test_skill_show_dependencies(skill):
    # Skills that declare or import packages: the dependency items are checked too, not only an
    # empty list.
    out = subprocess.run([SKILLCTL, 'skill', 'show', os.path.join(DEPS_FIXTURES, skill), '--json'],
                         check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    assert doc['dependencies']['dependencies'], 'the fixture names no dependency'
    validate(doc, 'skill-show')


def test_skill_show_archive(tmp_path):
    archive = tmp_path / 'json-transform.skill'
    subprocess.run([SKILLCTL, 'skill', 'package', os.path.join(EXAMPLES, 'json-transform'), '-o', str(archive)],
                   check=True, capture_output=True)
    out = subprocess.run([SKILLCTL, 'skill', 'show', str(archive), '--json'],
                         check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    assert doc['source'] == 'archive'
    validate(doc, 'skill-show')


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason='runs need root here (namespaces)')


def run(skill, *args, input_json=None):
    """Runs skill embedded; returns the --json result, result.json and the exit status."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [SKILLCTL, 'run', '--local', skill, '--json', '--output-dir', os.path.join(out, 'r')]
        if input_json is not None:
            cmd += ['--input', input_json]
        p = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=120)
        with open(os.path.join(out, 'r', 'result.json'), encoding='utf-8') as f:
            stored = json.load(f)
        return json.loads(p.stdout), stored, p.returncode


@needs_root
@pytest.mark.parametrize('skill', sorted(EXAMPLE_INPUTS))
def test_example_results(skill):
    printed, stored, rc = run(os.path.join(EXAMPLES, skill), input_json=EXAMPLE_INPUTS[skill])
    assert printed == stored
    validate(printed, 'result')
    assert (rc == 0) == (printed['status'] == 'succeeded')


@needs_root
def test_results_of_every_kind(tmp_path):
    """A timeout, a signal, a script that cannot be executed, artifacts with folders and a
    skipped FIFO, exact output."""
    skill = tmp_path / 'kinds'
    (skill / 'scripts').mkdir(parents=True)
    (skill / 'SKILL.md').write_text('---\nname: kinds\ndescription: Ends in every way a test asks for.\n---\n')
    scripts = {
        'sleep.sh': 'sleep 30\n',
        'kill.sh': 'kill -TERM $$\n',
        'files.sh': 'mkdir -p /out/files/d; echo x > /out/files/d/f; mkfifo /out/files/p\n'
                    'echo \'{"big": 12345678901234567890, "f": 1.0}\'\n',
    }
    for name, body in scripts.items():
        (skill / 'scripts' / name).write_text('#!/bin/bash\n' + body)
        (skill / 'scripts' / name).chmod(0o755)
    (skill / 'scripts' / 'noexec').write_text('#!/nonexistent/interpreter\n')
    (skill / 'scripts' / 'noexec').chmod(0o755)

    statuses = {}
    for script, args in (('sleep.sh', ['--timeout', '1']), ('kill.sh', []), ('files.sh', []),
                         ('noexec', [])):
        printed, _, _ = run(str(skill), '--script', 'scripts/' + script, *args)
        validate(printed, 'result')
        statuses[script] = printed
    assert statuses['sleep.sh']['status'] == 'timeout'
    assert statuses['kill.sh']['status'] == 'signal' and statuses['kill.sh']['signal_name'] == 'TERM'
    files = statuses['files.sh']
    assert [a['type'] for a in files['artifacts']] == ['directory', 'file']
    assert files['artifacts_skipped'][0]['path'] == 'p'
    assert files['output'] == {'big': 12345678901234567890, 'f': 1.0}
    assert statuses['noexec']['status'] == 'error' and statuses['noexec']['exec_failed'] is True


@needs_root
def test_result_environment_missing(tmp_path):
    """A run refused before it started, for want of its environment, still prints a result."""
    skill = tmp_path / 'needs-env'
    (skill / 'scripts').mkdir(parents=True)
    (skill / 'SKILL.md').write_text('---\nname: needs-env\ndescription: Imports a package.\n---\n')
    (skill / 'scripts' / 'main.py').write_text('import tabulate\n')
    (skill / 'requirements.txt').write_text('tabulate==0.9.0\n')
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / 'cache'))
    p = subprocess.run([SKILLCTL, 'run', '--local', str(skill), '--json'], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 122, p.stderr
    printed = json.loads(p.stdout)
    assert printed['status'] == 'environment'
    assert 'env build' in p.stderr
    validate(printed, 'result')
