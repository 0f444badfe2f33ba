#!/bin/bash
# skillctl skill tools through the built binary: the shape of each format's tool definitions
# (OpenAI Chat Completions and Responses, Anthropic, MCP), names made fit for each API's rules,
# a folder of skills, duplicates left out, and errors. The installed skills (through the
# service) are tested in test-skillctl-client.sh. Prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}
EXAMPLES=$SRC/examples/skills
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

. "$(dirname "$0")/../lib/tap.sh"
check() {
        local what=$1; shift
        if "$@" 2>"$T/check-err"; then ok "$what"; else not_ok "$what" "command: $*" "$(head -c 2000 "$T/check-err")"; fi
}
run() { "$SKILLCTL" skill tools "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }

# shape FORMAT: every definition in $T/out has exactly the members the format's API takes.
shape() {
        python3 - "$T/out" "$1" <<'PY'
import json, re, sys
defs, fmt = json.load(open(sys.argv[1])), sys.argv[2]
assert isinstance(defs, list) and defs, defs
name_re = re.compile(r'^[A-Za-z0-9_.-]{1,128}$' if fmt == 'mcp' else r'^[a-zA-Z0-9_-]{1,64}$')
for d in defs:
    if fmt == 'openai':
        assert set(d) == {'type', 'function'} and d['type'] == 'function', d
        fn = d['function']
        assert set(fn) == {'name', 'description', 'parameters'}, fn
        name, schema = fn['name'], fn['parameters']
    elif fmt == 'openai-responses':
        assert set(d) == {'type', 'name', 'description', 'parameters'} and d['type'] == 'function', d
        name, schema = d['name'], d['parameters']
    elif fmt == 'anthropic':
        assert set(d) == {'name', 'description', 'input_schema'}, d
        name, schema = d['name'], d['input_schema']
    else:
        assert set(d) == {'name', 'title', 'description', 'inputSchema'}, d
        name, schema = d['name'], d['inputSchema']
    assert name_re.match(name), name
    assert schema['type'] == 'object' and schema['additionalProperties'] is False, schema
    assert set(schema['properties']) == {'input', 'args', 'files'}, schema
    assert schema['properties']['args'] == {'type': 'array', 'description': schema['properties']['args']['description'],
                                            'items': {'type': 'string', 'description': 'One argument.'}}
    assert schema['properties']['files']['additionalProperties']['type'] == 'string'
    try:
        import jsonschema
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.Draft202012Validator(schema).validate({'input': {'x': 1}, 'args': ['a'], 'files': {'f': 'eA=='}})
    except ImportError:
        pass
PY
}
names() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(" ".join(x.get("name") or x["function"]["name"] for x in d))' "$T/out"; }

for f in openai openai-responses anthropic mcp; do
        run --format "$f" "$EXAMPLES/json-transform" "$EXAMPLES/shell-report"
        check "$f: exit 0" test "$(rc)" = 0
        check "$f: the shape of its API" shape "$f"
        check "$f: one per skill, in order" test "$(names)" = "json-transform shell-report"
done
run "$EXAMPLES/json-transform"
check "openai is the default" shape openai
desc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["function"]["description"])' "$T/out")
check "the description is the skill's" test "$desc" = "$("$SKILLCTL" skill show "$EXAMPLES/json-transform" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["description"])')"

# A folder of skills: each skill folder in it, by name.
run --format anthropic "$EXAMPLES"
check "a folder of skills: all of them" test "$(names)" = "always-fails json-transform make-artifacts node-greet shell-report"

# Names out of an API's set: one '_' per character; MCP keeps dots.
mkdir -p "$T/skills/a" "$T/skills/b" "$T/plain"
printf -- '---\nname: caf\xc3\xa9.tool\ndescription: One.\n---\n' >"$T/skills/a/SKILL.md"
printf -- '---\nname: caf\xc3\xa9.tool\ndescription: Two.\n---\n' >"$T/skills/b/SKILL.md"
run --format anthropic "$T/skills/a"
check "anthropic: name sanitized" test "$(names)" = "caf__tool"
run --format mcp "$T/skills/a"
check "mcp: dots kept" test "$(names)" = "caf_.tool"
check "mcp: the title is the skill's own name" grep -q '"title": "caf.\.tool"' "$T/out"
run --format openai "$T/skills"
check "a duplicate tool name: left out" test "$(names)" = "caf__tool"
check "a duplicate tool name: says so" grep -q "a tool named caf__tool is listed already" "$T/err"

# Errors: nothing printed on stdout.
run --format bogus "$EXAMPLES/json-transform"
check "unknown format: exit 2" test "$(rc)" = 2
check "unknown format: says which" grep -q "bogus: unknown format" "$T/err"
run "$T/plain"
check "neither a skill nor a folder of skills: exit 2" test "$(rc)" = 2
check "  and says so" grep -q "neither a skill nor a folder of skills" "$T/err"
run "$EXAMPLES/json-transform" "$T/nope"
check "a missing skill: exit 2, nothing printed" test "$(rc)" = 2 -a ! -s "$T/out"

tap_finish
