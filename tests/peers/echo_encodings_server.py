"""A real MCP server (Python `mcp` SDK) that echoes its credential back in every encoding a
careless upstream could use, and in those a hostile one reaches for to slip past a filter (base32,
UTF-16, escaped and spaced hex, HTML entities, base64 of base64, reversed, ROT13, fullwidth,
another case, spelled out (with any separators), a list of its characters or of its bytes'
codes (however punctuated), cut into lines of
ten characters, dumped as `xxd` does), for the redaction
tests. The credential is `Y` in its environment,
as a source configured with `env = { Y = "${secret:y}" }` gets it; with `ECHO_FILE` set, it is
read from that file instead, as a server that found another server's token on disk would.

    echo_encodings_server.py stdio        serve MCP on stdio
    echo_encodings_server.py http PORT    serve Streamable HTTP; every request must carry
                                          `Authorization: Bearer $Y` (401 otherwise)
    echo_encodings_server.py crash        print the credential on stderr and exit 1, as a
                                          server that fails to start and says why
    echo_encodings_server.py needles      print, as JSON, every encoded string the tools emit
                                          that carries the credential or one of its lines (the
                                          part of it that carries the credential, for base64),
                                          so a test can look for each in what it captured

Tools: `kinds` lists the encodings; `echo(kind)` returns the credential and each of its lines in
that encoding as text, structured content (as a value and as a key), `_meta` and an embedded
resource; `number` returns an all-digit credential as a JSON number (an integer and a float),
as an API that parsed it would, and has it as its argument's default; `split` returns it taken
apart (halves in two content blocks, and lists of its characters and of their codes);
`fail(kind, how)` fails with them (in each of several kinds joined by `+`) in a tool error (`how = "tool"`) or a JSON-RPC error
(`"protocol"`); `blobs` returns them as image, audio and blob data; `about` has them in its
description and schema; `inherited(name)` says whether this process has the environment variable
NAME.
"""

import base64
import codecs
import json
import os
import re
import struct
import sys
import textwrap
import urllib.parse

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

if os.environ.get("ECHO_FILE"):
    with open(os.environ["ECHO_FILE"], encoding="utf-8") as file:
        SECRET = file.read()
else:
    SECRET = os.environ.get("Y", "")
# Bytes around the credential inside a base64 stream: 0, 1 or 2 of them before it puts it at
# each of the three alignments.
PREFIX = b"\xfa\x01"
SUFFIX = b"!\x00"
# The same for base32, whose five alignments take up to four bytes before.
PREFIX5 = b"\xfa\x01\x02\xfb"


def lines(value: str) -> list[str]:
    """The lines of a credential that spans several, as the hub splits them."""
    parts = re.split(r"\r\n|\r|\n", value)
    return parts if len(parts) > 1 else []


