# asyncio: tasks, a TCP server on lo, a subprocess, an executor, timeouts.
import asyncio

async def handle(reader, writer):
    data = await reader.readline()
    writer.write(data.upper())
    await writer.drain()
    writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"hello\n")
    assert await reader.readline() == b"HELLO\n"
    writer.close()
    server.close()
    await server.wait_closed()
    proc = await asyncio.create_subprocess_exec("echo", "x", stdout=asyncio.subprocess.PIPE)
    assert (await proc.communicate())[0] == b"x\n"
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, sum, [1, 2, 3]) == 6
    results = await asyncio.gather(*(asyncio.sleep(0.01, result=i) for i in range(10)))
    assert results == list(range(10))
    try:
        await asyncio.wait_for(asyncio.sleep(5), 0.05)
    except asyncio.TimeoutError:
        pass

asyncio.run(main())
