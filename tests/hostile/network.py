# Tries to reach a server on the grading machine, and the outside world.
import socket

for address in [("127.0.0.1", __PORT__), ("1.1.1.1", 53)]:
    try:
        connection = socket.create_connection(address, timeout=2)
        connection.sendall(b"stolen")
        print("LEAK: connected to", address)
    except OSError as error:
        print("blocked:", type(error).__name__, error.errno)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))
    print("LEAK: sent UDP")
except OSError as error:
    print("blocked:", type(error).__name__, error.errno)
