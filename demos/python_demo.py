# A pure Python workload for malloc_freq (see README, Demos): a word count and a report built
# two ways, with += on a string (a new string each time) and with str.join (one string).
# Run it with PYTHONMALLOC=malloc, so that every object CPython makes is a malloc call:
#   PYTHONMALLOC=malloc malloc_freq python3 demos/python_demo.py


def count_words(text):
    counts = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    return counts


def report_concat(rows):
    out = ""
    for word, n in rows:
        out += word + ": " + str(n) + "\n"
    return out


def report_join(rows):
    return "".join([word + ": " + str(n) + "\n" for word, n in rows])


def main():
    text = " ".join("w%d" % (i * 7919 % 5003) for i in range(100000))
    rows = sorted(count_words(text).items())
    for _ in range(20):
        a = report_concat(rows)
        b = report_join(rows)
        assert a == b
    print("python_demo: %d distinct words, a report of %d bytes" % (len(rows), len(a)))


main()
