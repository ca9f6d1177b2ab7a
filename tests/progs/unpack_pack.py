"""A process directory's ended.pack written back out into the thread files it holds, each
linked into the snapshots below whose pack_len its record lies, those pack_lens made 0 and
the pack removed: the directory as a version 11 writer would have left it, for tests that compare the two readings.
Usage: unpack_pack.py DIR (nothing is done where DIR has no pack)."""
import glob, os, struct, sys

d = sys.argv[1]
pack = d + "/ended.pack"
if os.path.exists(pack):
    data, at, recs = open(pack, "rb").read(), 0, []
    while at < len(data):
        hl, nl = struct.unpack_from("<QQ", data, at + 24)
        name = data[at + 48:at + 96].rstrip(b"\0").decode()
        body = data[at + 96:at + 96 + hl + nl]
        open(d + "/" + name, "wb").write(body[:hl] + bytes(12288 - hl) + body[hl:])
        recs.append((at, name))
        at += 96 + hl + nl
    for s in glob.glob(d + "/snap.*"):
        rec = bytearray(open(s + "/snapshot", "rb").read())
        below = struct.unpack_from("<Q", rec, 128)[0]
        for at, name in recs:
            if at < below:
                os.link(d + "/" + name, s + "/" + name)
        struct.pack_into("<Q", rec, 128, 0)
        open(s + "/snapshot", "wb").write(rec)
    os.remove(pack)
