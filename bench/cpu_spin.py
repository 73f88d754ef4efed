"""A stand-in for a person's own CPU-bound work: N processes (default 2) count loop units for
SECONDS, then print the total. Run beside a build to see how much of the machine it leaves:

    python3 bench/cpu_spin.py 60 [N]
"""
import multiprocessing as mp
import sys
import time


def spin(seconds, out):
    end = time.time() + seconds
    units = 0
    while time.time() < end:
        for _ in range(10000):
            pass
        units += 1
    out.put(units)


if __name__ == "__main__":
    seconds = float(sys.argv[1])
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    out = mp.Queue()
    procs = [mp.Process(target=spin, args=(seconds, out)) for _ in range(workers)]
    for p in procs:
        p.start()
    total = sum(out.get() for _ in procs)
    for p in procs:
        p.join()
    print(f"spin: {total} units in {seconds} s ({workers} processes)")
