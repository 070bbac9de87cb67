"""A real MCP server (Python `mcp` SDK) over HTTPS, with a certificate from a throwaway CA.

Run as `tls_server.py PORT CA_FILE NAME...`: it makes a certificate authority (trustme), writes
the authority's certificate (PEM) to CA_FILE for a client to trust, and serves Streamable HTTP
at https://127.0.0.1:PORT/mcp under uvicorn with a certificate for NAME... (host names or IP
addresses) signed by that authority. CA_FILE is written before the port listens, so a test
that waits for the port can read it. The TLS tests use it to show HTTPS sources work when the
authority is trusted, and are refused, with a reason, when it is not or the name is wrong.
"""

import sys

import trustme
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("tls")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def shout(text: str) -> str:
    """Return TEXT in capital letters."""
    return text.upper()


def main() -> None:
    port, ca_file, *names = sys.argv[1:]
    authority = trustme.CA()
    authority.cert_pem.write_to_path(ca_file)
    certificate = authority.issue_cert(*names)
    with certificate.private_key_and_cert_chain_pem.tempfile() as key_and_chain:
        uvicorn.run(
            server.streamable_http_app(),
            host="127.0.0.1",
            port=int(port),
            ssl_certfile=key_and_chain,
            ssl_keyfile=key_and_chain,
            log_level="warning",
        )


if __name__ == "__main__":
    main()
