"""Prints "count percentile value" for each histogram in histograms.txt, as HdrHistogram's Python
package (pip install hdrhistogram) computes it:  python3 percentiles.py histograms.txt > python.txt"""
import sys

from hdrh.histogram import HdrHistogram

PS = [0, 25, 50, 90, 99, 99.9, 99.99, 99.999, 100]

for line in open(sys.argv[1]):
    n, enc = line.split()
    h = HdrHistogram.decode(enc)
    for p in PS:
        name = str(int(p)) if p == int(p) else repr(p)
        print(n, name, h.get_value_at_percentile(p))
