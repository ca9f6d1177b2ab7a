# Python with threads under the profiler: four threads build and join large byte strings
# (objects over 512 bytes come from malloc, not pymalloc). Prints a checksum.
import threading

def work(n, out, k):
    total = 0
    for i in range(n):
        total += len(bytes(1000 + i % 50)) + len("x" * (600 + i % 10))
    out[k] = total

out = [0] * 4
threads = [threading.Thread(target=work, args=(2000, out, k)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("python:", sum(out))
