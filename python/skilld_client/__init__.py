"""Run Agent Skills in skilld's sandbox: through the skilld service on the system bus (D-Bus,
io.skilld.Skilld1(5)), or embedded through skillctl where no service answers.

    from skilld_client import Client
    result = Client().run("path/to/skill", input={"x": 1}, timeout=30)
    print(result.status, result.output)

    build = Client().build_environment("path/to/skill")   # its requirements.txt, package.json...
    print(build.id, build.missing)

    for run in Client(mode="service").list_runs(20):       # the newest 20 of your runs
        print(run.id, run.skill, run.state, run.status)
"""
from ._asyncio import AsyncClient
from ._blocking import Client
from ._common import EnvironmentBuild, Result, RunEntry, RunList, ServiceUnavailable, SkilldError

__all__ = ['Client', 'AsyncClient', 'Result', 'EnvironmentBuild', 'RunEntry', 'RunList', 'SkilldError',
           'ServiceUnavailable']
__version__ = '0.1.0'
