#!/usr/bin/env python3
"""Writes fuzz/seeds/<target>/ from the project's own test cases and the desync-guardian request corpus.

The raw requests and responses are the C# string literals of tests/ that hold a whole HTTP/1.x message; the corpus
cases are rebuilt as the tests rebuild them (tests/LLRP.Tests/DesyncGuardianTests.cs, GuardianCase.Request), from
the cases.json the test project ships (tests/LLRP.Tests/TestData/http-desync-guardian/). The seeds are raw;
fuzz/run.sh minimises them.
"""
import hashlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "seeds")
LITERAL = re.compile(r'(?<![@$])"((?:[^"\\\n]|\\.)*)"')
ESCAPES = {"r": "\r", "n": "\n", "t": "\t", "0": "\0", '"': '"', "\\": "\\", "'": "'", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def unescape(text):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = text[i + 1]
        if n in ESCAPES:
            out.append(ESCAPES[n])
            i += 2
        elif n == "x":
            m = re.match(r"[0-9A-Fa-f]{1,4}", text[i + 2:])
            out.append(chr(int(m.group(0), 16)))
            i += 2 + len(m.group(0))
        elif n == "u":
            out.append(chr(int(text[i + 2:i + 6], 16)))
            i += 6
        else:
            out.append(n)
            i += 2
    return "".join(out)


def literals():
    for folder, _, files in os.walk(os.path.join(ROOT, "tests")):
        for name in files:
            if name.endswith(".cs"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    for m in LITERAL.finditer(f.read()):
                        try:
                            yield unescape(m.group(1))
                        except (AttributeError, ValueError, IndexError):
                            pass


# The corpus as the test project ships it (its SOURCE.md says where it comes from).
CORPUS = os.path.join(ROOT, "tests", "LLRP.Tests", "TestData", "http-desync-guardian", "cases.json")


def guardian_request(case):
    headers = [(str(h["name"]), str(h["value"])) for h in case.get("headers") or []]
    text = f'{case["method"]} {case["uri"]} {case["version"]}\r\n'
    if not any(n.strip().lower() == "host" for n, _ in headers):
        text += "Host: example.com\r\n"
    text += "".join(f"{n}: {v}\r\n" for n, v in headers) + "\r\n"
    te = [v for n, v in headers if n.lower() == "transfer-encoding"]
    if te and te[-1].split(",")[-1].split(";")[0].strip(" \t").lower() == "chunked":
        return text + "5\r\nhello\r\n0\r\n\r\n"
    for n, v in headers:
        if n.lower() == "content-length":
            values = {x.strip(" \t") for x in v.split(",")}
            if len(values) == 1:
                value = values.pop()
                if 0 < len(value) < 9 and value.isdigit():
                    return text + "x" * int(value)
    return text


def main():
    seeds = {t: set() for t in ("request-head", "request-body", "response", "host", "command-line", "differential")}
    requests = set()
    for text in literals():
        if "\r\n" not in text:
            if text.startswith("--"):
                seeds["command-line"].add(text)
            continue
        if re.match(r"HTTP/1\.[01] \d{3}", text):
            seeds["response"].add(text)
        elif re.match(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP/", text.lstrip("\r\n")):
            requests.add(text)
        elif re.match(r"[0-9A-Fa-f]+[;\r]", text):
            seeds["request-body"].add(text)
    with open(CORPUS, encoding="utf-8") as f:
        for cases in json.load(f).values():
            requests.update(guardian_request(c) for c in cases)
    for target in ("request-head", "request-body", "differential"):
        seeds[target].update(requests)
    for text in requests:
        for m in re.finditer(r"\r\nHost:[ \t]*([^\r\n]*?)[ \t]*\r\n", text, re.IGNORECASE):
            seeds["host"].add(m.group(1))
    seeds["host"].update(["example.com", "a.b.c:8080", "[::1]:80", "127.0.0.1:65535", "[v1.x]", "a%41b", "x:65536", "host.:0"])
    seeds["command-line"].update([
        "--downstream\nhttp://127.0.0.1:5000",
        "--downstream=http://127.0.0.1:5000;http://[::1]:5001\n--urls\nhttp://localhost:8080\n--client\nyarp",
        "--downstream\nhttp://127.0.0.1:5000\n--maxRequestLineSize\n64\n--keepAliveTimeout\n0.5\n--loadBalancing\nRoundRobin",
        "/downstream\nhttp://127.0.0.1:1\n--healthCheckPath\n/health\n--shareClients\ntrue",
        "downstream=http://127.0.0.1:1\n--socketEngine\nruntime\n--statsWindow\n3",
    ])
    for target, texts in seeds.items():
        folder = os.path.join(OUT, target)
        os.makedirs(folder, exist_ok=True)
        for text in texts:
            data = text.encode("latin-1", errors="replace") if target != "command-line" else text.encode("utf-8")
            with open(os.path.join(folder, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
                f.write(data)
        print(f"make-seeds: {target}: {len(texts)} seeds")


main()
