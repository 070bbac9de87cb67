"""An HTTP server that answers exactly one request, with a 307 redirect to another path of its
own origin, and then stops listening: the request reached it (and an API could have acted on
it), while the redirect leads nowhere. Each request line it received is appended to LOG.

    redirect_once_server.py PORT LOG
"""

import socket
import sys

PORT, LOG = int(sys.argv[1]), sys.argv[2]

listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", PORT))
listener.listen(1)
# A connection that sends nothing (a test checking that the port listens) is not the request.
received = b""
while not received:
    connection, _ = listener.accept()
    connection.settimeout(5)
    try:
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
    except OSError:
        pass
    if not received:
        connection.close()
with open(LOG, "a") as log:
    log.write(received.split(b"\r\n", 1)[0].decode("latin-1") + "\n")
connection.sendall(
    b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /moved\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
)
connection.close()
listener.close()
