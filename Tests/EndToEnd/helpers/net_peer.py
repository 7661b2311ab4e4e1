"""Real sockets for test_network.py: the targets perfhud watches and the peers they talk to.

Every role takes its settings as KEY=VALUE arguments and writes what it did (the bytes it moved,
its own TCP_INFO counters) as JSON to the file `result=`, so the test compares perfhud's figures
with what the program and the kernel say. A role that waits for the test's go waits for the file
`go=` to exist: the test makes it once perfhud has read the network once, so every byte counted
was moved after perfhud started watching.

  sink      TCP server, a peer (never the target): per connection, reads a header line
            "BACK SECONDS", then everything to EOF; from the first payload byte on, sends BACK
            bytes back, paced over SECONDS; closes once both directions are done.
  sender    TCP client, the target: `connections` connections to the sink; at the go, sends
            `tx` bytes a second in all for `seconds`, asks for `rx` a second back; shuts down,
            reads to EOF, records tcpi_total_retrans at the go and at the end; closes its sockets
            (closeat=eof) and holds `hold` s, or holds them open `hold` s, then closes (closeat=end).
  parent    Starts `sender` (the rest of its arguments) as its child and waits for it; holds no socket.
  server    TCP server, the target: accepts `connections` connections; reads `inbytes` from each,
            answers `outbytes`, closes; holds `hold` s after the last.
  client    TCP client, a peer (or the target: a client without keep-alive): at the go,
            `connections` connections one after another to the server, each sending `inbytes` and
            reading the answer to EOF; holds `hold` s after the last.
  udp       UDP sender, the target: at the go, `count` datagrams of `size` bytes to host:port,
            `rate` a second; holds `hold` s.
  udpsink   UDP receiver, a peer.
"""
import json
import os
import socket
import struct
import sys
import threading
import time

CHUNK = 16384


def settings():
    values = dict(argument.split("=", 1) for argument in sys.argv[2:])
    return values


def write_json(path, value):
    temporary = path + ".new"
    with open(temporary, "w") as handle:
        json.dump(value, handle)
    os.replace(temporary, path)


def wait_for_go(path, timeout=60):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit("no go")
        time.sleep(0.005)


def total_retrans(sock):
    # struct tcp_info: tcpi_total_retrans is the u32 at offset 100.
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return struct.unpack_from("I", info, 100)[0]


def unacked(sock):
    # tcpi_unacked: the u32 at offset 24.
    return struct.unpack_from("I", sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256), 24)[0]


def paced_send(sockets, rate, seconds):
    """Sends `rate` bytes a second in all over `sockets`, round robin, for `seconds`. - Returns: bytes sent."""
    total = int(rate * seconds)
    sent, index, began = 0, 0, time.monotonic()
    while sent < total:
        size = min(CHUNK, total - sent)
        due = began + sent / rate
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sockets[index % len(sockets)].sendall(b"x" * size)
        sent += size
        index += 1
    return sent


def sink(values):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((values.get("host", "127.0.0.1"), int(values.get("port", 0))))
    listener.listen(64)
    write_json(values["portfile"], {"port": listener.getsockname()[1]})

    def serve(connection):
        reader = connection.makefile("rb")
        back, seconds = reader.readline().split()
        back, seconds = int(back), float(seconds)
        first = reader.read1(CHUNK)
        sender = None
        if back > 0 and first:
            sender = threading.Thread(target=paced_send, args=([connection], back, seconds))
            sender.start()
        while first:
            first = reader.read1(65536)
        if sender:
            sender.join()
        connection.close()

    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


def sender(values):
    host, port = values.get("host", "127.0.0.1"), int(values["port"])
    count, seconds = int(values.get("connections", 1)), float(values["seconds"])
    tx, rx = float(values["tx"]), float(values.get("rx", 0))
    sockets = [socket.create_connection((host, port)) for _ in range(count)]
    back = int(rx / count)
    for sock in sockets:
        sock.sendall(f"{back} {seconds}\n".encode())
    # Ready only once the header is acknowledged: nothing of ours is left to be resent after the go.
    while any(unacked(sock) for sock in sockets):
        time.sleep(0.005)
    received = [0] * count

    def read(index):
        while True:
            data = sockets[index].recv(65536)
            if not data:
                return
            received[index] += len(data)

    readers = [threading.Thread(target=read, args=(index,)) for index in range(count)]
    for reader in readers:
        reader.start()
    write_json(values["result"] + ".ready", {"pid": os.getpid()})
    wait_for_go(values["go"])
    retrans_start = sum(total_retrans(sock) for sock in sockets)
    began = time.time()
    sent = paced_send(sockets, tx, seconds)
    sent_at = time.time()
    for sock in sockets:
        sock.shutdown(socket.SHUT_WR)
    for reader in readers:
        reader.join()
    # EOF from the peer: it had all our bytes and our FIN, and acknowledged them with its own FIN.
    retrans_end = sum(total_retrans(sock) for sock in sockets)
    # Closed at once (closeat=eof), or held open, shut down both ways, until the end (closeat=end).
    held = values.get("closeat", "eof") == "end"
    if not held:
        for sock in sockets:
            sock.close()
    write_json(values["result"], {"sent": sent, "received": sum(received), "back_expected": int(back * seconds) * count,
                                  "retrans_start": retrans_start, "retrans_end": retrans_end,
                                  "began": began, "sent_at": sent_at, "ended": time.time()})
    time.sleep(float(values.get("hold", 0)))
    if held:
        for sock in sockets:
            sock.close()


def parent(values):
    import subprocess
    child = subprocess.Popen([sys.executable, __file__, "sender", *sys.argv[2:]])
    sys.exit(child.wait())


def server(values):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    write_json(values["portfile"], {"port": listener.getsockname()[1]})
    inbytes, outbytes = int(values["inbytes"]), int(values["outbytes"])
    read = sent = 0
    for _ in range(int(values["connections"])):
        connection, _ = listener.accept()
        left = inbytes
        while left:
            data = connection.recv(min(left, 65536))
            if not data:
                break
            left -= len(data)
            read += len(data)
        connection.sendall(b"y" * outbytes)
        sent += outbytes
        connection.close()
    write_json(values["result"], {"received": read, "sent": sent, "ended": time.time()})
    time.sleep(float(values.get("hold", 0)))


def client(values):
    port, inbytes = int(values["port"]), int(values["inbytes"])
    wait_for_go(values["go"])
    began, answers = time.time(), 0
    for _ in range(int(values["connections"])):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"z" * inbytes)
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                answers += len(data)
    write_json(values["result"], {"began": began, "ended": time.time(), "answers": answers})
    time.sleep(float(values.get("hold", 0)))


def udp(values):
    size, count, rate = int(values["size"]), int(values["count"]), float(values["rate"])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((values.get("bind", "0.0.0.0"), 0))
    write_json(values["result"] + ".ready", {"pid": os.getpid()})
    wait_for_go(values["go"])
    destination, sent, began = (values["host"], int(values["port"])), 0, time.monotonic()
    for index in range(count):
        delay = began + index / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sent += sock.sendto(b"u" * size, destination)
    write_json(values["result"], {"sent": sent, "datagrams": count, "ended": time.time()})
    time.sleep(float(values.get("hold", 0)))


def udpsink(values):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((values.get("host", "127.0.0.1"), int(values.get("port", 0))))
    write_json(values["portfile"], {"port": sock.getsockname()[1]})
    while True:
        sock.recv(65536)


if __name__ == "__main__":
    {"sink": sink, "sender": sender, "parent": parent, "server": server, "client": client,
     "udp": udp, "udpsink": udpsink}[sys.argv[1]](settings())
