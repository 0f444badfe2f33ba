"""Run Agent Skills in skilld's sandbox: through the skilld service on the system bus (D-Bus,
io.skilld.Skilld1(5)), or embedded through skillctl where no service answers.

    from skilld_client import Client
    result = Client().run("path/to/skill", input={"x": 1}, timeout=30)
    print(result.status, result.output)
"""
from ._asyncio import AsyncClient
from ._blocking import Client
from ._common import Result, ServiceUnavailable, SkilldError

__all__ = ['Client', 'AsyncClient', 'Result', 'SkilldError', 'ServiceUnavailable']
__version__ = '0.1.0'