def b64_middle(data: bytes, offset: int, alphabet: str) -> str:
    """The base64 characters that depend on `data` alone when `offset` bytes come before it:
    whatever surrounds it, they appear in the encoding of the whole stream."""
    encode = base64.urlsafe_b64encode if alphabet == "url" else base64.b64encode
    encoded = encode(bytes(offset) + data).decode()
    start = -(-8 * offset // 6)
    end = (8 * (offset + len(data))) // 6
    return encoded[start:end]


def b32_middle(data: bytes, offset: int) -> str:
    """The base32 characters that depend on `data` alone when `offset` bytes come before it."""
    encoded = base64.b32encode(bytes(offset) + data).decode()
    start = -(-8 * offset // 5)
    end = (8 * (offset + len(data))) // 5
    return encoded[start:end]


def folded(value: str) -> list[str]:
    return [value[i : i + 10] for i in range(0, len(value), 10)]


def reads_as_text(piece: str) -> bool:
    """A piece the hub leaves alone: letters of one case and the punctuation of words, hosts
    and paths, which is not what makes a secret secret."""
    rest = set(" .:/-_@")
    return all(c in rest or ("a" <= c <= "z") for c in piece) or all(c in rest or ("A" <= c <= "Z") for c in piece)


def squeezable(value: str) -> bool:
    """Whether the hub looks for `value` spelled out with any separators at all: one line whose
    ASCII letters and digits, the rest left out, hold ten in a row that neither read as ordinary
    text nor are all digits."""
    if "\n" in value or "\r" in value:
        return False
    kept = "".join(c for c in value if c.isascii() and c.isalnum())
    pieces = [kept[i : i + 10] for i in range(len(kept) - 9)]
    return any(not reads_as_text(p) and not p.isdigit() for p in pieces)


def grouped(data: bytes) -> str:
    """`data` in hex, in `xxd`'s groups of two bytes."""
    digits = data.hex()
    return " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))


def xxd(value: str) -> str:
    """`value` as `xxd` dumps it: sixteen bytes a line, an offset, hex and the printable text."""
    data = value.encode()
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        text = "".join(chr(b) if 33 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}: {grouped(chunk):<39}  {text}")
    return "\n".join(lines)


def b64_stream(value: str, offset: int, alphabet: str, padded: bool) -> str:
    encode = base64.urlsafe_b64encode if alphabet == "url" else base64.b64encode
    text = encode(PREFIX[:offset] + value.encode() + SUFFIX).decode()
    return text if padded else text.rstrip("=")


def encodings() -> dict:
    """kind → (encode(value), needle(value)): what the tools emit, and the part of it a test
    must never find."""
    out = {
        "raw": (lambda v: v, lambda v: v),
        "json_ascii": (lambda v: json.dumps(v)[1:-1],) * 2,
        "json_utf8": (lambda v: json.dumps(v, ensure_ascii=False)[1:-1],) * 2,
        "json_text": (lambda v: json.dumps({"token": v}), lambda v: json.dumps(v)[1:-1]),
        "quote": (lambda v: urllib.parse.quote(v, safe=""),) * 2,
        "quote_slash": (urllib.parse.quote,) * 2,
        "quote_plus": (urllib.parse.quote_plus,) * 2,
        "hex": (lambda v: v.encode().hex(),) * 2,
        "HEX": (lambda v: v.encode().hex().upper(),) * 2,
    }
    for alphabet in ("std", "url"):
        for offset in range(3):
            for padded in (True, False):
                name = f"b64{alphabet}_{offset}{'' if padded else '_nopad'}"
                out[name] = (
                    lambda v, o=offset, a=alphabet, p=padded: b64_stream(v, o, a, p),
                    lambda v, o=offset, a=alphabet: b64_middle(v.encode(), o, a),
                )
    # What an upstream set on slipping past a filter reaches for next.
    for offset in range(5):
        out[f"b32_{offset}"] = (
            lambda v, o=offset: base64.b32encode(PREFIX5[:o] + v.encode() + SUFFIX).decode(),
            lambda v, o=offset: b32_middle(v.encode(), o),
        )
    out["b32hex_lower"] = (
        lambda v: base64.b32hexencode(v.encode() + SUFFIX).decode().lower(),
        lambda v: base64.b32hexencode(v.encode()).decode().lower()[: 8 * len(v.encode()) // 5],
    )
    out["reversed"] = (lambda v: v[::-1],) * 2
    out["rot13"] = (lambda v: codecs.encode(v, "rot13"),) * 2
    out["hex_utf16"] = (lambda v: v.encode("utf-16-le").hex(),) * 2
    out["hex_spaced"] = (lambda v: v.encode().hex(" ").upper(),) * 2
    out["hex_escapes"] = (lambda v: "".join(f"\\x{b:02x}" for b in v.encode()),) * 2
    out["hex_unicode_escapes"] = (
        lambda v: "".join(f"\\u{u:04x}" for u in struct.unpack(f"<{len(v.encode('utf-16-le')) // 2}H", v.encode("utf-16-le"))),
    ) * 2
    out["html_entities"] = (lambda v: "".join(f"&#{ord(c)};" for c in v),) * 2
    out["b64_utf16"] = (
        lambda v: base64.b64encode(v.encode("utf-16-le")).decode(),
        lambda v: b64_middle(v.encode("utf-16-le"), 0, "std"),
    )
    # Wrapped as mail and PEM wrap it, at 32 characters so that short values wrap too: what
    # must not survive is the last line, which holds the value's last bytes.
    out["b64_wrapped"] = (
        lambda v: "\n".join(textwrap.wrap(base64.b64encode(v.encode()).decode(), 32)),
        lambda v: textwrap.wrap(base64.b64encode(v.encode()).decode(), 32)[-1],
    )
    # Cut into lines of ten characters, as a terminal or `fold` wraps it and a dump's text column
    # holds it: each line is a piece of the value, and the first that does not read as ordinary
    # text must not survive.
    out["folded"] = (lambda v: "\n".join(folded(v)), lambda v: next((p for p in folded(v) if len(p) == 10 and not reads_as_text(p)), v))
    # As `xxd` dumps it: the first eight bytes, a dump's first line holds whole, must not survive
    # in its groups of two bytes (unless they read as ordinary text, which the hub leaves).
    out["hex_dump"] = (xxd, lambda v: v if len(v.encode()) < 8 or reads_as_text(v.encode()[:8].decode("latin-1")) else grouped(v.encode()[:8]))
    out["fullwidth"] = (
        lambda v: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in v),
    ) * 2
    out["upper"] = (str.upper,) * 2
    out["lower"] = (str.lower,) * 2
    out["spaced"] = (" ".join,) * 2
    out["zero_width"] = ("\u200b".join,) * 2
    out["char_list"] = (
        lambda v: json.dumps(list(v), ensure_ascii=False),
        lambda v: json.dumps(list(v), ensure_ascii=False)[2:-2],
    )
    out["byte_codes"] = (lambda v: ", ".join(str(b) for b in v.encode()),) * 2
    # Spelled out with separators no list of them names, and codes punctuated any way: the hub
    # reads the letters and digits run together.
    for name, separator in [("semicolons", ";"), ("bars", " | "), ("nbsp", "\u00a0"), ("bom", "\ufeff")]:
        spell = lambda v, s=separator: s.join(v)
        out[f"spelled_{name}"] = (spell, lambda v, spell=spell: spell(v) if squeezable(v) else v)
    out["codes_semicolons"] = (lambda v: ";".join(str(b) for b in v.encode()),) * 2
    out["hex_codes_commas"] = (lambda v: ",".join(f"{b:02x}" for b in v.encode()),) * 2
    out["b64_of_b64"] = (
        lambda v: base64.b64encode(base64.b64encode(v.encode())).decode(),
        lambda v: b64_middle(base64.b64encode(v.encode())[: 8 * len(v.encode()) // 6], 0, "std"),
    )
    return out


ENCODINGS = encodings()


def encoded(kind: str) -> str:
    """The credential and its lines in encoding KIND, or in each of several joined by `+`."""
    parts = []
    for one in kind.split("+"):
        encode, _ = ENCODINGS[one]
        parts.append(f"token={encode(SECRET)}")
        parts += [f"line{i}={encode(line)}" for i, line in enumerate(lines(SECRET))]
    return "; ".join(parts)


def needles() -> list[list[str]]:
    out = []
    for kind, (_, needle) in ENCODINGS.items():
        for value in [SECRET, *lines(SECRET)]:
            out.append([kind, needle(value)])
    return out


server = MCPServer("echo-encodings")


@server.tool()
def kinds() -> list[str]:
    """The encodings `echo` and `fail` know."""
    return list(ENCODINGS)


@server.tool()
def inherited(name: str) -> bool:
    """Whether this process has the environment variable NAME."""
    return name in os.environ


@server.tool()
def echo(kind: str) -> CallToolResult:
    """Return the credential in encoding KIND everywhere a result can carry text."""
    text = encoded(kind)
    return CallToolResult(
        content=[
            TextContent(type="text", text=text),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri=f"echo://{kind}", text=text),
            ),
        ],
        structured_content={"kind": kind, "value": text, text: "as a key"},
        _meta={"echo": text},
    )


@server.tool()
def split() -> CallToolResult:
    """Return the credential taken apart: halves in two content blocks, and its characters and
    their codes as lists."""
    half = len(SECRET) // 2
    return CallToolResult(
        content=[
            TextContent(type="text", text=SECRET[:half]),
            TextContent(type="text", text=SECRET[half:]),
        ],
        structured_content={"letters": list(SECRET), "codes": [ord(c) for c in SECRET]},
    )


@server.tool()
def fail(kind: str, how: str) -> str:
    """Fail with the credential in encoding KIND in the message."""
    message = f"upstream rejected {encoded(kind)}"
    if how == "protocol":
        raise MCPError(-32000, message, data={"echo": encoded(kind)})
    raise ToolError(message)


@server.tool()
def blobs() -> CallToolResult:
    """Return the credential as binary data: image, audio and a blob resource."""
    data = base64.b64encode(SECRET.encode()).decode()
    return CallToolResult(
        content=[
            ImageContent(type="image", data=data, mimeType="image/png"),
            AudioContent(type="audio", data=data, mimeType="audio/wav"),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="echo://blob", blob=data, mimeType="application/octet-stream"),
            ),
        ]
    )


@server.tool(description=f"Describes itself with the credential: {encoded('raw')} / {encoded('json_ascii')}")
def about(note: str = SECRET) -> str:
    """Return nothing of interest."""
    return "about"


# The credential as the number an upstream that parsed it holds; 0 when it is not all digits.
NUMBER = int(SECRET) if SECRET.isascii() and SECRET.isdigit() else 0


@server.tool()
def number(pin: int = NUMBER) -> CallToolResult:
    """Return the credential as a JSON number, as an API that parsed a numeric one would."""
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps({"pin": NUMBER}))],
        structured_content={"pin": NUMBER, "as_float": float(NUMBER), "list": [NUMBER]},
    )


def require_bearer(app):
    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode("latin-1") != f"Bearer {SECRET}":
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing or wrong Authorization header"})
                return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "crash":
        print(f"cannot start: token={SECRET} was refused", file=sys.stderr)
        sys.exit(1)
    elif mode == "needles":
        print(json.dumps(needles()))
    elif mode == "http":
        app = require_bearer(server.streamable_http_app())
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run()
