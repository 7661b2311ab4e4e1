"""A terminal program for perfhud's frame tests: draws synchronized updates (CSI ? 2026 h … l).

  tty_frames.py frames INTERVAL_MS COUNT LONG_EVERY LONG_MS
      COUNT frames INTERVAL_MS apart; every LONG_EVERY-th frame comes LONG_MS after the one before.
  tty_frames.py keys DELAY_MS
      answers each key with one frame, DELAY_MS after the key, until 'q'.
  tty_frames.py query
      asks the terminal whether it supports synchronized output and prints the reply.
"""
import os
import select
import sys
import termios
import time
import tty

BEGIN, END = b"\x1b[?2026h", b"\x1b[?2026l"


def frame(text):
    os.write(1, BEGIN + b"\r\x1b[2K" + text.encode() + END)


def frames(interval, count, long_every, long_ms):
    next_at = time.monotonic()
    for index in range(1, count + 1):
        next_at += (long_ms if index % long_every == 0 else interval) / 1000
        time.sleep(max(0, next_at - time.monotonic()))
        frame(f"frame {index}")


def keys(delay):
    if os.isatty(0):
        tty.setraw(0)
    frame("ready")
    while True:
        key = os.read(0, 1)
        if not key or key == b"q":
            return
        time.sleep(delay / 1000)
        frame(f"key {key!r}")


def query():
    saved = termios.tcgetattr(0)
    tty.setraw(0)
    try:
        os.write(1, b"\x1b[?2026$p")
        reply = b""
        while select.select([0], [], [], 2)[0]:
            reply += os.read(0, 64)
            if reply.endswith(b"y"):
                break
    finally:
        termios.tcsetattr(0, termios.TCSADRAIN, saved)
    print("reply:", reply.replace(b"\x1b", b"ESC").decode(), flush=True)
    time.sleep(1)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "frames":
        frames(*(int(value) for value in sys.argv[2:6]))
    elif mode == "keys":
        keys(int(sys.argv[2]))
    else:
        query()
