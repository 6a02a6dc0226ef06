# Sourced by the recording scripts: starts the interference of a busy shared runner (one core
# spinning, a 64 MiB memory-streaming process switching on and off at random, 0.5–4 s) and
# appends their pids to the caller's `pids` array.
start_interference() {
    (while :; do :; done) &
    pids+=($!)
    python3 -c '
import random, time
buffer = bytearray(64 << 20)
while True:
    end = time.time() + random.uniform(0.5, 4.0)
    while time.time() < end:
        buffer[:] = bytes(len(buffer))
    time.sleep(random.uniform(0.5, 4.0))
' &
    pids+=($!)
}
