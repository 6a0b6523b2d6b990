#!/usr/bin/env python3
# mesh_stranger.py - another local user who tries to join a job's pmixd
# daemons (mesh_auth.sh runs it under a throwaway uid).
#
#   mesh_stranger.py PORT...
#
# Five tries at every port, each a new connection with plausible frames
# (tcplink.h framing: u32 length, u8 type, payload): a PD_PEER as node 1
# without a nonce, a PD_PEER with a nonce and a made-up proof, a PD_HELLO,
# a frame of 1 MiB announced before authentication, and silence. Prints one
# line per try, "try T port P: got N bytes, closed after S s" plus
# "HEX <the bytes received>" so that the caller can look for job data.
import os
import socket
import struct
import sys
import threading
import time

PD_HELLO, PD_PEER, PD_AUTH_PROOF = 1, 20, 27


def frame(ftype, payload):
    return struct.pack("<IB", len(payload) + 1, ftype) + payload


def bstr(b):
    return struct.pack("<I", len(b)) + b


def attempt(port, t, hold):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    if t == 1:
        s.sendall(frame(PD_PEER, struct.pack("<I", 1)))
    elif t == 2:
        s.sendall(frame(PD_PEER, struct.pack("<I", 1) + bstr(os.urandom(16))))
        s.sendall(frame(PD_AUTH_PROOF, bstr(os.urandom(32))))
    elif t == 3:
        s.sendall(frame(PD_HELLO, struct.pack("<II", 1, 4242)))
    elif t == 4:
        s.sendall(struct.pack("<IB", 1 << 20, PD_PEER) + b"\0" * 4096)
    got = b""
    start = time.monotonic()
    closed = None
    s.settimeout(0.2)
    while time.monotonic() - start < hold:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            d = b""
        if not d:
            closed = time.monotonic() - start
            break
        got += d
    s.close()
    return got, closed


def tries(port, lines):
    for t in range(1, 6):
        # the silent try waits for the daemon's deadline for strangers
        try:
            got, closed = attempt(port, t, 9.0 if t == 5 else 1.5)
        except OSError as e:
            lines.append("try %d port %d: cannot connect: %s" % (t, port, e))
            continue
        lines.append("try %d port %d: got %d bytes, closed after %s s" %
                     (t, port, len(got), "%.1f" % closed if closed is not None else "never"))
        lines.append("HEX " + got.hex())


def main():
    # every port at once, so that all tries fall in the daemons' start
    out = {}
    threads = []
    for p in sys.argv[1:]:
        out[p] = []
        threads.append(threading.Thread(target=tries, args=(int(p), out[p])))
        threads[-1].start()
    for th in threads:
        th.join()
    for p in sys.argv[1:]:
        print("\n".join(out[p]))


main()
