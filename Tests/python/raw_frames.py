"""RFC 6455 frames written byte by byte, including the ones no library will send: a length
field that announces more than follows (up to 2^64 − 1), RSV bits, any opcode, no mask. Used
by the hostile-input tests and the live frame fuzzer (Tests/python/frame_fuzzer.py), over a
plain socket or a TLS one (through nginx)."""

import base64
import os
import socket
import ssl
import struct

SUBPROTOCOL = "retrorapid.v1"
CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def frame(opcode, payload=b"", final=True, masked=True, length=None, rsv=0, length_form=None):
    """One frame. `length` is what the header announces (default: the payload's length), so a
    frame can promise more than it carries. `length_form` forces the 7-, 16- or 64-bit form
    (7, 16 or 64) where the length allows it; `rsv` sets the three RSV bits (0–7)."""
    announced = len(payload) if length is None else length
    header = bytes([(0x80 if final else 0) | (rsv & 7) << 4 | (opcode & 0x0F)])
    mask_bit = 0x80 if masked else 0
    form = length_form or (7 if announced < 126 else 16 if announced < 1 << 16 else 64)
    if form == 7 and announced < 126:
        header += bytes([mask_bit | announced])
    elif form == 16 and announced < 1 << 16:
        header += bytes([mask_bit | 126]) + struct.pack("!H", announced)
    else:
        header += bytes([mask_bit | 127]) + struct.pack("!Q", announced & 0xFFFF_FFFF_FFFF_FFFF)
    if not masked:
        return header + payload
    mask = os.urandom(4)
    return header + mask + bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))


def upgrade(host, port, tls_context=None, source_address=None, timeout=5.0, path="/ws"):
    """A socket past a 101 to `path` with the game subprotocol (TLS when `tls_context` is given,
    as through nginx). Raises ConnectionError when the server does not switch protocols."""
    sock = socket.create_connection((host, port), timeout=timeout,
                                    source_address=(source_address, 0) if source_address else None)
    if tls_context is not None:
        sock = tls_context.wrap_socket(sock, server_hostname=host)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {SUBPROTOCOL}\r\n\r\n")
    sock.sendall(request.encode())
    head = b""
    while b"\r\n\r\n" not in head:  # byte by byte: the first frame may follow the head at once
        byte = sock.recv(1)
        if not byte:
            sock.close()
            raise ConnectionError(f"closed during the handshake: {head!r}")
        head += byte
    if b" 101 " not in head.split(b"\r\n", 1)[0]:
        sock.close()
        raise ConnectionError(f"no upgrade: {head!r}")
    return sock


def parse_frames(data):
    """The whole frames at the start of `data`: a list of (opcode, payload). Server frames are
    never masked."""
    frames, position = [], 0
    while position + 2 <= len(data):
        second = data[position + 1]
        length, header = second & 0x7F, 2
        if length == 126:
            length, header = (struct.unpack("!H", data[position + 2:position + 4])[0], 4) if position + 4 <= len(data) else (None, 4)
        elif length == 127:
            length, header = (struct.unpack("!Q", data[position + 2:position + 10])[0], 10) if position + 10 <= len(data) else (None, 10)
        if length is None or position + header + length > len(data):
            break
        frames.append((data[position] & 0x0F, data[position + header:position + header + length]))
        position += header + length
    return frames


def read_frames(sock, timeout=5.0):
    """Every frame the server sends until its close frame, until it closes the connection, or
    until `timeout` passes: a list of (opcode, payload)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while not any(opcode == CLOSE for opcode, _ in parse_frames(data)):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionError, ssl.SSLError, OSError):
        pass
    return parse_frames(data)


def close_status(frames):
    """The status of the close frame among `frames`, or None when there is none (or it has none)."""
    for opcode, payload in frames:
        if opcode == CLOSE:
            return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
    return None
