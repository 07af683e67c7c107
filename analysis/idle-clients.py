#!/usr/bin/env python3
"""Opens N idle HTTP/1.1 client connections to one address and holds them, for idle-memory.sh.

usage: idle-clients.py HOST PORT COUNT MODE HOLD_S [CAFILE]
  MODE none     connect and send nothing (an idle connection that never started a request)
  MODE request  send one keep-alive GET / and read its whole response, then stay idle on keep-alive
  HOLD_S        seconds to hold the connections open after the last one is ready (bounded on purpose)
  CAFILE        speak TLS (server name "localhost"), trusting the certificates in this PEM file

Prints "ready N" once every connection is open (and, with MODE request, answered), then holds them
until HOLD_S passes (or SIGTERM); prints "closed" when done. Exit 1 if any connection failed.
"""
import asyncio
import ssl
import sys

# Connects in bounded batches: the proxies' listen backlogs (Kestrel 512, nginx 511) would otherwise
# overflow and the kernel would retry SYNs for seconds.
PARALLEL_CONNECTS = 128
CONNECT_TIMEOUT_S = 30


async def read_response(reader):
    """Reads one response with a Content-Length body (what the test origin sends for GET /)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head.split(b"\r\n")[0].decode("latin-1"))
    await reader.readexactly(length)


async def open_one(host, port, mode, gate, held, tls):
    async with gate:
        connect = asyncio.open_connection(host, port, ssl=tls, server_hostname="localhost" if tls else None)
        reader, writer = await asyncio.wait_for(connect, CONNECT_TIMEOUT_S)
        if mode == "request":
            writer.write(f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode("ascii"))
            await asyncio.wait_for(read_response(reader), CONNECT_TIMEOUT_S)
        held.append((reader, writer))


async def main():
    if len(sys.argv) not in (6, 7) or sys.argv[4] not in ("none", "request"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    host, port, count, mode, hold_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
    tls = ssl.create_default_context(cafile=sys.argv[6]) if len(sys.argv) == 7 else None
    gate = asyncio.Semaphore(PARALLEL_CONNECTS)
    held = []
    results = await asyncio.gather(*(open_one(host, port, mode, gate, held, tls) for _ in range(count)), return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    print(f"ready {len(held)}" + (f" ({len(failures)} failed: {failures[0]!r})" if failures else ""), flush=True)
    await asyncio.sleep(hold_s)
    # A peer that closed a held connection meanwhile (an idle timeout) shows as EOF.
    closed_by_peer = sum(1 for reader, _ in held if reader.at_eof())
    for _, writer in held:
        writer.close()
    print(f"closed (closed by the peer while held: {closed_by_peer})", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
